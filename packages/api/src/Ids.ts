/**
 * Identifiers on the wire: opaque, prefixed, random strings (`acct_…`, `ord_…`), each a branded
 * schema so an order id can never be passed where a transaction id is expected. The domain's records
 * carry the same schemas (its kernel/Ids.ts re-exports them beside the port that makes ids).
 */
import { Schema } from "effect"

export const ID_PREFIXES = {
  account: "acct",
  order: "ord",
  transaction: "txn",
  checkoutSession: "cs",
  paymentInstrument: "pi",
  cardToken: "tok",
  payout: "po",
  transfer: "tr",
  refund: "re",
  customer: "cus",
  webhookEndpoint: "we",
  webhookDelivery: "wd",
  event: "evt",
  request: "req",
  channel: "ch"
} as const

export type IdKind = keyof typeof ID_PREFIXES

/** An id of a prefix, unbranded: the form the server checks in a path. */
export const prefixed = (prefix: string) => Schema.String.check(Schema.isPattern(new RegExp(`^${prefix}_[A-Za-z0-9]{8,64}$`)))

export const AccountId = prefixed(ID_PREFIXES.account).pipe(Schema.brand("AccountId"))
export type AccountId = typeof AccountId.Type
export const OrderId = prefixed(ID_PREFIXES.order).pipe(Schema.brand("OrderId"))
export type OrderId = typeof OrderId.Type
export const TransactionId = prefixed(ID_PREFIXES.transaction).pipe(Schema.brand("TransactionId"))
export type TransactionId = typeof TransactionId.Type
export const CheckoutSessionId = prefixed(ID_PREFIXES.checkoutSession).pipe(Schema.brand("CheckoutSessionId"))
export type CheckoutSessionId = typeof CheckoutSessionId.Type
export const CardToken = prefixed(ID_PREFIXES.cardToken).pipe(Schema.brand("CardToken"))
export type CardToken = typeof CardToken.Type
export const PaymentInstrumentId = prefixed(ID_PREFIXES.paymentInstrument).pipe(Schema.brand("PaymentInstrumentId"))
export type PaymentInstrumentId = typeof PaymentInstrumentId.Type
export const CustomerId = prefixed(ID_PREFIXES.customer).pipe(Schema.brand("CustomerId"))
export type CustomerId = typeof CustomerId.Type
export const WebhookEndpointId = prefixed(ID_PREFIXES.webhookEndpoint).pipe(Schema.brand("WebhookEndpointId"))
export type WebhookEndpointId = typeof WebhookEndpointId.Type
export const WebhookDeliveryId = prefixed(ID_PREFIXES.webhookDelivery).pipe(Schema.brand("WebhookDeliveryId"))
export type WebhookDeliveryId = typeof WebhookDeliveryId.Type
export const EventId = prefixed(ID_PREFIXES.event).pipe(Schema.brand("EventId"))
export type EventId = typeof EventId.Type
export const ChannelId = prefixed(ID_PREFIXES.channel).pipe(Schema.brand("ChannelId"))
export type ChannelId = typeof ChannelId.Type
