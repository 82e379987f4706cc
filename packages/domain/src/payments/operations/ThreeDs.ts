/**
 * Operations of 3-D Secure. Who completes a challenge depends on who shows it (contract.md, Browser
 * SDK): in Tender's browser flows (the SDK's `pay`, a checkout session: `Transaction.browser_flow`)
 * the customer's answer (the sandbox's challenge page, simulate) completes the payment at once; on a
 * server-to-server payment (the merchant's server created it with a token and shows the challenge)
 * the answer is recorded and the merchant completes it (POST /v1/payments/{id}/3ds/complete,
 * idempotent). On a channel (Stripe, Adyen) the challenge is the provider's page, which sends the
 * customer back to Tender's return route: the return completes the authorization at once, whatever
 * the flow (returnFromProvider).
 */
import { Effect, Option } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { OrderNotFound, PaymentUnexpectedState, TransactionNotFound } from "../../kernel/Errors.ts"
import { customerReturnUrl, type Order, type Transaction } from "../Payment.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"
import { revise } from "../../kernel/StateMachine.ts"
import { authorization, cardDetails, revealCard, type RevealedCard } from "./Cards.ts"
import { nowIso } from "../../kernel/Time.ts"
import { latestAttempt } from "../Transaction.ts"
import { guarded, refuseInactive, loadTxn, lockOrder } from "./Load.ts"
import { saveTxn, unitOfWork } from "./Persist.ts"
import { snapshot } from "./Snapshot.ts"
import { idempotencyKey, reserve } from "./ProviderStep.ts"
import { runAttempt } from "./RunAttempt.ts"
import { onProviderOf, providerOf } from "./Route.ts"
import { record, recordOn } from "./RecordAttempt.ts"

/**
 * The authorization after a challenge, reserved on the answered attempt: another authorize call of
 * the attempt, with its own key, one per round (the answered row's version), should the issuer
 * challenge again.
 */
const reserveAfterChallenge = (answered: Transaction, at: string) =>
  reserve(answered, "authorize", idempotencyKey(answered, "authorize", answered.version), at)

/** Call → record of that reserved authorization: the challenge was the attempt's provider's, so it goes there too. */
const authorizeAfterChallenge = (order: Order, reserved: Transaction, card: RevealedCard) =>
  onProviderOf(reserved)(runAttempt("complete3ds", reserved, (provider) =>
    provider.authorizeCard(authorization(order, reserved, cardDetails(card, undefined), {
      authenticated: true,
      challenged: reserved.provider_transaction_id ?? undefined
    })), false))

/**
 * Once the customer's answer is taken, a provider that could not be asked or an answer in doubt is
 * the payment's state to read (the attempt records it), not the customer's error page.
 */
const quietly = (transactionId: string) => <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.asVoid,
    Effect.catch((failure) => Effect.logWarning(`3-D Secure of ${transactionId}: the authorization after the challenge did not complete (${failure._tag})`))
  )

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
    // Idempotent: unanswered → the same requires_action snapshot; already decided → the outcome. A
    // browser flow's answer reserved or decided its authorization in the same write, so here it only
    // reads: the snapshot as it stands.
    if (attempt.status !== "processing" || attempt.pending_call !== null || (attempt.three_ds !== "approved" && attempt.three_ds !== "denied")) {
      return snapshot(order, attempt)
    }
    if (attempt.three_ds === "denied") {
      const recorded = yield* record(order.id, attempt.id, { _tag: "Declined", decline_code: "authentication_failed", provider_transaction_id: attempt.provider_transaction_id })
      return snapshot(recorded.order, recorded.txn)
    }
    const card = yield* revealCard(account.id, order.card_token ?? "")
    const reserved = yield* unitOfWork(Effect.gen(function*() {
      yield* lockOrder(order.id)
      const txn = yield* reserveAfterChallenge(yield* loadTxn(attempt.id), yield* nowIso)
      yield* saveTxn(txn)
      return txn
    }))
    const recorded = yield* authorizeAfterChallenge(order, reserved, card)
    return snapshot(recorded.order, recorded.txn)
  }))
})

