/**
 * Test mode: POST /v1/test_helpers/orders/{id}/simulate acts as the customer or the provider on the
 * order's pending attempt (contract.md). It drives the same operations a real customer would.
 * With no attempt pending, it acts as the provider on the order's refund or payout queued at the
 * sandbox (the card ending 0341's, settled by the worker about 2 s later): `succeed` pays it, `fail`
 * refuses it, as the settlement worker would record the provider's word (docs/decisions.md, "tender
 * trigger": the only way to make a refund or payout fail in the sandbox).
 */
import { Clock, Effect, Option } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { invalidField, OrderNotFound, PaymentUnexpectedState } from "../../kernel/Errors.ts"
import * as Money from "../../kernel/Money.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"
import { awaitsSettlement, isInFlight } from "../Transaction.ts"
import { settleOutflow } from "../../money-out/operations/Outflow.ts"
import { cardDetails, revealCard } from "./Cards.ts"
import { submitCardForm } from "./ClientPay.ts"
import { latestAttempt } from "../Transaction.ts"
import { viewOrder } from "./Snapshot.ts"
import { answerChallenge } from "./ThreeDs.ts"
import { applyOutcome } from "./Outcome.ts"
import { providerOf } from "./Route.ts"

/** What the sandbox may make a test payment do (`Payments.simulate`). */
export type SimulateOutcome = "succeed" | "fail" | "expire" | "underpay" | "overpay"

export const simulate = Effect.fn("Payments.simulate")(function*(
  account: Account,
  orderId: string,
  input: { readonly outcome: SimulateOutcome; readonly amount?: string | undefined }
) {
  const orders = yield* OrderRepo
  const found = yield* orders.find(account.id, orderId)
  if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${orderId}` })
  const order = found.value
  const txns = yield* (yield* TransactionRepo).listByOrder(order.id)
  const attempt = latestAttempt(txns)
  if (attempt === undefined || !isInFlight(attempt.status)) {
    const queued = [...txns].reverse().find((t) => (t.kind === "refund" || t.kind === "payout") && awaitsSettlement(t))
    if (queued === undefined) {
      return yield* new PaymentUnexpectedState({ message: `Order ${order.id} is ${order.status}; no attempt, refund or payout is pending` })
    }
    if (input.outcome !== "succeed" && input.outcome !== "fail") {
      return yield* invalidField("outcome", `a pending ${queued.kind} can succeed or fail`)
    }
    // False when the worker settled it first: it is no longer pending.
    if (!(yield* settleOutflow(queued, input.outcome === "succeed" ? "settled" : "failed"))) {
      return yield* new PaymentUnexpectedState({ message: `The ${queued.kind} of order ${order.id} is no longer pending` })
    }
    return yield* viewOrder(Option.getOrThrow(yield* orders.find(account.id, orderId)))
  }
  if (input.outcome === "underpay" || input.outcome === "overpay") {
    if (order.payment_method !== "crypto") return yield* invalidField("outcome", "underpay and overpay apply to crypto payments only")
    const received = input.amount === undefined ? undefined : Money.parseAmountOption(input.amount, order.currency)
    if (received === undefined || Option.isNone(received)) {
      return yield* invalidField("amount", "is required: the amount received, as a decimal string")
    }
    if (input.outcome === "underpay" ? received.value >= order.amount : received.value <= order.amount) {
      return yield* invalidField("amount", `must be ${input.outcome === "underpay" ? "below" : "above"} the order amount`)
    }
    yield* applyOutcome(order.id, attempt.id, "succeed", received.value)
  } else if (attempt.payment_method === "card") {
    if (attempt.three_ds === "required") {
      yield* answerChallenge(attempt.id, input.outcome === "succeed")
    } else if (attempt.next_action?.type === "collect_cvv" || attempt.next_action?.type === "collect_card") {
      if (input.outcome === "expire") return yield* invalidField("outcome", "a card form awaiting the customer can succeed or fail")
      // The customer submits the form: the saved card with its CVC, or the provider's test card typed in.
      const provider = yield* providerOf(attempt)
      if (provider.testCards === undefined) {
        return yield* new PaymentUnexpectedState({ message: "This provider has no test cards to act as the customer with" })
      }
      const saved = attempt.next_action.type === "collect_cvv" ? yield* revealCard(account.id, order.card_token ?? "") : undefined
      const number = saved !== undefined && input.outcome === "succeed" ? saved.number : provider.testCards[input.outcome]
      const expYear = new Date(yield* Clock.currentTimeMillis).getUTCFullYear() + 3
      // A form already submitted (its call in doubt) is left to reconciliation, never sent again.
      yield* submitCardForm(
        "simulate",
        order,
        attempt.id,
        saved !== undefined ? cardDetails({ ...saved, number }, "123") : { number, exp_month: 12, exp_year: expYear, cvc: "123" },
        () => new PaymentUnexpectedState({ message: `Order ${order.id} has no card form awaiting the customer` })
      ).pipe(Effect.catchTag("ProviderUnavailable", () => Effect.void))
    } else {
      return yield* new PaymentUnexpectedState({ message: `Order ${order.id} has no customer step to simulate` })
    }
  } else {
    yield* applyOutcome(order.id, attempt.id, input.outcome === "expire" ? "expire" : input.outcome)
  }
  return yield* viewOrder(Option.getOrThrow(yield* orders.find(account.id, orderId)))
})
