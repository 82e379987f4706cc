/**
 * The window expiry worker: a QR, voucher or bank-transfer payment window, or a client secret
 * (collect_card / collect_cvv, 15 minutes), that closed unpaid ends its attempt: the transaction
 * `canceled`, the order `canceled` (a direct payment: `payment.failed`, final) or, under a checkout
 * session, free for the customer's retry while attempts remain. A channel's 3-D Secure challenge is
 * first asked of its provider (verdictOf). Events are emitted once: the record
 * step only moves an attempt still in flight.
 *
 * It also closes retry windows: a direct payment or transfer whose create answered 502 awaits the
 * same request again for RETRY_WINDOW_MS (Retry.ts); with no retry by then it fails, and
 * `payment.failed` or `transfer.failed` tells the merchant.
 */
import { Clock, Effect, Option } from "effect"
import * as OrderAggregate from "../Order.ts"
import type { Order, Transaction } from "../Payment.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"
import { isoOf } from "../../kernel/Time.ts"
import { isInFlight } from "../Transaction.ts"
import { latestAttempt } from "../Transaction.ts"
import { guarded, lockOrder } from "./Load.ts"
import { decided, emit, saveOrder, unitOfWork } from "./Persist.ts"
import { attemptOutcome, idempotencyKey } from "./ProviderStep.ts"
import { type AttemptOutcome, record } from "./RecordAttempt.ts"
import { lapseTransfer } from "../../money-out/operations/RecordTransfer.ts"
import { providerOf } from "./Route.ts"

/**
 * A channel's 3-D Secure challenge can be answered without the customer coming back: Stripe
 * confirms the PaymentIntent on its own page, so the money may be held or taken already. Before the
 * window closes it, the provider is asked what became of the attempt's authorization (lookup under
 * its first key): an approval or a decline is recorded as such; anything else (still awaiting the
 * customer, as an Adyen challenge always is until the return sends /payments/details, or the
 * provider unreachable) closes it as expired.
 */
const verdictOf = (txn: Transaction) =>
  txn.channel_id === null || txn.three_ds !== "required"
    ? Effect.succeed<AttemptOutcome | "later" | undefined>(undefined)
    : Effect.gen(function*() {
      const provider = yield* providerOf(txn)
      const answer = yield* provider.lookup(idempotencyKey(txn, "authorize"))
      if (answer._tag === "Authorize" && (answer.result._tag === "Approved" || answer.result._tag === "Declined")) {
        return attemptOutcome(answer.result, false) as AttemptOutcome
      }
      // Still awaiting the customer: stop the provider's page from completing it later (Stripe would
      // charge an order Tender closed); one that completed meanwhile is read next round.
      if (provider.abandonChallenge !== undefined && txn.provider_transaction_id !== null) {
        const abandoned = yield* provider.abandonChallenge({ provider_transaction_id: txn.provider_transaction_id, idempotency_key: `${txn.id}:abandon` })
        if (abandoned === "completed") return "later" as const
      }
      return undefined
    }).pipe(
      // The provider could not be asked: the customer may have paid on its page, so the attempt stays
      // in flight and is asked again next round, never closed blind.
      Effect.catchTag("ProviderUnavailable", () => Effect.succeed("later" as const))
    )

const expireOne = (candidate: Transaction, now: number) =>
  guarded(candidate.order_id, Effect.gen(function*() {
    const txn = Option.getOrUndefined(yield* (yield* TransactionRepo).findAny(candidate.id))
    // A call at the provider (3-D Secure completion, a card form submitted) finishes first.
    if (txn === undefined || !isInFlight(txn.status) || txn.pending_call !== null) return false
    if (txn.expires_at === null || Date.parse(txn.expires_at) > now) return false
    const verdict = yield* verdictOf(txn)
    if (verdict === "later") return false
    yield* record(txn.order_id, txn.id, verdict ?? { _tag: "Closed", how: "expired" })
    return true
  }))

/**
 * Fails an order still awaiting its retry past its window: a direct payment with `payment.failed` on
 * its last (unreachable) attempt, a transfer with `transfer.failed` (RecordTransfer.ts).
 */
const lapseOne = (candidate: Order, now: number) =>
  guarded(candidate.id, unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(candidate.id)
    // A retry claimed it meanwhile (retry_until cleared), or renewed its window with another 502.
    if (order.status !== "pending" || order.retry_until === null || Date.parse(order.retry_until) > now) return false
    if (order.subtype === "transfer") {
      yield* lapseTransfer(order, isoOf(now))
      return true
    }
    const last = latestAttempt(yield* (yield* TransactionRepo).listByOrder(order.id))
    if (last === undefined) return yield* Effect.die(new Error(`Order ${order.id} awaits a retry but has no attempt`))
    const moved = yield* decided(OrderAggregate.transition(order, "retry_lapsed", isoOf(now), { retry_until: null }))
    yield* saveOrder(moved.next)
    yield* emit(moved.events, moved.next, last)
    return true
  })))

/** Runs `close` on each due item; a failure is logged and the item tried next round. Returns how many closed. */
export const closeEach = <A extends { readonly id: string }, E, R>(what: string, due: ReadonlyArray<A>, close: (item: A) => Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    let closed = 0
    for (const item of due) {
      const done = yield* close(item).pipe(
        Effect.catchCause((cause) => Effect.as(Effect.logWarning(`${what} of ${item.id} failed`, cause), false))
      )
      if (done) closed++
    }
    return closed
  })

/** One round: closes due payment windows and lapsed retry windows; returns how many. */
export const expireWindows = Effect.gen(function*() {
  const now = yield* Clock.currentTimeMillis
  const due = yield* (yield* TransactionRepo).listExpiredWindows(isoOf(now), 50)
  const lapsed = yield* (yield* OrderRepo).listRetryLapsed(isoOf(now), 50)
  return (yield* closeEach("window expiry", due, (txn) => expireOne(txn, now))) +
    (yield* closeEach("retry window", lapsed, (order) => lapseOne(order, now)))
})
