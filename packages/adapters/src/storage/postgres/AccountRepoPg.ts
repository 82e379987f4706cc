/**
 * Accounts in PostgreSQL. Secret keys are rows of `account_secret_keys` (the hash is the primary
 * key, so authenticating is an index lookup) and come back aggregated into the account's row.
 */
import { PgClient } from "@effect/sql-pg"
import { Account, type AccountId, AccountRepo } from "@tender/domain"
import { Effect, Layer, Schema } from "effect"
import { type SqlClient, SqlSchema, type Statement } from "effect/sql"
import { staleWrite } from "../Conflicts.ts"
import { jsonb, Timestamp } from "./Columns.ts"
import { transactionOrJoin } from "./UnitOfWorkPg.ts"

const AccountRow = Schema.Struct({
  ...Account.Account.fields,
  created_at: Timestamp,
  updated_at: Timestamp,
  previous_signing_secret_expires_at: Schema.NullOr(Timestamp),
  secret_keys: Schema.Array(Schema.Struct({
    ...Account.SecretKey.fields,
    created_at: Timestamp,
    revoked_at: Schema.NullOr(Timestamp),
    expires_at: Schema.optional(Schema.NullOr(Timestamp))
  }))
})

export const layer: Layer.Layer<AccountRepo, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  AccountRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const inTransaction = transactionOrJoin(sql)

    const select = sql`
      SELECT a.id, a.name, a.mode, a.status, a.publishable_key, a.signing_secret, a.ip_allowlist,
        a.processing_profiles, a.vault_enabled, a.rate_limit, a.payout_limits, a.three_ds_display_mode, a.created_at, a.updated_at, a.version,
        a.previous_signing_secret, a.previous_signing_secret_expires_at,
        COALESCE((
          SELECT jsonb_agg(jsonb_build_object(
            'hash', k.hash, 'hint', k.hint, 'created_at', k.created_at, 'revoked_at', k.revoked_at
          -- Only a temporary key has an end: the merchant's keys read back as they were written.
          ) || CASE WHEN k.expires_at IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('expires_at', k.expires_at) END
          ORDER BY k.position)
          FROM account_secret_keys k WHERE k.account_id = a.id
        ), '[]'::jsonb) AS secret_keys
      FROM accounts a`

    const findOne = (where: (key: string) => Statement.Fragment) =>
      SqlSchema.findOneOption({ Request: Schema.String, Result: AccountRow, execute: (key) => sql`${select} WHERE ${where(key)}` })

    const byId = findOne((id) => sql`a.id = ${id}`)
    const bySecretKeyHash = findOne((hash) => sql`a.id = (SELECT account_id FROM account_secret_keys WHERE hash = ${hash})`)
    const byPublishableKey = findOne((key) => sql`a.publishable_key = ${key}`)
    const all = SqlSchema.findAll({
      Request: Schema.Void,
      Result: AccountRow,
      execute: () => sql`${select} ORDER BY a.created_at, a.id`
    })

    const json = jsonb(sql)

    /** Upserts every key in one statement and drops keys the account no longer lists. */
    const writeKeys = Effect.fnUntraced(function*(account: Account.Account) {
      const keys = account.secret_keys.map((key, position) => ({ ...key, expires_at: key.expires_at ?? null, position }))
      const written = yield* sql`
        INSERT INTO account_secret_keys (hash, account_id, position, hint, created_at, revoked_at, expires_at)
        SELECT k.hash, ${account.id}, k.position, k.hint, k.created_at, k.revoked_at, k.expires_at
        FROM jsonb_to_recordset(${sql.json(keys)})
          AS k(hash text, position integer, hint text, created_at timestamptz, revoked_at timestamptz, expires_at timestamptz)
        ON CONFLICT (hash) DO UPDATE
          SET position = EXCLUDED.position, hint = EXCLUDED.hint, revoked_at = EXCLUDED.revoked_at, expires_at = EXCLUDED.expires_at
          WHERE account_secret_keys.account_id = EXCLUDED.account_id
        RETURNING hash`
      // A hash held by another account is skipped by the WHERE above; keys are random, so it is a bug.
      if (written.length !== keys.length) return yield* Effect.die(new Error("AccountRepoPg: secret key hash held by another account"))
      yield* sql`
        DELETE FROM account_secret_keys
        WHERE account_id = ${account.id} AND NOT (hash = ANY(${keys.map((key) => key.hash)}))`
    })

    return AccountRepo.of({
      insert: (account) =>
        inTransaction(Effect.gen(function*() {
          yield* sql`
            INSERT INTO accounts (id, name, mode, status, publishable_key, signing_secret, ip_allowlist,
              processing_profiles, vault_enabled, rate_limit, payout_limits, three_ds_display_mode, created_at, updated_at, version,
              previous_signing_secret, previous_signing_secret_expires_at)
            VALUES (${account.id}, ${account.name}, ${account.mode}, ${account.status}, ${account.publishable_key},
              ${account.signing_secret}, ${sql.json(account.ip_allowlist)}, ${sql.json(account.processing_profiles)},
              ${account.vault_enabled}, ${json(account.rate_limit)}, ${sql.json(account.payout_limits ?? [])}, ${account.three_ds_display_mode},
              ${account.created_at}, ${account.updated_at},
              ${account.version}, ${account.previous_signing_secret ?? null}, ${account.previous_signing_secret_expires_at ?? null})`
          yield* writeKeys(account)
        })).pipe(Effect.orDie, Effect.withSpan("AccountRepoPg.insert")),
      findById: (id: AccountId) => byId(id).pipe(Effect.orDie),
      findBySecretKeyHash: (hash) => bySecretKeyHash(hash).pipe(Effect.orDie),
      findByPublishableKey: (key) => byPublishableKey(key).pipe(Effect.orDie),
      update: (next) =>
        inTransaction(Effect.gen(function*() {
          const expected = next.version - 1
          const updated = yield* sql`
            UPDATE accounts SET name = ${next.name}, mode = ${next.mode}, status = ${next.status},
              publishable_key = ${next.publishable_key}, signing_secret = ${next.signing_secret},
              ip_allowlist = ${sql.json(next.ip_allowlist)}, processing_profiles = ${sql.json(next.processing_profiles)},
              vault_enabled = ${next.vault_enabled}, rate_limit = ${json(next.rate_limit)},
              payout_limits = ${sql.json(next.payout_limits ?? [])},
              three_ds_display_mode = ${next.three_ds_display_mode},
              previous_signing_secret = ${next.previous_signing_secret ?? null},
              previous_signing_secret_expires_at = ${next.previous_signing_secret_expires_at ?? null},
              updated_at = ${next.updated_at}, version = ${next.version}
            WHERE id = ${next.id} AND version = ${expected}
            RETURNING id`
          if (updated.length === 0) return yield* staleWrite("Account", next.id, expected)
          yield* writeKeys(next)
        })).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("AccountRepoPg.update")),
      list: () => all(undefined).pipe(Effect.orDie)
    })
  })
)
