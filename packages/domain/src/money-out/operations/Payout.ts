/**
 * Operation: pay money out to the instrument of an original card payment (POST /v1/payouts; spec:
 * "a payout references the original payment and reuses its instrument"). Validate → resolve the
 * settlement (Original.ts) → reveal the stored card → under the order's lock, read the settlement's
 * balance (Balance.ts) and the account's limits as stored, and reserve → call → record (Outflow.ts).
 *
 * contract.md, Payouts: "a payout needs an original that settled (captured, not voided or fully
 * refunded), and its amount is at most the account's allowance: by default the original's settled
 * amount less its refunds and earlier payouts; an operator may set --max-per-payout and
 * --max-per-day instead". Refunds and payouts still in flight count as spent: they may yet succeed.
 */
import { Effect, Option } from "effect"
import { type Account, type PayoutLimit, payoutLimitOf } from "../../accounts/Account.ts"
import { invalidField, OriginalTransactionNotEligible, PayoutInProgress, type ValidationFailed } from "../../kernel/Errors.ts"
import * as Money from "../../kernel/Money.ts"
import { duplicateOutflowReference, PayoutRepo } from "../OutflowPorts.ts"
import { payoutView } from "../OutflowViews.ts"
import type { Order, Transaction } from "../../payments/Payment.ts"
import { AccountRepo } from "../../accounts/AccountPorts.ts"
import { routeFor } from "../../channels/Routing.ts"
import { readBalance, type SettlementBalance, unspent } from "./Balance.ts"
import { cardDetails, usableCard } from "../../payments/operations/Cards.ts"
import { nowIso } from "../../kernel/Time.ts"
import { type OriginalTarget, payable, requireOneTarget, resolveOriginal } from "./Original.ts"
import { parseOutflowAmount, payouts, send } from "./Outflow.ts"
import { providerOf, refuseOtherChannel } from "../../payments/operations/Route.ts"

/** A create-payout request: the payment it pays out of (one target), amount and reference. */
export interface PayoutInput extends OriginalTarget {
  readonly amount?: string | undefined
  readonly payout_reference?: string | undefined
}

/** The operator's limit in force and what the account already paid out today in its currency. */
export interface DailyLimit {
  readonly limit: PayoutLimit
  readonly paidToday: number
}

/**
 * Pure: the payout's amount, or why not. A settlement no longer completed, or refunded in full, has
 * nothing to pay out against (409); one payout of a settlement at a time (spec: "Payout already in
 * progress for the transaction"); then the allowance: the operator's limits when set for the
 * currency, else the settlement's balance less everything out of it. Over it: 400 naming `amount`.
 */
export const planPayout = (
  balance: SettlementBalance,
  amount: number,
  currency: string,
  daily: DailyLimit | undefined
): number | OriginalTransactionNotEligible | PayoutInProgress | ValidationFailed => {
  const show = (minor: number) => `${Money.toDecimalString(minor, currency)} ${currency}`
  if (balance.settled === 0) {
    return new OriginalTransactionNotEligible({ message: "The original payment's settlement is no longer completed: there is nothing to pay out against" })
  }
  if (balance.refunded >= balance.settled) {
    return new OriginalTransactionNotEligible({ message: `The original payment's settlement of ${show(balance.settled)} was refunded in full` })
  }
  if (balance.payingOut > 0) {
    return new PayoutInProgress({ message: "Another payout of this payment is in progress; retry once it has ended" })
  }
  if (daily !== undefined) {
    const { limit, paidToday } = daily
    if (amount > limit.max_per_payout) return invalidField("amount", `must be at most ${show(limit.max_per_payout)}, this account's limit per payout`)
    if (paidToday + amount > limit.max_per_day) {
      return invalidField("amount", `must be at most ${show(Math.max(0, limit.max_per_day - paidToday))}: this account's payouts today (UTC) already reach ${show(paidToday)} of its daily ${show(limit.max_per_day)}`)
    }
    return amount
  }
  const available = unspent(balance)
  if (amount > available) {
    return invalidField("amount", `must be at most ${show(available)}: the original's settled ${show(balance.settled)} less its refunds and earlier payouts`)
  }
  return amount
}

/** The UTC day of an instant, as [start, end) (contract.md: "per day" is the UTC day). */
export const utcDay = (iso: string): readonly [string, string] => {
  const start = `${iso.slice(0, 10)}T00:00:00.000Z`
  return [start, new Date(Date.parse(start) + 24 * 3600 * 1000).toISOString()]
}

/**
 * What the decision reads under the order's lock: the settlement's balance, and the account's limits
 * as stored (not the request's account, which a server may hold from its cache: a change committed
 * before this unit of work began applies); with a limit, the account's payouts of the day, counted
 * under the account's payout lock.
 */
const facts = (accountId: Account["id"], order: Order, original: Transaction) =>
  Effect.gen(function*() {
    const balance = yield* readBalance(order, original)
    const stored = Option.getOrUndefined(yield* (yield* AccountRepo).findById(accountId))
    const limit = stored === undefined ? undefined : payoutLimitOf(stored, order.currency)
    if (limit === undefined) return { balance, daily: undefined }
    const [from, to] = utcDay(yield* nowIso)
    const daily: DailyLimit = { limit, paidToday: yield* (yield* PayoutRepo).lockedDayTotal(accountId, order.currency, from, to) }
    return { balance, daily }
  })

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
  // The payment's card, held to the account's mode as a payment's is (Cards.usableCard); the request
  // names no card, so a card the mode does not take makes the original not eligible.
  const card = yield* usableCard(account, order.card_token!, "card_token").pipe(
    Effect.catchTags({
      PaymentMethodNotFound: () => Effect.fail(new OriginalTransactionNotEligible({ message: `The card of payment ${original.id} is no longer in the vault` })),
      ValidationFailed: (refused) => Effect.fail(new OriginalTransactionNotEligible({ message: `The card of payment ${original.id} cannot be paid out to: ${refused.errors?.[0]?.message}` }))
    })
  )
  const payout = yield* send(payouts, {
    order,
    original,
    load: (locked) => facts(account.id, locked, original),
    decide: ({ balance, daily }) => planPayout(balance, amount, order.currency, daily),
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
