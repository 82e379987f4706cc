/**
 * The value objects of a payment's records (payments/Order.ts, payments/Transaction.ts): capture
 * method, subtypes and kinds, addresses, the payment instrument, next actions, the customer, card
 * storage consent, a reserved provider call; the recorded event and search pages.
 */
import { Schema } from "effect"
import { Address } from "@tender/api/PaymentFields"

// The view value objects are the wire's (@tender/api/PaymentFields): one home, which the records carry.
export {
  Address,
  CaptureMethod,
  CardStorageConsent,
  Customer,
  DeepLink,
  InstrumentType,
  NextAction,
  OrderSubtype,
  PaymentInstrument,
  TransactionKind
} from "@tender/api/PaymentFields"

/** An address as an instrument keeps it: its fields with no value dropped, and no address at all when none has one. */
export const presentAddress = (address: Partial<Record<keyof typeof Address.fields, string | undefined>> | undefined): typeof Address.Type | undefined => {
  if (address === undefined) return undefined
  const fields = Object.fromEntries(Object.entries(address).filter(([, v]) => v !== undefined))
  return Object.keys(fields).length === 0 ? undefined : fields
}

/** Where a 3-D Secure challenge stands: required, approved or denied. */
export const ThreeDsStatus = Schema.Literals(["required", "approved", "denied"])

/**
 * A provider call reserved and not yet recorded: its idempotency key, what it does, and when it was
 * reserved. Set in the unit of work that reserves, cleared by the one that records; a row left with
 * one (a crash, a timeout) is what the reconciliation worker asks the provider about.
 */
export const PendingCall = Schema.Struct({
  key: Schema.String,
  operation: Schema.Literals(["authorize", "capture", "void", "start", "refund", "payout"]),
  at: Schema.String,
  /** A merchant-initiated charge (no customer present). */
  merchant_initiated: Schema.optional(Schema.Boolean),
  /** When reconciliation asks again, after a lookup the provider could not answer (a backoff). */
  retry_at: Schema.optional(Schema.String)
})
export type PendingCall = typeof PendingCall.Type

/** A recorded event: the outbox row webhooks deliver from. `data` is the payload at emission time. */
export const PaymentEvent = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  type: Schema.String,
  created_at: Schema.String,
  livemode: Schema.Boolean,
  processing_profile: Schema.NullOr(Schema.String),
  order_id: Schema.NullOr(Schema.String),
  data: Schema.Record(Schema.String, Schema.Unknown)
})
export type PaymentEvent = typeof PaymentEvent.Type
