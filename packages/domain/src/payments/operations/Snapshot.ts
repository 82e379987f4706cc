/**
 * What a payment operation answers: the payment snapshot of one attempt (the status a verb reports),
 * and orders viewed with their transactions (a page of them in one read, no N+1).
 */
import { Effect } from "effect"
import type { Order } from "../Order.ts"
import { TransactionRepo } from "../PaymentPorts.ts"
import { identifiersOf, major, orderView, type PaymentSnapshot, settlementReference } from "../PaymentViews.ts"
import type { Transaction } from "../Transaction.ts"

const paymentStatus = (order: Order): PaymentSnapshot["status"] => {
  switch (order.status) {
    case "succeeded":
      return "completed"
    case "authorized":
      return "authorized"
    case "canceled":
      return "canceled"
    case "failed":
    case "returned":
      return "failed"
    default:
      return "requires_action"
  }
}

export const snapshot = (
  order: Order,
  txn: Transaction,
  /** `as`: the payment status to show when the verb's own outcome differs from the order's (a refused capture). */
  extra: { readonly as?: PaymentSnapshot["status"] | undefined; readonly captured?: number; readonly voided?: number } = {}
): PaymentSnapshot => {
  const status = extra.as ?? paymentStatus(order)
  return {
    order_id: order.id,
    transaction_id: txn.id,
    merchant_reference: order.merchant_reference,
    status,
    amount: major(order.amount, order.currency),
    currency: order.currency,
    provider_transaction_id: settlementReference(txn),
    additional_identifiers: identifiersOf(order),
    next_action: status === "requires_action" ? txn.next_action : null,
    ...(order.processing_profile !== null ? { processing_profile: order.processing_profile } : {}),
    ...(extra.captured !== undefined ? { captured_amount: major(extra.captured, order.currency) } : {}),
    ...(extra.voided !== undefined ? { voided_amount: major(extra.voided, order.currency) } : {})
  }
}

export const capturedOf = (txns: ReadonlyArray<Transaction>) =>
  txns.filter((t) => t.kind === "capture" && t.status === "completed").reduce((sum, t) => sum + t.amount, 0)

const viewWith = (order: Order, txns: ReadonlyArray<Transaction>) =>
  orderView(order, txns, order.capture_method === "manual" && order.status !== "pending" ? capturedOf(txns) : undefined)

export const viewOrder = (order: Order) =>
  Effect.gen(function*() {
    return viewWith(order, yield* (yield* TransactionRepo).listByOrder(order.id))
  })

/** A page of orders viewed with one read of all their transactions, not one per order (no N+1). */
export const viewOrders = (orders: ReadonlyArray<Order>) =>
  Effect.gen(function*() {
    const txns = yield* (yield* TransactionRepo).listByOrders(orders.map((o) => o.id))
    const byOrder = new Map<string, Array<Transaction>>()
    for (const t of txns) byOrder.set(t.order_id, [...byOrder.get(t.order_id) ?? [], t])
    return orders.map((order) => viewWith(order, byOrder.get(order.id) ?? []))
  })

