/**
 * Identifiers on the wire: opaque, prefixed, random strings (`acct_…`, `ord_…`), each a branded
 * schema so an order id can never be passed where a transaction id is expected. The domain's records
 * carry the same schemas (its kernel/Ids.ts re-exports them beside the port that makes ids).
 */
import { Schema } from "effect"
import { MAX_ID } from "./Limits.ts"

/** Each kind of id and its prefix (`acct`, `ord`, …). */
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
  channel: "ch",
  /** A console operator (issue 26). */
  operator: "op",
  /** An entry of the console's audit log. */
  auditEntry: "aud"
} as const

/** A kind of id (`account`, `order`, …). */
export type IdKind = keyof typeof ID_PREFIXES

/**
 * An id of a prefix, unbranded: the form the server checks in a path. The pattern bounds it already;
 * the document states the length too (OWASP's string-limit reads maxLength, not a pattern).
 */
export const prefixed = (prefix: string) =>
  Schema.String.check(Schema.isMaxLength(MAX_ID), Schema.isPattern(new RegExp(`^${prefix}_[A-Za-z0-9]{8,64}$`)))

/** An account id (`acct_…`). */
export const AccountId = prefixed(ID_PREFIXES.account).pipe(Schema.brand("AccountId"))
/** An account id. */
export type AccountId = typeof AccountId.Type
/** An order (payment) id (`ord_…`). */
export const OrderId = prefixed(ID_PREFIXES.order).pipe(Schema.brand("OrderId"))
/** An order (payment) id. */
export type OrderId = typeof OrderId.Type
/** A transaction id. */
export const TransactionId = prefixed(ID_PREFIXES.transaction).pipe(Schema.brand("TransactionId"))
/** A transaction id. */
export type TransactionId = typeof TransactionId.Type
/** A checkout session id. */
export const CheckoutSessionId = prefixed(ID_PREFIXES.checkoutSession).pipe(Schema.brand("CheckoutSessionId"))
/** A checkout session id. */
export type CheckoutSessionId = typeof CheckoutSessionId.Type
/** A vaulted card's token (`tok_…`). */
export const CardToken = prefixed(ID_PREFIXES.cardToken).pipe(Schema.brand("CardToken"))
/** A vaulted card's token. */
export type CardToken = typeof CardToken.Type
/** A stored payment instrument's id (`pi_…`). */
export const PaymentInstrumentId = prefixed(ID_PREFIXES.paymentInstrument).pipe(Schema.brand("PaymentInstrumentId"))
/** A stored payment instrument's id. */
export type PaymentInstrumentId = typeof PaymentInstrumentId.Type
/** A customer id. */
export const CustomerId = prefixed(ID_PREFIXES.customer).pipe(Schema.brand("CustomerId"))
/** A customer id. */
export type CustomerId = typeof CustomerId.Type
/** A webhook endpoint id. */
export const WebhookEndpointId = prefixed(ID_PREFIXES.webhookEndpoint).pipe(Schema.brand("WebhookEndpointId"))
/** A webhook endpoint id. */
export type WebhookEndpointId = typeof WebhookEndpointId.Type
/** A webhook delivery id. */
export const WebhookDeliveryId = prefixed(ID_PREFIXES.webhookDelivery).pipe(Schema.brand("WebhookDeliveryId"))
/** A webhook delivery id. */
export type WebhookDeliveryId = typeof WebhookDeliveryId.Type
/** An event id (`evt_…`). */
export const EventId = prefixed(ID_PREFIXES.event).pipe(Schema.brand("EventId"))
/** An event id. */
export type EventId = typeof EventId.Type
/** A channel id. */
export const ChannelId = prefixed(ID_PREFIXES.channel).pipe(Schema.brand("ChannelId"))
/** A channel id. */
export type ChannelId = typeof ChannelId.Type
