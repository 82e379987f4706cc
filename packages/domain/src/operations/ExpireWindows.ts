/**
 * The window expiry worker: a QR, voucher or bank-transfer payment window, or a client secret
 * (collect_card / collect_cvv, 15 minutes), that closed unpaid ends its attempt: the transaction
 * `canceled`, the order `canceled` (a direct payment: `payment.failed`, final) or, under a checkout
 * session, free for the customer's retry while attempts remain. Events are emitted once: the record
 * step only moves an attempt still in flight.
 */
import { Clock, Effect, Option } from "effect"
import type { Transaction } from "../Payment.ts"
import { TransactionRepo } from "../PaymentPorts.ts"
import { isoOf } from "../Time.ts"
import { isInFlight } from "../TransactionStatus.ts"
import { guarded } from "./Kit.ts"
import { record } from "./RecordAttempt.ts"

const expireOne = (candidate: Transaction, now: number) =>
  guarded(candidate.order_id, Effect.gen(function*() {
    const txn = Option.getOrUndefined(yield* (yield* TransactionRepo).findAny(candidate.id))
    // A call at the provider (3-D Secure completion, a card form submitted) finishes first.
    if (txn === undefined || !isInFlight(txn.status) || txn.pending_call !== null) return false
    if (txn.expires_at === null || Date.parse(txn.expires_at) > now) return false
    yield* record(txn.order_id, txn.id, { _tag: "Closed", how: "expired" })
    return true
  }))

/** One round: closes due windows; returns how many. */
export const expireWindows = Effect.gen(function*() {
  const now = yield* Clock.currentTimeMillis
  const due = yield* (yield* TransactionRepo).listExpiredWindows(isoOf(now), 50)
  let closed = 0
  for (const txn of due) {
    const done = yield* expireOne(txn, now).pipe(
      Effect.catchCause((cause) => Effect.as(Effect.logWarning(`window expiry of ${txn.id} failed`, cause), false))
    )
    if (done) closed++
  }
  return closed
})
