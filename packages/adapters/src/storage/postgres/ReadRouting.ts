/**
 * Reads on a streaming replica (`TENDER_READ_DATABASE_URL`, docs/decisions.md "Reads on a replica").
 *
 * The repositories keep their one `PgClient`; with a replica configured it is the router `make`
 * builds: a statement goes to the replica only when no transaction is open on its fiber and the
 * fiber asked for the replica (`ReadSource`, set by `preferReplica` around a read-only endpoint's
 * use case). Everything else — writes, the reads a write makes under its lock, key and idempotency
 * lookups, replay checks, workers, migrations — reads the primary, because that is the default.
 *
 * Read-your-writes: a replica lags its primary, so a merchant's read just after its write may not
 * find the row yet. `preferReplica` re-runs such a read on the primary when it ends in a not-found
 * (and when the replica fails), so a read of one's own write never 404s. What may still be stale, by
 * at most the replica's lag: a found row's status, and what a search or list contains.
 */
import { PgClient } from "@effect/sql-pg"
import { Cause, Context, Effect, Option } from "effect"
import type { Acquirer } from "effect/sql/SqlConnection"
import * as Statement from "effect/sql/Statement"

/** A read asked of the replica; `usedReplica` is set once one of its statements went there. */
export interface ReplicaRead {
  usedReplica: boolean
}

/**
 * Where the statements of a fiber outside a transaction read: the replica when a `ReplicaRead` is
 * provided (by `preferReplica`), else the primary.
 */
export const ReadSource = Context.Reference<ReplicaRead | undefined>("@tender/adapters/ReadSource", { defaultValue: () => undefined })

/**
 * Runs a read-only `effect` against the replica; re-runs it on the primary when it reached the
 * replica and then failed with an error `missing` recognises (the replica may not have the write
 * yet) or died (the replica failed: a connection lost, a query cancelled by recovery). Only for
 * effects that write nothing outside a transaction, so that a second run is harmless. Without a
 * replica nothing reaches one, and a not-found is answered at once.
 */
export const preferReplica = <A, E, R>(effect: Effect.Effect<A, E, R>, missing: (error: E) => boolean): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const read: ReplicaRead = { usedReplica: false }
    return Effect.catchCause(Effect.provideService(effect, ReadSource, read), (cause) => {
      if (!read.usedReplica || Cause.hasInterrupts(cause)) return Effect.failCause(cause)
      const error = Cause.findErrorOption(cause)
      if (Option.isSome(error) && missing(error.value)) return effect
      if (Cause.hasDies(cause)) return Effect.andThen(Effect.logWarning(`a read on the replica failed; reading the primary: ${Cause.pretty(cause).split("\n")[0]}`), effect)
      return Effect.failCause(cause)
    })
  })

/** How long reads go to the primary after the replica refused a connection. */
const UNREACHABLE_PAUSE_MS = 5_000

const SPAN_ATTRIBUTES: ReadonlyArray<readonly [string, unknown]> = [["db.system.name", "postgresql"]]

/**
 * The primary's client with its statements routed: inside one of its transactions on that
 * transaction's connection; else on the replica when the fiber's `ReadSource` says so (but on the
 * primary for a few seconds after the replica refused a connection); else on the primary.
 * Transactions, `reserve`, LISTEN/NOTIFY are the primary's own.
 */
export const router = (primary: PgClient.PgClient, replica: PgClient.PgClient): PgClient.PgClient => {
  // After a failed connect the replica is left alone for a while: reads do not each wait on it, nor log.
  let unreachableUntil = 0
  const connection: Acquirer = Effect.flatMap(
    Effect.serviceOption(primary.transactionService),
    Option.match({
      onSome: ([conn]) => Effect.succeed(conn),
      onNone: () =>
        Effect.flatMap(ReadSource, (read) => {
          if (read === undefined) return primary.reserve
          if (Date.now() < unreachableUntil) return primary.reserve
          read.usedReplica = true
          return Effect.catch(replica.reserve, (error) => {
            unreachableUntil = Date.now() + UNREACHABLE_PAUSE_MS
            return Effect.andThen(
              Effect.logWarning(`the read replica is unreachable (${error.message}); reading the primary for ${UNREACHABLE_PAUSE_MS / 1000} s`),
              primary.reserve
            )
          })
        })
    })
  )
  // The primary's own client cannot lend its connections to a statement of another constructor, so
  // each routed statement leases one for its run (a scope per statement, only with a replica).
  const statements = Statement.make(connection, PgClient.makeCompiler(primary.config.transformQueryNames, primary.config.transformJson), SPAN_ATTRIBUTES, undefined)
  const client = Object.assign(statements, { ...primary, ...statements }) as unknown as PgClient.PgClient
  Object.assign(client, { safe: client, withoutTransforms: () => client })
  return client
}