/** Under the order's lock: the order and the attempt, which must still await its challenge's answer. */
const awaitingAnswer = (orderId: string, transactionId: string) =>
  Effect.gen(function*() {
    const order = yield* lockOrder(orderId)
    const txn = yield* loadTxn(transactionId)
    if (txn.three_ds !== "required" || txn.status !== "processing") {
      return yield* new PaymentUnexpectedState({ message: `No 3-D Secure challenge is awaiting an answer on ${transactionId}` })
    }
    return { order, txn }
  })

/**
 * The customer answers a 3-D Secure challenge; returns where to send them (Payment.customerReturnUrl).
 * In a browser flow the answer completes the payment now (completeOnAnswer); otherwise it is
 * recorded for the merchant's 3ds/complete.
 */
export const answerChallenge = Effect.fn("Payments.answerChallenge")(function*(transactionId: string, approved: boolean) {
  const found = yield* (yield* TransactionRepo).findAny(transactionId)
  if (Option.isNone(found)) return yield* new TransactionNotFound({ message: `No transaction ${transactionId}` })
  const attempt = found.value
  yield* refuseInactive(attempt.account_id)
  // Whether the attempt is a browser flow's is fixed before any challenge of it exists.
  if (attempt.browser_flow) return yield* guarded(attempt.order_id, completeOnAnswer(attempt, approved))
  return yield* unitOfWork(Effect.gen(function*() {
    const { order, txn } = yield* awaitingAnswer(attempt.order_id, transactionId)
    yield* saveTxn(revise(txn, { three_ds: approved ? "approved" : "denied" }, yield* nowIso))
    return { return_url: customerReturnUrl(order, txn, approved) }
  }))
})

/** Where the customer goes once an attempt's challenge is over: in flight counts as good (the merchant reads the outcome). */
const returnUrlOf = (order: Order, txn: Transaction) =>
  customerReturnUrl(order, txn, txn.status !== "failed" && txn.status !== "canceled" && txn.status !== "returned")

/**
 * A browser flow's answer, in one unit of work with what it decides: a denial declines the attempt
 * (`authentication_failed`), an approval reserves the authorization after the challenge, which then
 * runs on the attempt's provider (call → record). A crash after that commit leaves a reserved call
 * for reconciliation, never an answer that nothing completes. The customer then goes where the
 * payment now stands.
 */
const completeOnAnswer = (attempt: Transaction, approved: boolean) =>
  Effect.gen(function*() {
    const orders = yield* OrderRepo
    const transactions = yield* TransactionRepo
    // The card is read before anything is reserved (the order's card is set before any challenge).
    const unlocked = Option.getOrThrow(yield* orders.findAny(attempt.order_id))
    const card = approved ? yield* revealCard(attempt.account_id, unlocked.card_token ?? "") : undefined
    const reserved = yield* unitOfWork(Effect.gen(function*() {
      const { order, txn } = yield* awaitingAnswer(attempt.order_id, attempt.id)
      if (card === undefined) {
        yield* recordOn(order, txn, { _tag: "Declined", decline_code: "authentication_failed", provider_transaction_id: txn.provider_transaction_id })
        return undefined
      }
      const at = yield* nowIso
      const answered = revise(txn, { three_ds: "approved" }, at)
      yield* saveTxn(answered)
      const call = yield* reserveAfterChallenge(answered, at)
      yield* saveTxn(call)
      return { order, call, card }
    }))
    if (reserved !== undefined) yield* quietly(attempt.id)(authorizeAfterChallenge(reserved.order, reserved.call, reserved.card))
    return { return_url: returnUrlOf(Option.getOrThrow(yield* orders.findAny(attempt.order_id)), Option.getOrThrow(yield* transactions.findAny(attempt.id))) }
  })

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
  // Idempotent: after the outcome (a reload of the return, or a browser flow's answer above) it only reads.
  yield* quietly(transactionId)(completeThreeDs({ id: txn.account_id }, txn.order_id))
  const order = Option.getOrThrow(yield* (yield* OrderRepo).findAny(txn.order_id))
  const current = Option.getOrThrow(yield* transactions.findAny(transactionId))
  return { return_url: returnUrlOf(order, current) }
})
