/**
 * Routing rules in PostgreSQL (RoutingRulesRepo, table `routing_rules`, migration 0049).
 *
 * `current` is read on every payment, so it is answered from a notified cache (NotifiedCache.ts,
 * as the accounts' channels are in ListCachesPg): per account, the current version of each of its
 * profiles, loaded in one statement. 0049's trigger NOTIFYs `tender_routing_rules_changed` with the
 * account's id when a version commits, whichever process wrote it (`tender accounts routing set`
 * runs in the CLI's), and every server forgets that account's rules within milliseconds. A put
 * through this process forgets them at once.
 *
 * A put takes the next version in one statement (the highest + 1). Two concurrent puts of one
 * (account, profile) may compute the same one: the primary key refuses the second, which tries
 * again (in a savepoint when a transaction is open), so both are stored, under distinct versions.
 */
import { PgClient } from "@effect/sql-pg"
import type { RuleSet, StoredRules } from "@tender/domain/channels/RoutingModel"
import { RoutingRulesRepo } from "@tender/domain/channels/RoutingPorts"
import { Effect, Layer, Option, Schema } from "effect"
import { SqlError } from "effect/sql/SqlError"
import { SqlSchema } from "effect/sql"
import { Timestamp } from "./Columns.ts"
import * as NotifiedCache from "./NotifiedCache.ts"

export const CHANNEL = "tender_routing_rules_changed"

/** Accounts' rules held; read again after 30 s whatever was heard (as the channels' lists). */
export const DEFAULT_OPTIONS: NotifiedCache.CacheOptions = { capacity: 10_000, maxAgeMs: 30_000 }

/** Attempts of a put that lost the race for a version to a concurrent one. */
const PUT_ATTEMPTS = 10

const Row = Schema.Struct({
  account_id: Schema.String,
  profile: Schema.String,
  version: Schema.Int,
  // Written by this repository from a parsed RuleSet (RoutingRules.parseRules): stored as it was checked.
  rules: Schema.Unknown,
  document: Schema.Unknown,
  created_at: Timestamp
})

const fromRow = (row: typeof Row.Type): StoredRules => ({
  account_id: row.account_id,
  profile: row.profile === "" ? null : row.profile,
  version: row.version,
  rules: row.rules as RuleSet,
  document: row.document,
  created_at: row.created_at
})

const isUniqueViolation = (error: unknown) => error instanceof SqlError && error.reason._tag === "UniqueViolation"

export const layerWith = (
  options: NotifiedCache.CacheOptions
): Layer.Layer<RoutingRulesRepo, never, PgClient.PgClient | NotifiedCache.Listener> =>
  Layer.effect(
    RoutingRulesRepo,
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const cache = yield* NotifiedCache.make<string, ReadonlyArray<StoredRules>>({ ...options, channel: CHANNEL, keyOf: (accountId) => accountId })

      /** The current version of each of the account's profiles ('' included). */
      const currentOfAccount = SqlSchema.findAll({
        Request: Schema.String,
        Result: Row,
        execute: (accountId) =>
          sql`SELECT DISTINCT ON (profile) account_id, profile, version, rules, document, created_at
              FROM routing_rules WHERE account_id = ${accountId} ORDER BY profile, version DESC`
      })

      const insertNext = (input: Parameters<RoutingRulesRepo["Service"]["put"]>[0]) =>
        sql<{ version: number }>`
          INSERT INTO routing_rules (account_id, profile, version, rules, document, created_at)
          SELECT ${input.account_id}, ${input.profile ?? ""}, coalesce(max(version), 0) + 1, ${sql.json(input.rules)},
            ${sql.json(input.document)}, ${input.created_at}
          FROM routing_rules WHERE account_id = ${input.account_id} AND profile = ${input.profile ?? ""}
          RETURNING version`

      return RoutingRulesRepo.of({
        put: (input) =>
          cache.change(
            input.account_id,
            // withTransaction: a savepoint inside an open transaction, so a lost race leaves it usable.
            sql.withTransaction(insertNext(input)).pipe(
              Effect.retry({ times: PUT_ATTEMPTS - 1, while: isUniqueViolation }),
              Effect.map(([row]): StoredRules => ({ ...input, version: row!.version })),
              Effect.orDie
            )
          ),
        current: (accountId, profile) =>
          Effect.map(
            cache.read(accountId, Effect.map(currentOfAccount(accountId), (rows) => rows.map(fromRow))).pipe(Effect.orDie),
            (rules) => Option.fromNullishOr(rules.find((r) => r.profile === profile))
          )
      })
    })
  )

export const layer = layerWith(DEFAULT_OPTIONS)
