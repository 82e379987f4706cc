/**
 * Operation: one round of the retention worker (Workers.ts). Walks the event log oldest first in
 * batches (Pruning.pruneEvents), each one short statement of its own, until no event older than the
 * cutoff is left to look at; then removes storage's expired entries likewise, and console sessions
 * past their idle or absolute limit (a session is otherwise removed only when presented again). After each batch it
 * pauses `idleShare` times as long as the batch took, so that a backlog (the first round over a
 * year of history) takes a bounded share of one connection and of the database's writes, and is
 * worked off beside the payments rather than ahead of them (bench/README.md, Growth).
 */
import { Clock, Effect } from "effect"
import { expiredBefore } from "../../operators/Operator.ts"
import { ConsoleSessionRepo } from "../../operators/OperatorPorts.ts"
import { Pruning } from "../WebhookPorts.ts"
import { addCounts, cutoff, DEFAULT_RETENTION_DAYS, type EventKey, NOTHING_PRUNED, PRUNE_BATCH, type PruneCounts } from "../Retention.ts"

/** What the retention round keeps, and its pace. */
export interface RetentionOptions {
  /** Days the event log is kept (Retention.ts); `"never"` keeps it, and only expired entries go. */
  readonly days: number | "never"
  /** Rows looked at per batch. */
  readonly batchSize: number
  /** Least pause between two batches, in ms. */
  readonly pauseMs: number
  /** The pause after a batch, as a multiple of the time the batch took (9: the pruning is busy a tenth of the time). */
  readonly idleShare: number
}

/** 30 days, batches of 250, a pause of nine times the batch's time (at least 20 ms) between two. */
export const DEFAULT_RETENTION: RetentionOptions = { days: DEFAULT_RETENTION_DAYS, batchSize: PRUNE_BATCH, pauseMs: 20, idleShare: 9 }

/** Runs `batch` until one is not full (nothing is left after it), pausing between two. */
const untilShort = <A>(
  pace: Pick<RetentionOptions, "pauseMs" | "idleShare">,
  batch: (previous: A | undefined) => Effect.Effect<{ readonly result: A; readonly full: boolean }>
): Effect.Effect<ReadonlyArray<A>> =>
  Effect.gen(function*() {
    const results: Array<A> = []
    let previous: A | undefined
    while (true) {
      const started = yield* Clock.currentTimeMillis
      const { full, result } = yield* batch(previous)
      results.push(result)
      if (!full) return results
      previous = result
      const pause = Math.max(pace.pauseMs, pace.idleShare * ((yield* Clock.currentTimeMillis) - started))
      if (pause > 0) yield* Effect.sleep(pause)
    }
  })

/** One retention round: what it removed. */
export const pruneRound = Effect.fn("Retention.pruneRound")(function*(partial: Partial<RetentionOptions> = {}) {
  const options = { ...DEFAULT_RETENTION, ...partial }
  const pruning = yield* Pruning
  let counts: PruneCounts = NOTHING_PRUNED
  if (options.days !== "never") {
    const before = cutoff(yield* Clock.currentTimeMillis, options.days)
    const batches = yield* untilShort<{ readonly last: EventKey | undefined; readonly counts: Partial<PruneCounts> }>(
      options,
      (previous) =>
        Effect.map(pruning.pruneEvents({ before, limit: options.batchSize, after: previous?.last }), (batch) => ({
          result: { last: batch.last, counts: batch },
          full: batch.scanned >= options.batchSize && batch.last !== undefined
        }))
    )
    for (const batch of batches) counts = addCounts(counts, batch.counts)
  }
  const expired = yield* untilShort<number>(options, () =>
    Effect.map(pruning.pruneExpired(options.batchSize), (n) => ({ result: n, full: n >= options.batchSize })))
  const sessions = yield* ConsoleSessionRepo
  const bounds = expiredBefore(yield* Clock.currentTimeMillis)
  const ended = yield* untilShort<number>(options, () =>
    Effect.map(sessions.removeExpired({ ...bounds, limit: options.batchSize }), (n) => ({ result: n, full: n >= options.batchSize })))
  counts = addCounts(counts, { expired: [...expired, ...ended].reduce((a, b) => a + b, 0) })
  if (counts.events + counts.deliveries + counts.attempts + counts.expired > 0) {
    yield* Effect.logInfo("retention: pruned").pipe(Effect.annotateLogs({ ...counts }))
  }
  return counts
})
