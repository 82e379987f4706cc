/**
 * Operation: pay money out to the instrument of an original card payment (POST /v1/payouts; spec:
 * "a payout references the original payment and reuses its instrument"). Validate → resolve the
 * original (Original.ts) → reveal the stored card → under the order's lock, refuse while another
 * payout of the original is pending, and reserve → call → record (Outflow.ts). The amount is not
 * bounded by the original's: a payout sends new money, in the original's currency.
 */
import { Effect, Option } from "effect"
import type { Account } from "../Account.ts"
import { invalidField, OriginalTransactionNotEligible, PayoutInProgress } from "../Errors.ts"
import * as Money from "../Money.ts"
import type { Payout } from "../MoneyOut.ts"
import { duplicateOutflowReference, PayoutRepo } from "../OutflowPorts.ts"
import { payoutView } from "../OutflowViews.ts"
import { routeFor } from "../Routing.ts"
import { cardDetails, revealCard } from "./Cards.ts"
import { type OriginalTarget, payable, requireOneTarget, resolveOriginal } from "./Original.ts"
import { parseOutflowAmount, payouts, send } from "./Outflow.ts"
import { providerOf, refuseOtherChannel } from "./Route.ts"

export interface PayoutInput extends OriginalTarget {
  readonly amount?: string | undefined
  readonly payout_reference?: string | undefined
}

/** Pure: one payout of an original at a time (spec: "Payout already in progress for the transaction"). */
export const planPayout = (earlier: ReadonlyArray<Payout>, amount: number) =>
  earlier.some((p) => p.status === "pending")
    ? new PayoutInProgress({ message: "Another payout of this payment is in progress; retry once it has ended" })
    : amount

export const createPayout = Effect.fn("Outflows.payout")(function*(account: Account, input: PayoutInput) {
  yield* requireOneTarget(input)
  if (input.amount === undefined) return yield* invalidField("amount", "is required")
  if (input.payout_reference !== undefined) {
    if (input.payout_reference.trim() === "") return yield* invalidField("payout_reference", "must not be empty")
    const holder = yield* (yield* PayoutRepo).findByReference(account.id, input.payout_reference)
    if (Option.isSome(holder)) return yield* duplicateOutflowReference("payout_reference", input.payout_reference)
  }
  const { order, original } = yield* resolveOriginal(account.id, input, payable)
  yield* refuseOtherChannel(input.channel_id, original)
  const amount = parseOutflowAmount(input.amount, order.currency, () => invalidField("amount", Money.amountErrorMessage("not_positive", order.currency)))
  if (typeof amount !== "number") return yield* amount
  // Paid out where the payment was taken: the original's channel holds the instrument.
  const provider = yield* providerOf(original)
  const unroutable = routeFor(provider, order.livemode)
  if (unroutable !== undefined) return yield* unroutable
  const card = yield* revealCard(account.id, order.card_token!).pipe(
    Effect.catchTag("PaymentMethodNotFound", () =>
      Effect.fail(new OriginalTransactionNotEligible({ message: `The card of payment ${original.id} is no longer in the vault` })))
  )
  const payout = yield* send(payouts, {
    order,
    original,
    decide: (earlier) => planPayout(earlier, amount),
    fields: { payment_instrument: original.payment_instrument!, payout_reference: input.payout_reference ?? null },
    call: (txn, key) =>
      provider.payout({
        reference: txn.id,
        idempotency_key: key,
        method: "card",
        destination: original.payment_instrument!,
        // A merchant-initiated call: no CVC.
        card: cardDetails(card, undefined),
        amount: txn.amount,
        currency: txn.currency,
        country: order.country
      })
  })
  return payoutView(payout)
})
