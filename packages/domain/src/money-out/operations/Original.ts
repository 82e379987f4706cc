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
} from "../../kernel/Errors.ts"
import type { Order, Transaction } from "../../payments/Payment.ts"
import { OrderRepo, TransactionRepo } from "../../payments/PaymentPorts.ts"
import { orderByReference } from "../../payments/operations/Target.ts"

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

/** A settlement: a completed payment, or one completed capture (what Balance.ts keeps the books of). */
const isSettlement = (t: Transaction) => settled("payment")(t) || settled("capture")(t)

/**
 * The order's one settlement, or why there is none to pick: an order captured in parts names the
 * capture by its transaction_id (spec: "a payment captured in parts must be refunded by the
 * transaction_id of the capture"; a payout reverses one settlement the same way, so the same code).
 */
const oneSettlement = (verb: string) => (order: Order, txns: ReadonlyArray<Transaction>) => {
  if (order.subtype === "transfer") return undefined
  const captures = txns.filter(settled("capture"))
  if (captures.length > 1) {
    return new RefundRequiresTransactionTarget({
      message: `Order ${order.id} was captured in ${captures.length} parts; name the capture to ${verb} by its transaction_id`
    })
  }
  return captures[0] ?? txns.find(settled("payment"))
}

/**
 * spec: "A refund reverses exactly one settlement; a payment captured in parts must be refunded by
 * the transaction_id of the capture."
 */
export const refundable: Eligibility = {
  verb: "refund",
  accepts: (order, t) => order.subtype !== "transfer" && isSettlement(t),
  pick: oneSettlement("refund"),
  standsForOrder: (t) => t.kind === "authorization"
}

/**
 * spec: "a payout references the original payment and reuses its instrument": a settlement of a card
 * payment on a stored card (the order's card token, the attempt's instrument, which its captures
 * carry). A payout is money back out of one settlement as a refund is, so it names one the same way
 * and both draw on its one balance (Balance.ts): an authorization's id stands for its capture, an
 * authorization never captured, or voided whole, has none.
 */
export const payable: Eligibility = {
  verb: "payout",
  accepts: (order, t) => order.subtype !== "transfer" && order.card_token !== null && t.payment_instrument !== null && isSettlement(t),
  pick: (order, txns) => {
    const picked = oneSettlement("pay out against")(order, txns)
    return picked === undefined || picked instanceof RefundRequiresTransactionTarget || payable.accepts(order, picked) ? picked : undefined
  },
  standsForOrder: (t) => t.kind === "authorization"
}

const notEligible = (eligibility: Eligibility, what: string) =>
  new OriginalTransactionNotEligible({
    message: eligibility.verb === "refund"
      ? `${what} has no settlement to refund: a completed payment or capture is required`
      : `${what} has no settlement of a card payment on a stored card to pay out against: a completed payment or capture is required`
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
