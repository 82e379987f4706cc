/**
 * Operation: dispatch (the webhook worker). At least once, crash-safe: a delivery is claimed with a
 * lease (its `next_attempt_at` moves to the lease's end) in a committed unit of work before the POST
 * (Claim.ts); the attempt is recorded after it (Attempt.ts). A worker that dies between the two
 * leaves the delivery due again once the lease ends, and the next attempt carries the same envelope
 * id (receivers de-duplicate on it). Every write after the POST is fenced by the claim's lease token,
 * so a worker that outlived its lease (and whose delivery was claimed again, or retried) records
 * nothing over the new holder's work.
 */
import { Clock, Deferred, Effect, Exit, Queue } from "effect"
import type { DeliveryAttempt, WebhookDelivery } from "../Webhook.ts"
import { WebhookDeliveryRepo } from "../WebhookPorts.ts"
import { attempt, type Recorder } from "./Attempt.ts"
import { claim, DEFAULT_DISPATCH, type DispatchOptions, emptyInFlight, release } from "./Claim.ts"

/** At most this many attempts in one write of the recorder. */
const RECORD_BATCH = 64

/**
 * Records attempts as they finish, in batches: while one batch is being written, the attempts
 * finishing meanwhile queue up and go in the next write (one statement, one commit for all of them),
 * so the writes follow the database's pace rather than one round trip per attempt. An attempt waits
 * for its own batch; a failed write fails each attempt of it (their leases end and they are
 * attempted again). Runs until the scope closes.
 */
const batchedRecorder = Effect.gen(function*() {
  const deliveries = yield* WebhookDeliveryRepo
  type Pending = { readonly delivery: WebhookDelivery; readonly attempt: DeliveryAttempt; readonly done: Deferred.Deferred<boolean> }
  const queue = yield* Queue.unbounded<Pending>()
  yield* Effect.gen(function*() {
    const batch = yield* Queue.takeBetween(queue, 1, RECORD_BATCH)
    const written = yield* Effect.exit(deliveries.recordAttempts(batch.map(({ attempt, delivery }) => ({ attempt, delivery }))))
    for (const [i, pending] of batch.entries()) {
      yield* Deferred.done(pending.done, Exit.map(written, (recorded) => recorded[i]))
    }
  }).pipe(Effect.forever, Effect.forkScoped)
  const record: Recorder = (delivery, attempt) =>
    Effect.gen(function*() {
      const done = yield* Deferred.make<boolean>()
      yield* Queue.offer(queue, { delivery, attempt, done })
      return yield* Deferred.await(done)
    })
  return record
})

/** One dispatcher round: claims what is due and delivers it; returns how many attempts ran. */
export const dispatchDue = Effect.fn("Webhooks.dispatchDue")(function*(partial: Partial<DispatchOptions> = {}) {
  const options = { ...DEFAULT_DISPATCH, ...partial }
  const inFlight = emptyInFlight()
  const taken = yield* claim(options, inFlight, options.concurrency)
  yield* Effect.scoped(Effect.gen(function*() {
    const record = yield* batchedRecorder
    yield* Effect.forEach(taken, (c) => Effect.ensuring(attempt(c, record), Effect.sync(() => release(inFlight, c.delivery))), {
      concurrency: options.concurrency,
      discard: true
    })
  }))
  return taken.length
})

/** How long a dispatcher woken by a freed slot waits for others to free before it claims. */
const GATHER_MS = 2

/** How long an idle dispatcher waits before it claims again, if nothing wakes it first. */
export interface IdleOptions {
  /**
   * While storage's wake-ups are heard: the safety net for what becomes due unannounced (another
   * process's retries, leases that ran out). Also bounded by this process's next scheduled retry.
   */
  readonly idleMs: number
  /** While they are not heard (PostgreSQL: the listener's connection lost): the poll. */
  readonly pollMs: number
}

