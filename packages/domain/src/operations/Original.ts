/**
 * Which original transaction a refund or a payout names: exactly one of `order_id`,
 * `transaction_id` or `merchant_reference` (spec: "the original transaction is targeted by exactly
 * one of…"), in the account. Refunds and payouts resolve the same way; each verb says which
 * transactions it accepts (`Eligibility`).
 *
 * A reference held by more than one order is refused (`merchant_reference_ambiguous`), never
 * guessed, as for captures and voids (Target.orderByReference).
 */
import { Effect, Option } from "effect"
import {
  AmbiguousOriginalTransactionTarget,
  OriginalTransactionNotEligible,
  OriginalTransactionNotFound,
  RefundRequiresTransactionTarget
} from "../Errors.ts"
import type { Order, Transaction } from "../Payment.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"
import { orderByReference } from "./Target.ts"

export interface OriginalTarget {
  readonly order_id?: string | undefined
  readonly transaction_id?: string | undefined
  readonly merchant_reference?: string | undefined
  /** The channel the caller believes holds the original; another is `transaction_provider_mismatch`. */
  readonly channel_id?: string | undefined
}

const IDENTIFIERS = ["order_id", "transaction_id", "merchant_reference"] as const

export interface Original {
  readonly order: Order
  readonly original: Transaction
}

/** A verb's rule for originals: what a `transaction_id` may name, and what an order offers. */
export interface Eligibility {
  readonly verb: "refund" | "payout"
  readonly accepts: (order: Order, txn: Transaction) => boolean
  /** The order's one original for this verb; `undefined` when it has none. */
  readonly pick: (order: Order, txns: ReadonlyArray<Transaction>) => Transaction | undefined | RefundRequiresTransactionTarget
  /**
   * A transaction id that names its whole order for this verb, as the order id would: a manual-capture
   * authorization's id (the one its create answered) stands for its captures, the settlements.
   */
  readonly standsForOrder?: (txn: Transaction) => boolean
}

const settled = (kind: Transaction["kind"]) => (t: Transaction) => t.kind === kind && t.status === "completed"

/**
 * spec: "A refund reverses exactly one settlement; a payment captured in parts must be refunded by
 * the transaction_id of the capture." A settlement is a completed payment or one completed capture.
 */
export const refundable: Eligibility = {
  verb: "refund",
  accepts: (order, t) => order.subtype !== "transfer" && (settled("payment")(t) || settled("capture")(t)),
  pick: (order, txns) => {
    if (order.subtype === "transfer") return undefined
    const captures = txns.filter(settled("capture"))
    if (captures.length > 1) {
      return new RefundRequiresTransactionTarget({
        message: `Order ${order.id} was captured in ${captures.length} parts; name the capture to refund by its transaction_id`
      })
    }
    return captures[0] ?? txns.find(settled("payment"))
  },
  standsForOrder: (t) => t.kind === "authorization"
}

/**
 * What a settlement took from the payer: a payment's amount, unless a crypto under- or overpayment
 * was accepted, when what arrived is what was settled (and all a refund can give back).
 */
export const settledAmount = (order: Order, original: Transaction): number =>
  original.kind === "payment" && order.received_amount !== null ? order.received_amount : original.amount

/**
 * spec: "a payout references the original payment and reuses its instrument": a payment or an
 * authorization that succeeded on a stored card (the order's card token and the attempt's instrument).
 * Whether it settled, and what is left of it, the payout checks under the order's lock
 * (Payout.planPayout): an authorization never captured, or voided whole, has nothing to pay out against.
 */
export const payable: Eligibility = {
  verb: "payout",
  accepts: (order, t) =>
    order.subtype !== "transfer" && order.card_token !== null && t.payment_instrument !== null &&
    (settled("payment")(t) || settled("authorization")(t)),
  pick: (order, txns) => [...txns].reverse().find((t) => payable.accepts(order, t))
}

const notEligible = (eligibility: Eligibility, what: string) =>
  new OriginalTransactionNotEligible({
    message: eligibility.verb === "refund"
      ? `${what} has no settlement to refund: a completed payment or capture is required`
      : `${what} is not a succeeded card payment on a stored card, so it has no instrument to pay out to`
  })

/** spec: exactly one of order_id, transaction_id, merchant_reference names the original. */
export const requireOneTarget = (target: OriginalTarget) => {
  const given = IDENTIFIERS.filter((k) => target[k] !== undefined)
  return given.length === 1 ? Effect.void : Effect.fail(
    new AmbiguousOriginalTransactionTarget({
      message: `Name the original transaction with exactly one of order_id, transaction_id, merchant_reference (${given.length} given)`
    })
  )
}

/** The order and the original transaction the target names, as the verb accepts it. */
export const resolveOriginal = (accountId: string, target: OriginalTarget, eligibility: Eligibility) =>
  Effect.gen(function*() {
    yield* requireOneTarget(target)
    const orders = yield* OrderRepo
    const transactions = yield* TransactionRepo
    const orderOf = (id: string) => Effect.map(orders.find(accountId, id), Option.getOrUndefined)
    if (target.transaction_id !== undefined) {
      const txn = Option.getOrUndefined(yield* transactions.find(accountId, target.transaction_id))
      const order = txn === undefined ? undefined : yield* orderOf(txn.order_id)
      if (txn === undefined || order === undefined) {
        return yield* new OriginalTransactionNotFound({ message: `No transaction ${target.transaction_id}` })
      }
      if (eligibility.accepts(order, txn)) return { order, original: txn } satisfies Original
      if (eligibility.standsForOrder?.(txn) !== true) return yield* notEligible(eligibility, `Transaction ${txn.id} (${txn.kind}, ${txn.status})`)
      return yield* pickOf(order, eligibility)
    }
    let order: Order | undefined
    if (target.order_id !== undefined) {
      order = yield* orderOf(target.order_id)
      if (order === undefined) return yield* new OriginalTransactionNotFound({ message: `No order ${target.order_id}` })
    } else {
      order = yield* orderByReference(accountId, target.merchant_reference!, (message) => new OriginalTransactionNotFound({ message }))
    }
    return yield* pickOf(order, eligibility)
  })

const pickOf = (order: Order, eligibility: Eligibility) =>
  Effect.gen(function*() {
    const picked = eligibility.pick(order, yield* (yield* TransactionRepo).listByOrder(order.id))
    if (picked instanceof RefundRequiresTransactionTarget) return yield* picked
    if (picked === undefined) return yield* notEligible(eligibility, `Order ${order.id} (${order.status})`)
    return { order, original: picked } satisfies Original
  })
