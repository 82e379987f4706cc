/** Client secrets in PostgreSQL (table `client_secrets`, migrations 0012, 0015 and 0016), keyed by the secret's hash. */
import { PgClient } from "@effect/sql-pg"
import { ClientSecretRecord, ClientSecretRepo } from "@tender/domain"
import { Effect, Layer, Schema } from "effect"
import { type SqlClient, SqlSchema } from "effect/sql"
import { Timestamp } from "./Columns.ts"

const Row = Schema.Struct({
  ...ClientSecretRecord.fields,
  created_at: Timestamp,
  expires_at: Timestamp,
  used_at: Schema.NullOr(Timestamp)
})

/**
 * Whether a card transfer's secret of the account recorded the token, as an SQL condition: what
 * `mintedForTransfer` answers, and what the vault reads with a card (CardVaultPg). Asked by every
 * payment that names a card_token: index client_secrets_transfer_token (0016).
 */
export const collectedForTransfer = (sql: SqlClient.SqlClient, accountId: string, token: string) =>
  sql`EXISTS (SELECT 1 FROM client_secrets WHERE card_token = ${token} AND kind = 'transfer' AND account_id = ${accountId})`

export const layer: Layer.Layer<ClientSecretRepo, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  ClientSecretRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const encode = Schema.encodeEffect(Row)
    const columns = sql`hash, account_id, order_id, kind, collect, created_at, expires_at, expired_by_helper, used_at,
                        card_token, token_mints`
    const find = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Row,
      execute: (hash) => sql`SELECT ${columns} FROM client_secrets WHERE hash = ${hash}`
    })
    const findTransferSecret = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Row,
      execute: (orderId) => sql`SELECT ${columns} FROM client_secrets WHERE order_id = ${orderId} AND kind = 'transfer' LIMIT 1`
    })
    return ClientSecretRepo.of({
      insert: (record) =>
        Effect.flatMap(encode(record), (row) => sql`INSERT INTO client_secrets ${sql.insert(row)}`)
          .pipe(Effect.orDie, Effect.withSpan("ClientSecretRepoPg.insert")),
      find: (hash) => find(hash).pipe(Effect.orDie),
      expire: (hash, at) =>
        sql`UPDATE client_secrets SET expires_at = LEAST(expires_at, ${at}::timestamptz), expired_by_helper = true
            WHERE hash = ${hash}`.pipe(Effect.asVoid, Effect.orDie),
      markUsed: (hash, at) =>
        sql`UPDATE client_secrets SET used_at = COALESCE(used_at, ${at}::timestamptz) WHERE hash = ${hash}`
          .pipe(Effect.asVoid, Effect.orDie),
      // One statement: two concurrent calls at the cap cannot both pass it.
      claimMint: (hash, max) =>
        sql`UPDATE client_secrets SET token_mints = token_mints + 1
            WHERE hash = ${hash} AND token_mints < ${max} RETURNING hash`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        ),
      recordToken: (hash, token) =>
        sql`UPDATE client_secrets SET card_token = ${token} WHERE hash = ${hash}`.pipe(Effect.asVoid, Effect.orDie),
      findTransferSecret: (orderId) => findTransferSecret(orderId).pipe(Effect.orDie),
      mintedForTransfer: (accountId, token) =>
        sql<{ readonly collected: boolean }>`SELECT ${collectedForTransfer(sql, accountId, token)} AS collected`.pipe(
          Effect.map((rows) => rows[0]?.collected === true),
          Effect.orDie
        )
    })
  })
)
