/**
 * The balance of a settlement — the one account of what a settlement took from the payer and what
 * went back out of it, which refunds (Refund.planRefund) and payouts (Payout.planPayout) both decide
 * from, under the order's lock (Outflow.send): so refunds and payouts of one settlement together
 * never send out more than it took, in either order (issue 21 review: a payout of 100.00, then a
 * refund of 100.00, sent 200.00 out of a 100.00 payment).
 *
 * A settlement is a completed payment or one completed capture (Original.ts); refunds and payouts
 * both name one (their `parent_transaction_id`).
 */
import { Effect } from "effect"
import { arrivedAmount, type Order, type Transaction } from "../../payments/Payment.ts"
import { TransactionRepo } from "../../payments/PaymentPorts.ts"
import { isInFlight } from "../../payments/Transaction.ts"

/** In the order's currency, minor units. */
export interface SettlementBalance {
  /** What the settlement took (0 once it is no longer completed). */
  readonly settled: number
  /** Refunds of it that succeeded, and those still in flight (they may yet succeed or fail). */
  readonly refunded: number
  readonly refunding: number
  /** Payouts against it that succeeded, and those still in flight. */
  readonly paidOut: number
  readonly payingOut: number
}

/**
 * What a settlement took from the payer, and so all that may go back out of it: a capture's amount,
 * or what arrived for a payment (its amount, unless a crypto under- or overpayment was accepted).
 */
export const settledAmount = (order: Order, settlement: Transaction): number =>
  settlement.kind === "payment" ? arrivedAmount(order) : settlement.amount

const sum = (txns: ReadonlyArray<Transaction>) => txns.reduce((s, t) => s + t.amount, 0)

/** Pure: the settlement's balance, from its order's transactions as they stand. */
export const balanceOf = (order: Order, settlement: Transaction, txns: ReadonlyArray<Transaction>): SettlementBalance => {
  const current = txns.find((t) => t.id === settlement.id) ?? settlement
  // Payouts recorded before payouts named a settlement named a capture's authorization: each counts
  // against every capture of it, so none of them can be refunded past it.
  const against = [settlement.id, ...(settlement.kind === "capture" && settlement.parent_transaction_id !== null ? [settlement.parent_transaction_id] : [])]
  const refunds = txns.filter((t) => t.kind === "refund" && t.parent_transaction_id === settlement.id)
  const payouts = txns.filter((t) => t.kind === "payout" && t.parent_transaction_id !== null && against.includes(t.parent_transaction_id))
  const succeeded = (ts: ReadonlyArray<Transaction>) => sum(ts.filter((t) => t.status === "completed"))
  const inFlight = (ts: ReadonlyArray<Transaction>) => sum(ts.filter((t) => isInFlight(t.status)))
  return {
    settled: current.status === "completed" ? settledAmount(order, current) : 0,
    refunded: succeeded(refunds),
    refunding: inFlight(refunds),
    paidOut: succeeded(payouts),
    payingOut: inFlight(payouts)
  }
}

/** What is left to send out whatever those in flight do: nothing counted twice, never below zero. */
export const unspent = (b: SettlementBalance): number => Math.max(0, b.settled - b.refunded - b.refunding - b.paidOut - b.payingOut)

/** The settlement's balance as stored; read under the order's lock so that it stands until the commit. */
export const readBalance = (order: Order, settlement: Transaction) =>
  Effect.gen(function*() {
    return balanceOf(order, settlement, yield* (yield* TransactionRepo).listByOrder(order.id))
  })