/** Issue 24: woken by storage, an idle dispatcher claims once a second; polling, five times. */
export const DEFAULT_IDLE: IdleOptions = { idleMs: 1_000, pollMs: 200 }

/**
 * The dispatcher loop: whenever slots are free it claims more (within each endpoint's and account's
 * bound), forks their attempts, and waits when nothing was due: until an attempt frees a slot,
 * storage announces deliveries (WebhookDeliveryRepo.wakeups), a retry this process scheduled is due,
 * or the idle wait (`pollMs` while storage's wake-ups are not heard) passes. A slow endpoint holds at
 * most `perEndpoint` slots and an account at most `perAccount`, so the others keep flowing.
 */
export const runDispatcher = (partial: Partial<DispatchOptions & IdleOptions> = {}) =>
  Effect.scoped(Effect.gen(function*() {
    const options = { ...DEFAULT_DISPATCH, ...DEFAULT_IDLE, ...partial }
    const inFlight = emptyInFlight()
    const wakeups = yield* (yield* WebhookDeliveryRepo).wakeups
    const recordBatched = yield* batchedRecorder
    // The earliest retry this process scheduled (epoch ms): nothing announces a retry's delay ending,
    // so the idle wait ends then at the latest.
    let nextRetry = Number.POSITIVE_INFINITY
    const record: Recorder = (delivery, attempted) => {
      if (delivery.status === "failed" && delivery.next_attempt_at !== null) {
        nextRetry = Math.min(nextRetry, Date.parse(delivery.next_attempt_at))
      }
      return recordBatched(delivery, attempted)
    }
    let running = 0
    // A finished attempt frees a slot: it wakes an idle loop at once rather than after idleMs, or
    // one busy endpoint would be held to perEndpoint attempts per idle period.
    const freed = yield* Queue.sliding<void>(1)
    for (;;) {
      const claimedAt = yield* Clock.currentTimeMillis
      // This claim looks at every retry due by now: a later one is what the next wait is bounded by.
      if (claimedAt >= nextRetry) nextRetry = Number.POSITIVE_INFINITY
      const capacity = options.concurrency - running
      const taken = yield* claim(options, inFlight, capacity).pipe(
        Effect.catchCause((cause) => Effect.as(Effect.logError("webhook claim failed", cause), []))
      )
      for (const c of taken) {
        running++
        // The endpoint's and account's slots free once the POST has its answer; the process's once
        // the attempt is recorded (so what waits to be written stays bounded too).
        let released = false
        const posted = Effect.andThen(Effect.sync(() => {
          if (!released) release(inFlight, c.delivery)
          released = true
        }), Queue.offer(freed, undefined))
        yield* attempt(c, record, posted).pipe(
          Effect.catchCause((cause) => Effect.logError(`webhook attempt ${c.delivery.id} failed to record`, cause)),
          Effect.ensuring(Effect.andThen(Effect.sync(() => {
            running--
          }), posted)),
          Effect.forkChild
        )
      }
      // Fewer than asked for: the rest is not due or at its bounds, and what changes that (a slot
      // freed, a delivery stored) wakes the loop. Claiming again at once would find nothing.
      if (taken.length === 0 || taken.length < capacity) {
        const idle = (yield* wakeups.heard) ? options.idleMs : options.pollMs
        const untilRetry = nextRetry - (yield* Clock.currentTimeMillis)
        const woken = yield* Effect.raceAll([
          Effect.as(Effect.sleep(Math.max(0, Math.min(idle, untilRetry))), "idle" as const),
          Effect.as(Queue.take(freed), "freed" as const),
          Effect.as(wakeups.next, "stored" as const)
        ])
        // A slot freed while others are still posting: more free within a millisecond or two, and
        // one claim for all of them costs the database less than one each (a claim is the dearest
        // statement of a delivery). New deliveries (`stored`) are claimed at once.
        if (woken === "freed" && running > 0) yield* Effect.sleep(GATHER_MS)
      }
    }
  }))
