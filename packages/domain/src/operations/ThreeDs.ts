/**
 * Operations of 3-D Secure: the customer answers the issuer's challenge (hosted sandbox page), then
 * the merchant completes it server-to-server (POST /v1/payments/{id}/3ds/complete, idempotent). On
 * a channel (Stripe, Adyen) the challenge is the provider's page, which sends the customer back to
 * Tender's return route: the return completes the authorization at once (returnFromProvider).
 */
import { Effect, Option } from "effect"
import type { Account } from "../Account.ts"
import { OrderNotFound, PaymentUnexpectedState, TransactionNotFound } from "../Errors.ts"
import { customerReturnUrl, type Order, type Transaction } from "../Payment.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"
import { revise } from "../StateMachine.ts"
import { cardDetails, revealCard } from "./Cards.ts"
import { guarded, latestAttempt, refuseInactive, loadTxn, lockOrder, nowIso, saveTxn, snapshot, unitOfWork } from "./Kit.ts"
import { idempotencyKey, reserve, runAttempt } from "./ProviderStep.ts"
import { onProviderOf, providerOf } from "./Route.ts"
import { record } from "./RecordAttempt.ts"

export const completeThreeDs = Effect.fn("Payments.completeThreeDs")(function*(account: Pick<Account, "id">, orderId: string) {
  const orders = yield* OrderRepo
  const found = yield* orders.find(account.id, orderId)
  if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${orderId}` })
  return yield* guarded(orderId, Effect.gen(function*() {
    const transactions = yield* TransactionRepo
    const order = Option.getOrThrow(yield* orders.find(account.id, orderId))
    const attempt = latestAttempt(yield* transactions.listByOrder(order.id))
    if (attempt === undefined || attempt.payment_method !== "card") {
      return yield* new PaymentUnexpectedState({ message: `Payment ${order.id} is not a card payment; 3-D Secure does not apply` })
    }
    // Idempotent: unanswered → the same requires_action snapshot; already decided → the outcome.
    if (attempt.status !== "processing" || attempt.pending_call !== null || (attempt.three_ds !== "approved" && attempt.three_ds !== "denied")) {
      return snapshot(order, attempt)
    }
    if (attempt.three_ds === "denied") {
      const recorded = yield* record(order.id, attempt.id, { _tag: "Declined", decline_code: "authentication_failed", provider_transaction_id: attempt.provider_transaction_id })
      return snapshot(recorded.order, recorded.txn)
    }
    const card = yield* revealCard(account.id, order.card_token ?? "")
    // The authorization after a challenge is another authorize call of the attempt: its own key,
    // one per round (the row's version), should the issuer challenge again.
    const reserved = yield* unitOfWork(Effect.gen(function*() {
      yield* lockOrder(order.id)
      const current = yield* loadTxn(attempt.id)
      const txn = yield* reserve(current, "authorize", idempotencyKey(current, "authorize", current.version), yield* nowIso)
      yield* saveTxn(txn)
      return txn
    }))
    // The challenge was the attempt's provider's: the authorization after it goes there too.
    const recorded = yield* onProviderOf(reserved)(runAttempt("complete3ds", reserved, (provider) => provider.authorizeCard({
      reference: reserved.id,
      idempotency_key: reserved.pending_call!.key,
      card: cardDetails(card, undefined),
      amount: order.amount,
      currency: order.currency,
      capture: order.capture_method === "automatic",
      authenticated: true,
      challenged: reserved.provider_transaction_id ?? undefined
    }), false))
    return snapshot(recorded.order, recorded.txn)
  }))
})

/** The customer answers a 3-D Secure challenge; returns where to send them (Payment.customerReturnUrl). */
export const answerChallenge = Effect.fn("Payments.answerChallenge")(function*(transactionId: string, approved: boolean) {
  const found = yield* (yield* TransactionRepo).findAny(transactionId)
  if (Option.isNone(found)) return yield* new TransactionNotFound({ message: `No transaction ${transactionId}` })
  yield* refuseInactive(found.value.account_id)
  return yield* unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(found.value.order_id)
    const txn = yield* loadTxn(transactionId)
    if (txn.three_ds !== "required" || txn.status !== "processing") {
      return yield* new PaymentUnexpectedState({ message: `No 3-D Secure challenge is awaiting an answer on ${transactionId}` })
    }
    yield* saveTxn(revise(txn, { three_ds: approved ? "approved" : "denied" }, yield* nowIso))
    return { return_url: customerReturnUrl(order, txn, approved) }
  }))
})

/** Where the customer goes once an attempt's challenge is over: in flight counts as good (the merchant reads the outcome). */
const returnUrlOf = (order: Order, txn: Transaction) =>
  customerReturnUrl(order, txn, txn.status !== "failed" && txn.status !== "canceled" && txn.status !== "returned")

/**
 * The customer is back from a channel's provider page (`GET|POST /providers/{channel_id}/return`):
 * the provider's adapter takes what came back (Adyen's redirectResult; Stripe's PaymentIntent id
 * must be the attempt's), the challenge counts as answered, and the authorization after it runs at
 * once, the provider deciding approved or declined (completeThreeDs: its own round key, so a
 * return and a merchant's 3ds/complete never authorize twice). Returns where to send the customer,
 * as the sandbox's page would. A transaction of another channel is not found; a return after the
 * challenge was answered changes nothing and answers the same place (a reload).
 */
export const returnFromProvider = Effect.fn("Payments.returnFromProvider")(function*(channelId: string, transactionId: string, returnedTo: string) {
  const transactions = yield* TransactionRepo
  const found = Option.filter(yield* transactions.findAny(transactionId), (txn) => txn.channel_id === channelId)
  if (Option.isNone(found)) return yield* new TransactionNotFound({ message: `No transaction ${transactionId} on channel ${channelId}` })
  const txn = found.value
  if (txn.three_ds === null) return yield* new PaymentUnexpectedState({ message: `Transaction ${transactionId} was never challenged` })
  yield* refuseInactive(txn.account_id)
  if (txn.three_ds === "required" && txn.status === "processing") {
    const provider = yield* providerOf(txn)
    const answered = provider.challengeReturned === undefined || (yield* provider.challengeReturned(returnedTo, txn.provider_transaction_id))
    if (!answered) return yield* new PaymentUnexpectedState({ message: `This return carries no answer of the provider for ${transactionId}` })
    // "approved" here means answered: the provider's authorization after the challenge says
    // whether it passed. A concurrent return may have marked it first; either one completes it.
    yield* answerChallenge(transactionId, true).pipe(Effect.catchTag("PaymentUnexpectedState", () => Effect.void))
  }
  // Idempotent: after the outcome (a reload of the return) it only reads. A provider that could not
  // be asked or an answer in doubt is the payment's state to read, not the customer's error page.
  yield* completeThreeDs({ id: txn.account_id }, txn.order_id).pipe(
    Effect.catch((failure) => Effect.logWarning(`3-D Secure return of ${transactionId}: the authorization after the challenge did not complete (${failure._tag})`))
  )
  const order = Option.getOrThrow(yield* (yield* OrderRepo).findAny(txn.order_id))
  const current = Option.getOrThrow(yield* transactions.findAny(transactionId))
  return { return_url: returnUrlOf(order, current) }
})
