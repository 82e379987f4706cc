/**
 * The replay cache in PostgreSQL (table `replay_signatures`, migration 0019), for deployments
 * without Redis: every process on the database shares it. A claim is an insert, or a take-over of a
 * row whose entry has expired, so the primary key decides which of two racing requests wins.
 *
 * Claims are group-committed: a write claims its request's signature and then its response's, each
 * an autocommitted statement with its own WAL flush, and under load those were a third of a
 * charge's statements. Claims arriving while a claim statement is in flight wait for it and go
 * together in the next one (one row each, one statement, one commit); an idle server sends each at
 * once, as before. A claim still completes only once its row is committed, so what a claim proves
 * (this payload was not held; it is held now, durably, before the request proceeds or the response
 * leaves) is unchanged. Within a batch, rows go in key order, so two processes' batches that
 * share keys lock them in the same order and cannot deadlock; a key claimed twice in one batch is
 * inserted once and its later claims lose to the first, as they would one statement later.
 *
 * An expired row is no entry (every read and take-over checks `expires_at`); the retention worker
 * removes them in batches, through the expiry index (PruningPg.ts).
 */
import { PgClient } from "@effect/sql-pg"
import { Deferred, Effect, Exit, Layer, Option } from "effect"
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

interface Claim {
  readonly account: string
  readonly digest: string
  readonly entry: ReplayEntry
  readonly expiresAt: number
  readonly result: Deferred.Deferred<Option.Option<ReplayEntry>>
}

/** Most claims one statement carries (its JSON parameter stays small). */
const MAX_BATCH = 256
/** Claim statements in flight at once per process: one can be committing while the next fills. */
const WRITERS = 2

const keyOf = (account: string, digest: string) => `${account}\u0000${digest}`

export const layer: Layer.Layer<ReplayCache, never, PgClient.PgClient | SqlClient.SqlClient> = Layer.effect(
  ReplayCache,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    // A claim stands on its own: it must not wait for, or roll back with, a caller's transaction.
    const outside = outsideUnitOfWork(yield* SqlClient.SqlClient)
    const run = <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(Effect.orDie, outside)

    const find = (account: string, digest: string) =>
      run(sql<Row>`
        SELECT kind, request_id FROM replay_signatures
        WHERE account_id = ${account} AND digest = ${digest} AND expires_at > now()`).pipe(Effect.map(entryOf))

    /** One statement for a batch: the keys it recorded (the others were held by an unexpired entry). */
    const insertAll = (claims: ReadonlyArray<Claim>) =>
      run(sql<{ readonly account_id: string; readonly digest: string }>`
        INSERT INTO replay_signatures (account_id, digest, kind, request_id, expires_at)
        SELECT c.account_id, c.digest, c.kind, c.request_id, to_timestamp(c.expires_at)
        FROM jsonb_to_recordset(${
        sql.json(claims.map((c) => ({
          account_id: c.account,
          digest: c.digest,
          kind: c.entry.kind,
          request_id: c.entry.requestId,
          expires_at: c.expiresAt
        })))
      }) AS c(account_id text, digest text, kind text, request_id text, expires_at double precision)
        ORDER BY c.account_id, c.digest
        ON CONFLICT (account_id, digest) DO UPDATE
          SET kind = EXCLUDED.kind, request_id = EXCLUDED.request_id, expires_at = EXCLUDED.expires_at
          WHERE replay_signatures.expires_at <= now()
        RETURNING account_id, digest`).pipe(Effect.map((rows) => new Set(rows.map((r) => keyOf(r.account_id, r.digest)))))

    const settle = Effect.fnUntraced(function*(batch: ReadonlyArray<Claim>) {
      // The first claim of each key goes in the statement; repeats of it in this batch lose to it.
      const first = new Map<string, Claim>()
      for (const claim of batch) {
        const key = keyOf(claim.account, claim.digest)
        if (!first.has(key)) first.set(key, claim)
      }
      const recorded = yield* insertAll([...first.values()])
      for (const claim of batch) {
        const key = keyOf(claim.account, claim.digest)
        const winner = first.get(key)!
        if (recorded.has(key)) {
          yield* Deferred.succeed(claim.result, winner === claim ? Option.none() : Option.some(winner.entry))
        } else {
          // Held already (a replay, or a race another process won): report the entry that holds it.
          yield* Deferred.succeed(claim.result, yield* find(claim.account, claim.digest))
        }
      }
    })

    // Claims waiting for a statement, and how many writers are draining them. A writer is started
    // by a claim that finds fewer than WRITERS at work and stops when nothing waits, so nothing runs
    // while the server is idle and nothing outlives a claim's need of it.
    let waiting: Array<Claim> = []
    let writers = 0
    const drain: Effect.Effect<void> = Effect.suspend(() => {
      // Stopping is decided in the same synchronous step as the check, so a claim queued after it
      // finds a free writer's slot and starts one.
      if (waiting.length === 0) {
        writers--
        return Effect.void
      }
      const batch = waiting.slice(0, MAX_BATCH)
      waiting = waiting.slice(batch.length)
      return settle(batch).pipe(
        // A failed statement fails every claim it carried (a defect, as one claim's was); the writer goes on.
        Effect.catchCause((cause) =>
          Effect.forEach(batch, (claim) => Deferred.done(claim.result, Exit.failCause(cause)), { discard: true })
        ),
        Effect.andThen(drain)
      )
    })
    const startWriter = Effect.suspend(() => {
      if (writers >= WRITERS) return Effect.void
      writers++
      return Effect.asVoid(Effect.forkDetach(drain))
    })

    return ReplayCache.of({
      claim: (account, digest, entry, expiresAt) =>
        Effect.gen(function*() {
          const result = yield* Deferred.make<Option.Option<ReplayEntry>>()
          waiting.push({ account, digest, entry, expiresAt, result })
          yield* startWriter
          return yield* Deferred.await(result)
        }),
      find
    })
  })
)
