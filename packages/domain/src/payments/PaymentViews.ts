/**
 * The API's views of orders, transactions and payment snapshots, derived from the stored rows.
 * Amounts leave as JSON numbers in major units (spec: response amounts are numbers).
 */
import * as Money from "../kernel/Money.ts"
import type * as Views from "@tender/api/Views"
import type { Order, Transaction } from "./Payment.ts"

// The views are the API's (@tender/api/Views): one shape each, built here from the records.
/** Another id a payment is known by: its order, and its checkout session if any. */
export type AdditionalIdentifier = typeof Views.AdditionalIdentifier.Type

/** The spec's Payment object (POST /v1/payments, capture, void, 3ds/complete). */
export type PaymentSnapshot = typeof Views.PaymentSnapshot.Type

/** An order as the API shows it (@tender/api/Views). */
export type OrderView = typeof Views.OrderView.Type

/**
 * A transaction's subtype: its order's (direct_payment, checkout, transfer), except money given back
 * from a payment, which says what it is (contract.md: "a refund is also a transaction of the order
 * (subtype `refund`)"; a payout to the payment's instrument likewise `payout`).
 */
export type TransactionSubtype = Order["subtype"] | "refund" | "payout"

/** The subtype a transaction shows: `refund` or `payout` for those, else its order's. */
export const subtypeOf = (order: Order, t: Transaction): TransactionSubtype =>
  t.kind === "refund" || t.kind === "payout" ? t.kind : order.subtype

/** A transaction as the API shows it (@tender/api/Views). */
export type TransactionView = typeof Views.TransactionView.Type

/** Minor units as the API's JSON number in the currency's major units. */
export const major = (minor: number, currency: string) => Money.toMajor(minor, currency)

/**
 * spec, Payment: provider_transaction_id is the "Settlement/charge reference; null before
 * settlement". We keep the provider's reference from its first answer (follow-ups and reconciliation
 * need it) and show it once the transaction settled: a completed payment or capture.
 */
export const settlementReference = (t: Transaction): string | null =>
  t.status === "completed" && (t.kind === "payment" || t.kind === "capture") ? t.provider_transaction_id : null

/** spec, Payment: "Items of {identifier: string, type: checkout or order}": the order, and its session if any. */
export const identifiersOf = (order: Order): ReadonlyArray<AdditionalIdentifier> => [
  { identifier: order.id, type: "order" },
  ...(order.checkout_session_id !== null ? [{ identifier: order.checkout_session_id, type: "checkout" as const }] : [])
]

/** A stored order and its transactions as the API shows them. */
export const orderView = (
  order: Order,
  transactions: ReadonlyArray<Transaction>,
  capturedMinor: number | undefined
): OrderView => ({
  id: order.id,
  merchant_reference: order.merchant_reference,
  subtype: order.subtype,
  status: order.status,
  amount: major(order.amount, order.currency),
  currency: order.currency,
  country: order.country,
  payment_method: order.payment_method,
  capture_method: order.capture_method,
  processing_profile: order.processing_profile,
  livemode: order.livemode,
  // spec: only once the order has succeeded; a pending or failed order carries none
  ...(order.status === "succeeded" && order.payment_instrument !== null ? { payment_instrument: order.payment_instrument } : {}),
  ...(capturedMinor !== undefined ? { captured_amount: major(capturedMinor, order.currency) } : {}),
  ...(order.refunded_amount > 0 ? { refunded_amount: major(order.refunded_amount, order.currency) } : {}),
  ...(order.customer_id !== null ? { customer_id: order.customer_id } : {}),
  ...(order.card_storage_consent !== null ? { card_storage_consent: order.card_storage_consent } : {}),
  transactions: transactions.map((t) => t.id),
  additional_identifiers: identifiersOf(order),
  created_at: order.created_at,
  updated_at: order.updated_at
})

/**
 * A transaction's `routing` for a view or an event's data, when it has one: exactly the recorded
 * keys (rule, version, candidates, channel, reason, attempt). Typed as the view's, so a reason the
 * domain adds and the API does not document fails to compile.
 */
export const routingOf = (t: Transaction): { readonly routing?: TransactionView["routing"] } =>
  t.routing === null
    ? {}
    : {
      routing: {
        rule: t.routing.rule,
        version: t.routing.version,
        candidates: t.routing.candidates,
        channel: t.routing.channel,
        reason: t.routing.reason,
        attempt: t.routing.attempt
      }
    }

/** A stored transaction as the API shows it, with its order's reference. */
export const transactionView = (order: Order, t: Transaction): TransactionView => ({
  id: t.id,
  order_id: t.order_id,
  merchant_reference: order.merchant_reference,
  subtype: subtypeOf(order, t),
  kind: t.kind,
  status: t.status,
  amount: major(t.amount, t.currency),
  currency: t.currency,
  payment_method: t.payment_method,
  processing_profile: t.processing_profile,
  provider: t.provider,
  provider_transaction_id: settlementReference(t),
  decline_code: t.decline_code,
  parent_transaction_id: t.parent_transaction_id,
  // spec: on every attempt that ran on a stored instrument, failed ones included
  ...(t.payment_instrument !== null ? { payment_instrument: t.payment_instrument } : {}),
  // issue 27: how a new payment's attempt was routed; follow-ups and the sandbox carry none
  ...routingOf(t),
  additional_identifiers: identifiersOf(order),
  created_at: t.created_at,
  updated_at: t.updated_at
})
