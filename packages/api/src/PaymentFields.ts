/**
 * The value objects of the payment views as the API states them: capture method, subtypes and kinds,
 * addresses, the payment instrument, next actions, the customer, card-storage consent. Their home is
 * here, in the wire vocabulary; the domain's records carry the same schemas (its
 * payments/PaymentFields.ts re-exports them).
 */
import { Schema } from "effect"

/** `automatic` captures on authorization; `manual` holds the funds until captured or voided. */
export const CaptureMethod = Schema.Literals(["automatic", "manual"])
/** How a payment is captured. */
export type CaptureMethod = typeof CaptureMethod.Type
/** `transfer`: an order that sends money to a destination instrument (POST /v1/transfers). */
export const OrderSubtype = Schema.Literals(["direct_payment", "checkout", "transfer"])
export type OrderSubtype = typeof OrderSubtype.Type
/**
 * Money in (`payment`, `authorization` and its `capture`s and `void`), and money back out: a
 * `refund` of one settlement, a `payout` to the instrument of an original payment, a `transfer` to a
 * destination instrument (a transfer order's one attempt).
 */
export const TransactionKind = Schema.Literals(["payment", "authorization", "capture", "void", "refund", "payout", "transfer"])
export type TransactionKind = typeof TransactionKind.Type

/** A postal address; every field optional. */
export const Address = Schema.Struct({
  line1: Schema.optional(Schema.String),
  line2: Schema.optional(Schema.String),
  city: Schema.optional(Schema.String),
  state: Schema.optional(Schema.String),
  postal_code: Schema.optional(Schema.String),
  country: Schema.optional(Schema.String)
})

/** The kind of a payment instrument (bank account, wallet, crypto wallet, real-time payment, card). */
export const InstrumentType = Schema.Literals(["bank_account", "wallet", "crypto_wallet", "real_time_payment", "card"])
/** The kind of a payment instrument. */
export type InstrumentType = typeof InstrumentType.Type

/**
 * The spec's payment instrument as returned: fields with no value are omitted, destination fields
 * are top level. Never a card token or a card expiry (spec: "never returned on an instrument").
 */
export const PaymentInstrument = Schema.Struct({
  /** `pi_…`: the stored instrument's id. */
  id: Schema.optional(Schema.String),
  type: InstrumentType,
  country_code: Schema.optional(Schema.String),
  holder_name: Schema.optional(Schema.String),
  holder_email: Schema.optional(Schema.String),
  holder_phone: Schema.optional(Schema.String),
  document_id: Schema.optional(Schema.String),
  holder_address: Schema.optional(Address),
  // bank_account
  iban: Schema.optional(Schema.String),
  account_number: Schema.optional(Schema.String),
  bic_swift: Schema.optional(Schema.String),
  bank_code: Schema.optional(Schema.String),
  branch_code: Schema.optional(Schema.String),
  bank_name: Schema.optional(Schema.String),
  account_type: Schema.optional(Schema.String),
  // crypto_wallet
  wallet_address: Schema.optional(Schema.String),
  // real_time_payment
  account_reference: Schema.optional(Schema.String),
  // card
  card_brand: Schema.optional(Schema.String),
  last4_digits: Schema.optional(Schema.String),
  bin: Schema.optional(Schema.String),
  card_funding: Schema.optional(Schema.String),
  card_product: Schema.optional(Schema.String),
  issuer_name: Schema.optional(Schema.String)
})
export type PaymentInstrument = typeof PaymentInstrument.Type

/** A link the customer may open to pay (an app's or the web's). */
export const DeepLink = Schema.Struct({ label: Schema.String, url: Schema.String, target: Schema.Literals(["app", "web"]) })

/** What the customer must do next to complete a payment (redirect, QR, voucher, bank transfer, card or CVV). */
export const NextAction = Schema.Struct({
  type: Schema.Literals(["redirect", "qr", "voucher", "bank_transfer", "collect_cvv", "collect_card"]),
  redirect_url: Schema.optional(Schema.String),
  expires_at: Schema.optional(Schema.String),
  client_secret: Schema.optional(Schema.String),
  qr: Schema.optional(Schema.Struct({
    data: Schema.optional(Schema.String),
    image_url: Schema.optional(Schema.String),
    redirect_url: Schema.optional(Schema.String),
    deep_links: Schema.optional(Schema.Array(DeepLink)),
    address: Schema.optional(Schema.String),
    amount: Schema.optional(Schema.String)
  })),
  voucher: Schema.optional(Schema.Struct({
    document_url: Schema.String,
    barcode: Schema.optional(Schema.String),
    reference: Schema.optional(Schema.String)
  })),
  bank_transfer: Schema.optional(Schema.Struct({
    clabe: Schema.String,
    bank_name: Schema.String,
    reference: Schema.String,
    beneficiary: Schema.String
  }))
})
/** What the customer must do next. */
export type NextAction = typeof NextAction.Type

/** The customer a payment names: contact details and address. */
export const Customer = Schema.Struct({
  email: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  /** Collected by the hosted page when the session asks (collect_phone, collect_address). */
  phone: Schema.optional(Schema.String),
  address: Schema.optional(Address)
})
/** The customer a payment names. */
export type Customer = typeof Customer.Type

/**
 * Card-storage consent (spec: consent_conflict): whether the customer agreed that the card be kept
 * for later charges, and for what use. Asserting a different one for a payment that has one is a
 * conflict; the identical one is accepted again.
 */
export const CardStorageConsent = Schema.Struct({
  granted: Schema.Boolean,
  usage: Schema.optional(Schema.Literals(["one_click", "recurring", "unscheduled"]))
})
export type CardStorageConsent = typeof CardStorageConsent.Type
