/**
 * Reads on a streaming replica (`TENDER_READ_DATABASE_URL`, docs/decisions.md "Reads on a replica").
 *
 * The repositories keep their one `PgClient`; with a replica configured it is the one `router`
 * builds: a statement goes to the replica only when no transaction is open on its fiber and the
 * fiber asked for the replica (`ReadSource`, set by `preferReplica` around a read-only endpoint's
 * use case). Everything else — writes, the reads a write makes under its lock, key and idempotency
 * lookups, replay checks, workers, migrations — reads the primary, because that is the default.
 *
 * Read-your-writes: a replica lags its primary, so a merchant's read just after its write may not
 * find the row yet. `preferReplica` re-runs such a read on the primary when it ends in a not-found
 * (and when the replica fails), so a read of one's own write never 404s. What may still be stale: a
 * found row's status, and what a search or list contains, by at most the replica's lag, which the
 * router bounds (`TENDER_READ_MAX_LAG_MS`: a replica further behind is not read at all).
 */
import { PgClient } from "@effect/sql-pg"
import { Cause, Context, Effect, Option, Schedule, type Scope } from "effect"
import type { Acquirer, Borrower, Connection } from "effect/sql/SqlConnection"
import { SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"

/** A read asked of the replica; `usedReplica` is set once one of its statements went there. */
export interface ReplicaRead {
  usedReplica: boolean
  /**
   * Where the read's statements go, decided by its first one and kept: one request reads one
   * server, so it never pairs a row from the primary with a missing one of a replica behind it.
   */
  source?: "primary" | "replica"
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
/** How often the replica's lag is measured. */
const LAG_POLL_MS = 200
/** Primary positions kept while the replica has not replayed them (a replica stuck for long keeps only the newest). */
const MAX_SAMPLES = 1_000

/** `TENDER_READ_MAX_LAG_MS` unset: a replica further behind than this is not read. */
export const DEFAULT_MAX_LAG_MS = 5_000

const SPAN_ATTRIBUTES: ReadonlyArray<readonly [string, unknown]> = [["db.system.name", "postgresql"]]

const isConnectionError = (error: unknown): error is SqlError => error instanceof SqlError && error.reason._tag === "ConnectionError"

/**
 * How a client lends a connection to one statement: its pool's own `use`, with no scope per
 * statement (measured: a scoped lease per statement cost 25–40 µs, about as much as a `SELECT 1`).
 * effect builds it into the client's statements and exposes it nowhere else, so it is read from a
 * statement the client builds; should a later effect drop that field, a lease into a scope of its
 * own does the same, slower.
 */
const borrowerOf = (client: PgClient.PgClient): Borrower =>
  (client`SELECT 1` as unknown as { readonly borrower?: Borrower | undefined }).borrower ??
    ((f) => Effect.scoped(Effect.flatMap(client.reserve, f)))

/** A WAL position (`16/B374D848`) as a number that orders like it. */
const lsnOf = (text: string): bigint => {
  const [high, low] = text.split("/")
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`)
}

/**
 * The replica's lag, measured in time without trusting either clock of the servers: every poll
 * records where the primary's WAL was (pg_current_wal_lsn) at that moment, then asks how far the
 * replica has replayed (pg_last_wal_replay_lsn). The replica holds everything the primary had
 * written at the newest recorded moment whose position it has passed; the lag is the time since
 * then (0 when it has passed the newest).
 */
export const lagMeter = () => {
  let samples: Array<{ readonly at: number; readonly lsn: bigint }> = []
  let caughtUpAt = 0
  return {
    record: (at: number, primaryLsn: string, replayLsn: string | null): number => {
      samples.push({ at, lsn: lsnOf(primaryLsn) })
      if (samples.length > MAX_SAMPLES) samples = samples.slice(-MAX_SAMPLES)
      // Not in recovery (the URL names a primary): it is as current as a server can be.
      const replayed = replayLsn === null ? samples[samples.length - 1].lsn : lsnOf(replayLsn)
      const passed = samples.findLastIndex((sample) => sample.lsn <= replayed)
      if (passed >= 0) {
        caughtUpAt = samples[passed].at
        samples = samples.slice(passed + 1)
      }
      return samples.length === 0 ? 0 : at - caughtUpAt
    }
  }
}

export interface RouterOptions {
  /** `TENDER_READ_MAX_LAG_MS`: reads go to the primary while the replica is further behind. */
  readonly maxLagMs: number
}

/**
 * The primary's client with its statements routed: inside one of its transactions on that
 * transaction's connection; else on the replica when the fiber's `ReadSource` says so and the
 * replica is usable; else on the primary. Usable: at most `maxLagMs` behind at the last measure
 * (every 200 ms), and no refused connection in the last few seconds. A replica read is therefore at
 * most `maxLagMs` + 200 ms stale. Transactions, `reserve`, LISTEN/NOTIFY are the primary's own.
 * The lag is measured for as long as the scope is open.
 */
export const router = (primary: PgClient.PgClient, replica: PgClient.PgClient, options: RouterOptions): Effect.Effect<PgClient.PgClient, never, Scope.Scope> =>
  Effect.gen(function*() {
    // After a failed connect the replica is left alone for a while: reads do not each wait on it, nor log.
    let unreachableUntil = 0
    // Behind until measured; the first measure sets it silently (a start is no change worth a log line).
    let behind = true
    let measured = false
    const meter = lagMeter()
    const measure = Effect.gen(function*() {
      const at = Date.now()
      const [{ lsn: primaryLsn }] = yield* primary<{ lsn: string }>`SELECT pg_current_wal_lsn()::text AS lsn`
      const [{ lsn: replayLsn }] = yield* replica<{ lsn: string | null }>`SELECT pg_last_wal_replay_lsn()::text AS lsn`
      return meter.record(at, primaryLsn, replayLsn)
    }).pipe(
      // A replica (or primary) that cannot be asked counts as infinitely behind.
      Effect.catchCause(() => Effect.succeed(Number.POSITIVE_INFINITY)),
      Effect.flatMap((lagMs) => {
        const wasBehind = behind
        behind = lagMs > options.maxLagMs
        const first = !measured
        measured = true
        if (first || behind === wasBehind) return Effect.void
        return behind
          ? Effect.logWarning(`the read replica is ${Number.isFinite(lagMs) ? `${lagMs} ms` : "unmeasurably far"} behind (more than ${options.maxLagMs} ms): reads go to the primary`)
          : Effect.logInfo(`the read replica is back within ${options.maxLagMs} ms: reads go to it`)
      })
    )
    yield* measure
    yield* Effect.forkScoped(Effect.repeat(measure, Schedule.spaced(LAG_POLL_MS)))

    /** A statement outside any transaction: on the replica when asked and usable, else (or when it refuses the connection) on the primary. */
    const route = <A, E, R>(onPrimary: Effect.Effect<A, E, R>, onReplica: Effect.Effect<A, E, R>) =>
      Effect.flatMap(ReadSource, (read) => {
        if (read === undefined) return onPrimary
        read.source ??= behind || Date.now() < unreachableUntil ? "primary" : "replica"
        if (read.source === "primary") return onPrimary
        read.usedReplica = true
        return Effect.catchIf(onReplica, isConnectionError, (error) => {
          unreachableUntil = Date.now() + UNREACHABLE_PAUSE_MS
          read.source = "primary"
          return Effect.andThen(
            Effect.logWarning(`the read replica is unreachable (${(error as SqlError).message}); reading the primary for ${UNREACHABLE_PAUSE_MS / 1000} s`),
            onPrimary
          )
        })
      })
    /** Inside one of the primary's transactions, a statement runs on that transaction's connection. */
    const outsideTransaction = <A, E, R>(inside: (conn: Connection) => Effect.Effect<A, E, R>, outside: Effect.Effect<A, E, R>) =>
      Effect.flatMap(Effect.serviceOption(primary.transactionService), Option.match({ onSome: ([conn]) => inside(conn), onNone: () => outside }))

    // Streams lease a connection into their scope; single statements borrow one from the pool (no scope each).
    const acquirer: Acquirer = outsideTransaction(Effect.succeed, route(primary.reserve, replica.reserve))
    const onPrimary = borrowerOf(primary)
    const onReplica = borrowerOf(replica)
    const borrower: Borrower = (f) => outsideTransaction(f, route(onPrimary(f), onReplica(f)))
    const statements = Statement.make(
      acquirer,
      PgClient.makeCompiler(primary.config.transformQueryNames, primary.config.transformJson),
      SPAN_ATTRIBUTES,
      undefined,
      borrower
    )
    const client = Object.assign(statements, { ...primary, ...statements }) as unknown as PgClient.PgClient
    Object.assign(client, { safe: client, withoutTransforms: () => client })
    return client
  })
