/**
 * Operation: pay money out to the instrument of an original card payment (POST /v1/payouts; spec:
 * "a payout references the original payment and reuses its instrument"). Validate → resolve the
 * original (Original.ts) → reveal the stored card → under the order's lock, check what the original
 * settled and the account's allowance, and reserve → call → record (Outflow.ts).
 *
 * contract.md, Payouts: "a payout needs an original that settled (captured, not voided or fully
 * refunded), and its amount is at most the account's allowance: by default the original's settled
 * amount less its refunds and earlier payouts; an operator may set --max-per-payout and
 * --max-per-day instead". Refunds and payouts still in flight count as spent: they may yet succeed.
 */
import { Effect, Option } from "effect"
import { type Account, type PayoutLimit, payoutLimitOf } from "../Account.ts"
import { invalidField, OriginalTransactionNotEligible, PayoutInProgress, type ValidationFailed } from "../Errors.ts"
import * as Money from "../Money.ts"
import type { Payout } from "../MoneyOut.ts"
import { duplicateOutflowReference, PayoutRepo } from "../OutflowPorts.ts"
import { payoutView } from "../OutflowViews.ts"
import type { Order, Transaction } from "../Payment.ts"
import { TransactionRepo } from "../PaymentPorts.ts"
import { routeFor } from "../Routing.ts"
import { isInFlight } from "../TransactionStatus.ts"
import { cardDetails, revealCard } from "./Cards.ts"
import { nowIso } from "./Kit.ts"
import { type OriginalTarget, payable, requireOneTarget, resolveOriginal, settledAmount } from "./Original.ts"
import { parseOutflowAmount, payouts, send } from "./Outflow.ts"
import { providerOf, refuseOtherChannel } from "./Route.ts"

export interface PayoutInput extends OriginalTarget {
  readonly amount?: string | undefined
  readonly payout_reference?: string | undefined
}

/** The original's books as a payout sees them, in the order's currency (minor units). */
export interface PayoutBalance {
  /** What the original settled: a payment's amount, or an authorization's settled captures. */
  readonly settled: number
  /** Refunds that succeeded, and those still in flight. */
  readonly refunded: number
  readonly refunding: number
  /** Earlier payouts of the original, pending or succeeded. */
  readonly paidOut: number
}

const sum = (txns: ReadonlyArray<Transaction>) => txns.reduce((s, t) => s + t.amount, 0)

/** Pure: the original's books, from its order's transactions. */
export const payoutBalance = (order: Order, original: Transaction, txns: ReadonlyArray<Transaction>): PayoutBalance => {
  const settled = original.kind === "authorization"
    ? sum(txns.filter((t) => t.kind === "capture" && t.parent_transaction_id === original.id && t.status === "completed"))
    : original.status === "completed" ? settledAmount(order, original) : 0
  const refunds = txns.filter((t) => t.kind === "refund")
  return {
    settled,
    refunded: sum(refunds.filter((t) => t.status === "completed")),
    refunding: sum(refunds.filter((t) => isInFlight(t.status))),
    paidOut: sum(txns.filter((t) => t.kind === "payout" && t.parent_transaction_id === original.id && (t.status === "completed" || isInFlight(t.status))))
  }
}

/** The operator's limit in force and what the account already paid out today in its currency. */
export interface DailyLimit {
  readonly limit: PayoutLimit
  readonly paidToday: number
}

/**
 * Pure: the payout's amount, or why not. An original with nothing settled (an authorization never
 * captured or voided whole) or whose settlement was refunded in full has nothing to pay out against
 * (409); one payout of an original at a time (spec: "Payout already in progress for the
 * transaction"); then the allowance: the operator's limits when set for the currency, else the
 * balance. Over it: 400 naming `amount`.
 */
export const planPayout = (
  balance: PayoutBalance,
  earlier: ReadonlyArray<Payout>,
  amount: number,
  currency: string,
  daily: DailyLimit | undefined
): number | OriginalTransactionNotEligible | PayoutInProgress | ValidationFailed => {
  const show = (minor: number) => `${Money.toDecimalString(minor, currency)} ${currency}`
  if (balance.settled === 0) {
    return new OriginalTransactionNotEligible({ message: "The original payment has not settled (nothing captured, or voided): there is nothing to pay out against" })
  }
  if (balance.refunded >= balance.settled) {
    return new OriginalTransactionNotEligible({ message: `The original payment's settlement of ${show(balance.settled)} was refunded in full` })
  }
  if (earlier.some((p) => p.status === "pending")) {
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
  const available = Math.max(0, balance.settled - balance.refunded - balance.refunding - balance.paidOut)
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
 * What the decision reads under the order's lock: the order's transactions as they stand, and with
 * an operator limit the account's payouts of the day, counted under the account's payout lock.
 */
const facts = (account: Account, order: Order, original: Transaction) =>
  Effect.gen(function*() {
    const balance = payoutBalance(order, original, yield* (yield* TransactionRepo).listByOrder(order.id))
    const limit = payoutLimitOf(account, order.currency)
    if (limit === undefined) return { balance, daily: undefined }
    const [from, to] = utcDay(yield* nowIso)
    const daily: DailyLimit = { limit, paidToday: yield* (yield* PayoutRepo).lockedDayTotal(account.id, order.currency, from, to) }
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
  const card = yield* revealCard(account.id, order.card_token!).pipe(
    Effect.catchTag("PaymentMethodNotFound", () =>
      Effect.fail(new OriginalTransactionNotEligible({ message: `The card of payment ${original.id} is no longer in the vault` })))
  )
  const payout = yield* send(payouts, {
    order,
    original,
    load: facts(account, order, original),
    decide: (earlier, { balance, daily }) => planPayout(balance, earlier, amount, order.currency, daily),
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
