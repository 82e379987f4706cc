/**
 * The replay cache in PostgreSQL (table `replay_signatures`, migration 0019), for deployments
 * without Redis: every process on the database shares it. A claim is one statement — insert, or
 * take over a row whose entry has expired — so the primary key decides which of two racing
 * requests wins. Expired rows are swept at most once a minute per process, through the expiry index.
 */
import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { outsideUnitOfWork } from "../storage/postgres/UnitOfWorkPg.ts"
import { ReplayCache, type ReplayEntry } from "./ReplayCache.ts"

interface Row {
  readonly kind: string
  readonly request_id: string
}

const entryOf = (rows: ReadonlyArray<Row>): Option.Option<ReplayEntry> =>
  Option.map(Option.fromNullishOr(rows[0]), (row) => ({
    kind: row.kind === "response" ? "response" : "request",
    requestId: row.request_id
  }))

/** The cache, sweeping expired rows at most once per `sweepEveryMs` (tests sweep at every claim). */
export const layerWith = (
  { sweepEveryMs }: { readonly sweepEveryMs: number }
): Layer.Layer<ReplayCache, never, PgClient.PgClient | SqlClient.SqlClient> => Layer.effect(
  ReplayCache,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    // A claim stands on its own: it must not wait for, or roll back with, a caller's transaction.
    const outside = outsideUnitOfWork(yield* SqlClient.SqlClient)
    const run = <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(Effect.orDie, outside)
    let nextSweep = 0

    const sweep = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (now < nextSweep) return
      nextSweep = now + sweepEveryMs
      yield* run(sql`DELETE FROM replay_signatures WHERE expires_at < now()`)
    })

    const find = (account: string, digest: string) =>
      run(sql<Row>`
        SELECT kind, request_id FROM replay_signatures
        WHERE account_id = ${account} AND digest = ${digest} AND expires_at > now()`).pipe(Effect.map(entryOf))

    return ReplayCache.of({
      claim: (account, digest, entry, expiresAt) =>
        Effect.gen(function*() {
          yield* sweep
          const claimed = yield* run(sql<Row>`
            INSERT INTO replay_signatures (account_id, digest, kind, request_id, expires_at)
            VALUES (${account}, ${digest}, ${entry.kind}, ${entry.requestId}, to_timestamp(${expiresAt}))
            ON CONFLICT (account_id, digest) DO UPDATE
              SET kind = EXCLUDED.kind, request_id = EXCLUDED.request_id, expires_at = EXCLUDED.expires_at
              WHERE replay_signatures.expires_at <= now()
            RETURNING kind`)
          return claimed.length > 0 ? Option.none() : yield* find(account, digest)
        }),
      find
    })
  })
)

export const layer = layerWith({ sweepEveryMs: 60_000 })
