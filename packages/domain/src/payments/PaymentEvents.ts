/**
 * Event payloads: the payment snapshot fields at emission time, plus what the spec names per event
 * (`payment_instrument` where the API has it; `captured_amount`, `capture_transaction_id`,
 * `capture_provider_transaction_id` for manual capture), and the transaction's `routing` when it has one.
 */
import type { Order, Transaction } from "./Payment.ts"
import { identifiersOf, major, routingOf, settlementReference } from "./PaymentViews.ts"

export type PaymentEventType =
  | "payment.succeeded"
  | "payment.failed"
  | "payment.requires_action"
  | "payment.authorized"
  | "payment.partially_captured"
  | "payment.capture_failed"
  | "payment.canceled"
  | "payment.underpaid"
  | "payment.overpaid"
  | "payment.returned"
  // contract.md, Webhook endpoints: events beyond the spec's list (their tables' `emits`: MoneyOut.ts)
  | "refund.succeeded"
  | "refund.failed"
  | "payout.succeeded"
  | "payout.failed"
  | "transfer.succeeded"
  | "transfer.failed"

export interface CaptureFacts {
  readonly captured: number
  readonly capture: Transaction | undefined
}

export const eventData = (
  order: Order,
  transaction: Transaction,
  extra: { readonly capture?: CaptureFacts; readonly voided?: number; readonly received?: number } = {}
): Record<string, unknown> => ({
  order_id: order.id,
  transaction_id: transaction.id,
  merchant_reference: order.merchant_reference,
  subtype: order.subtype,
  order_status: order.status,
  transaction_status: transaction.status,
  amount: major(order.amount, order.currency),
  currency: order.currency,
  payment_method: order.payment_method,
  capture_method: order.capture_method,
  provider_transaction_id: settlementReference(transaction),
  additional_identifiers: identifiersOf(order),
  ...(transaction.decline_code !== null ? { decline_code: transaction.decline_code } : {}),
  ...(transaction.next_action !== null && transaction.status !== "completed" ? { next_action: transaction.next_action } : {}),
  ...(transaction.payment_instrument !== null ? { payment_instrument: transaction.payment_instrument } : {}),
  // issue 27: how the event's transaction was routed, when it was
  ...routingOf(transaction),
  ...(extra.capture !== undefined
    ? {
      captured_amount: major(extra.capture.captured, order.currency),
      ...(extra.capture.capture !== undefined
        ? {
          capture_transaction_id: extra.capture.capture.id,
          capture_provider_transaction_id: settlementReference(extra.capture.capture)
        }
        : {})
    }
    : {}),
  ...(extra.voided !== undefined ? { voided_amount: major(extra.voided, order.currency) } : {}),
  ...(extra.received !== undefined ? { received_amount: major(extra.received, order.currency) } : {})
})
