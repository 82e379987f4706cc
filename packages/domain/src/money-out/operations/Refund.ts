/**
 * Operation: refund one settlement (POST /v1/refunds, `tender refunds create`). Validate → resolve
 * the original (Original.ts) → under the order's lock, read the settlement's balance (Balance.ts)
 * and reserve → call → record (Outflow.ts).
 *
 * The refundable balance is what the settlement took less its refunds and its payouts: those that
 * succeeded are gone; those still in flight may yet succeed or fail. An amount that fits only if
 * those in flight failed is `payout_in_progress` or `refund_in_progress` (retry once they end); one
 * that cannot fit whatever they do is `refund_amount_exceeds_refundable`.
 */
import { Effect, Option } from "effect"
import type { Account } from "../../accounts/Account.ts"
import {
  invalidField,
  OriginalTransactionNotFound,
  PayoutInProgress,
  RefundAlreadyFullyRefunded,
  RefundAmountExceedsRefundable,
  RefundAmountInvalid,
  RefundInProgress
} from "../../kernel/Errors.ts"
import * as Money from "../../kernel/Money.ts"
import { AccountRepo } from "../../accounts/AccountPorts.ts"
import { OrderRepo, TransactionRepo } from "../../payments/PaymentPorts.ts"
import { duplicateOutflowReference, RefundRepo } from "../OutflowPorts.ts"
import { refundView } from "../OutflowViews.ts"
import { routeFor } from "../../channels/Routing.ts"
import { readBalance, type SettlementBalance } from "./Balance.ts"
import { type OriginalTarget, refundable, requireOneTarget, resolveOriginal } from "./Original.ts"
import { parseOutflowAmount, refunds, send } from "./Outflow.ts"
import { providerOf, refuseOtherChannel } from "../../payments/operations/Route.ts"

/** A create-refund request: the payment it refunds (one target), amount, reason and reference. */
export interface RefundInput extends OriginalTarget {
  /** Decimal string; omitted refunds the remaining balance. */
  readonly amount?: string | undefined
  readonly reason?: string | undefined
  readonly refund_reference?: string | undefined
}

const amountInvalid = () => new RefundAmountInvalid({ message: "The refund amount must be positive" })

/**
 * Pure: the amount to refund from a settlement's balance, or why not. Refunds alone took it all:
 * `refund_already_fully_refunded`. More than refunds and payouts that succeeded left (a balance used
 * up by payouts, in part or whole): `refund_amount_exceeds_refundable`, the settlement stays eligible,
 * only empty. An amount that fits only if payouts in flight failed is `payout_in_progress` (spec:
 * "Payout already in progress for the transaction"; retry once it ended: it may fail and free the
 * balance); one that fits only if refunds in flight failed, `refund_in_progress`.
 */
export const planRefund = (balance: SettlementBalance, requested: number | undefined, currency: string) => {
  const { paidOut, payingOut, refunded, refunding, settled } = balance
  const show = (minor: number) => Money.toDecimalString(minor, currency)
  if (refunded >= settled) return new RefundAlreadyFullyRefunded({ message: `The settlement of ${show(settled)} ${currency} is already fully refunded` })
  // What refunds could take were everything in flight to fail; less payouts in flight; less refunds in flight too.
  const most = Math.max(0, settled - refunded - paidOut)
  const room = Math.max(0, most - payingOut)
  const free = Math.max(0, room - refunding)
  const gone = paidOut > 0 ? ` (the settlement of ${show(settled)} ${currency} less refunds of ${show(refunded)} and payouts of ${show(paidOut)})` : ""
  if (most === 0) return new RefundAmountExceedsRefundable({ message: `Nothing is left to refund${gone}` })
  const amount = requested ?? free
  if (amount > most) {
    return new RefundAmountExceedsRefundable({ message: `The refund of ${show(amount)} ${currency} exceeds the refundable balance of ${show(most)}${gone}` })
  }
  if (amount > room || (amount === 0 && room === 0)) {
    return new PayoutInProgress({
      message: `Payouts of ${show(payingOut)} ${currency} of this settlement are in progress; ${show(room)} can be refunded until they end`
    })
  }
  if (amount > free || amount === 0) {
    return new RefundInProgress({
      message: `Refunds of ${show(refunding)} ${currency} are in progress; ${show(free)} can be refunded until they end`
    })
  }
  return amount
}

export const createRefund = Effect.fn("Outflows.refund")(function*(account: Account, input: RefundInput) {
  yield* requireOneTarget(input)
  if (input.amount !== undefined && !/^-?\d+(\.\d+)?$/.test(input.amount)) {
    return yield* invalidField("amount", Money.amountErrorMessage("format", "USD"))
  }
  if (input.refund_reference !== undefined) {
    if (input.refund_reference.trim() === "") return yield* invalidField("refund_reference", "must not be empty")
    const holder = yield* (yield* RefundRepo).findByReference(account.id, input.refund_reference)
    if (Option.isSome(holder)) return yield* duplicateOutflowReference("refund_reference", input.refund_reference)
  }
  const { order, original } = yield* resolveOriginal(account.id, input, refundable)
  yield* refuseOtherChannel(input.channel_id, original)
  const requested = input.amount === undefined ? undefined : parseOutflowAmount(input.amount, order.currency, amountInvalid)
  if (requested instanceof Error) return yield* requested
  // A refund reverses money where it was taken: on the original's channel.
  const provider = yield* providerOf(original)
  const unroutable = routeFor(provider, order.livemode)
  if (unroutable !== undefined) return yield* unroutable
  const refund = yield* send(refunds, {
    order,
    original,
    load: (locked) => readBalance(locked, original),
    decide: (balance) => planRefund(balance, requested, order.currency),
    fields: { reason: input.reason ?? null, refund_reference: input.refund_reference ?? null },
    call: (txn, key) =>
      provider.refund({
        reference: txn.id,
        idempotency_key: key,
        payment: original.provider_transaction_id ?? "",
        amount: txn.amount,
        currency: txn.currency
      })
  })
  return refundView(refund)
})

/**
 * The operator's refund (`tender refunds create ORDER_ID`): the order's settlement, or the named
 * settlement of the order, refunded in the order's account as the merchant's own request would be.
 */
export const operatorRefund = (orderId: string, input: { readonly transaction_id?: string | undefined; readonly amount?: string | undefined }) =>
  Effect.gen(function*() {
    const order = Option.getOrUndefined(yield* (yield* OrderRepo).findAny(orderId))
    if (order === undefined) return yield* new OriginalTransactionNotFound({ message: `No order ${orderId}` })
    if (input.transaction_id !== undefined) {
      const txn = Option.getOrUndefined(yield* (yield* TransactionRepo).findAny(input.transaction_id))
      if (txn?.order_id !== order.id) {
        return yield* new OriginalTransactionNotFound({ message: `No transaction ${input.transaction_id} in order ${orderId}` })
      }
    }
    const account = Option.getOrThrow(yield* (yield* AccountRepo).findById(order.account_id))
    const target = input.transaction_id !== undefined ? { transaction_id: input.transaction_id } : { order_id: order.id }
    return yield* createRefund(account, { ...target, amount: input.amount })
  })
