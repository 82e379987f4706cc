/**
 * Background workers that `tender serve` (and `tender worker`) run beside the API. Each runs until
 * its scope closes; a failed round is logged and the next round runs as usual.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { Payments, type ReconcileOptions } from "./payments/Payments.ts"
import { DEFAULT_RECONCILE } from "./payments/operations/Reconcile.ts"
import { Sessions } from "./sessions/Sessions.ts"
import { type DispatchOptions, type IdleOptions, Webhooks } from "./webhooks/Webhooks.ts"
import { pruneRound, type RetentionOptions } from "./webhooks/operations/Prune.ts"

/**
 * How often the expiry rounds look for lapsed payment windows and overdue sessions. A window closes
 * at its own `expires_at`; the round only bounds how late after it the close is applied.
 */
export const EXPIRY_EVERY: Duration.Input = "5 seconds"

const every = <A, E, R>(name: string, interval: Duration.Input, round: Effect.Effect<A, E, R>) =>
  round.pipe(
    Effect.catchCause((cause) => Effect.logError(`${name} round failed`, cause)),
    Effect.repeat(Schedule.spaced(interval)),
    Effect.forkScoped
  )

/**
 * Settles what the provider accepted for later (captures settling; refunds, payouts, transfers
 * queued), each asked about when due: a round that does not settle one puts it off (SettleDue.ts).
 */
export const settlement = Layer.effectDiscard(
  Effect.gen(function*() {
    const payments = yield* Payments
    yield* every("settlement", "1 second", payments.settleDue())
  })
)

/**
 * Reconciles provider calls whose answer was never recorded (a crash, a lost answer), and closes
 * payment windows and client secrets that expired unpaid.
 */
export const reconciliation = (options: Partial<ReconcileOptions> = {}, expiryEvery: Duration.Input = EXPIRY_EVERY) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const payments = yield* Payments
      const settings = { ...DEFAULT_RECONCILE, ...options }
      yield* every("reconciliation", "1 second", payments.reconcileDue(settings))
      yield* every("window expiry", expiryEvery, payments.expireWindows())
    })
  )

/** Delivers recorded events to webhook endpoints, at least once, on the retry schedule. */
export const webhooks = (options: Partial<DispatchOptions & IdleOptions> = {}) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const hooks = yield* Webhooks
      yield* Effect.forkScoped(hooks.runDispatcher(options))
    })
  )

/** Expires overdue checkout sessions (and emits their events) that nobody touched. */
export const sessionSweeper = (interval: Duration.Input = EXPIRY_EVERY) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const sessions = yield* Sessions
      yield* every("session sweeper", interval, sessions.expireOverdue())
    })
  )

/**
 * How often the retention round looks for history past the retention. A round works off all there
 * is (in batches), so this bounds only how long past its cutoff a row may linger.
 */
export const RETENTION_EVERY: Duration.Input = "5 minutes"

/**
 * Prunes the event log past its retention (events, deliveries and their attempts, never one still
 * owed) and storage's expired entries (webhooks/Retention.ts, operations/Prune.ts).
 */
export const retention = (options: Partial<RetentionOptions> = {}, interval: Duration.Input = RETENTION_EVERY) =>
  Layer.effectDiscard(every("retention", interval, pruneRound(options)))

/** Every background worker at once: what `tender serve` and `tender worker` run beside the API. */
export const layer = (options: {
  readonly webhooks?: Partial<DispatchOptions & IdleOptions>
  readonly reconcile?: Partial<ReconcileOptions>
  /** How often lapsed windows and overdue sessions are looked for (default 5 s). */
  readonly expiryEvery?: Duration.Input
  /** What the event log keeps (default 30 days) and how it is pruned. */
  readonly retention?: Partial<RetentionOptions>
  /** How often the retention round runs (default 5 minutes). */
  readonly retentionEvery?: Duration.Input
} = {}) =>
  Layer.mergeAll(
    settlement,
    retention(options.retention, options.retentionEvery),
    webhooks(options.webhooks),
    sessionSweeper(options.expiryEvery),
    reconciliation(options.reconcile, options.expiryEvery)
  )
