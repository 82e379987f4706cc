/**
 * The value objects of the payment views as the API states them: capture method, subtypes and kinds,
 * addresses, the payment instrument, next actions, the customer, card-storage consent. Their home is
 * here, in the wire vocabulary; the domain's records carry the same schemas (its
 * payments/PaymentFields.ts re-exports them).
 */
import { Schema } from "effect"
import { Code, Email, Id, list, Name, Reference, Text, Url } from "./api/Bounded.ts"
import * as Limits from "./Limits.ts"

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
  line1: Schema.optional(Text),
  line2: Schema.optional(Text),
  city: Schema.optional(Text),
  state: Schema.optional(Text),
  postal_code: Schema.optional(Text),
  country: Schema.optional(Text)
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
  // Each field is bounded as the request fields it comes from (Bounded.ts); card details come from the vault and the BIN table.
  id: Schema.optional(Id),
  type: InstrumentType,
  country_code: Schema.optional(Code),
  holder_name: Schema.optional(Name),
  holder_email: Schema.optional(Email),
  holder_phone: Schema.optional(Text),
  document_id: Schema.optional(Text),
  holder_address: Schema.optional(Address),
  // bank_account
  iban: Schema.optional(Text),
  account_number: Schema.optional(Text),
  bic_swift: Schema.optional(Text),
  bank_code: Schema.optional(Text),
  branch_code: Schema.optional(Text),
  bank_name: Schema.optional(Text),
  account_type: Schema.optional(Text),
  // crypto_wallet
  wallet_address: Schema.optional(Text),
  // real_time_payment
  account_reference: Schema.optional(Text),
  // card
  card_brand: Schema.optional(Code),
  last4_digits: Schema.optional(Code),
  bin: Schema.optional(Code),
  card_funding: Schema.optional(Code),
  card_product: Schema.optional(Name),
  issuer_name: Schema.optional(Name)
})
export type PaymentInstrument = typeof PaymentInstrument.Type

/** A link the customer may open to pay (an app's or the web's). */
export const DeepLink = Schema.Struct({ label: Name, url: Url, target: Schema.Literals(["app", "web"]) })

/** What the customer must do next to complete a payment (redirect, QR, voucher, bank transfer, card or CVV). */
export const NextAction = Schema.Struct({
  type: Schema.Literals(["redirect", "qr", "voucher", "bank_transfer", "collect_cvv", "collect_card"]),
  redirect_url: Schema.optional(Url),
  expires_at: Schema.optional(Code),
  client_secret: Schema.optional(Reference),
  qr: Schema.optional(Schema.Struct({
    data: Schema.optional(Schema.String.check(Schema.isMaxLength(Limits.MAX_QR_DATA))),
    image_url: Schema.optional(Url),
    redirect_url: Schema.optional(Url),
    deep_links: Schema.optional(list(DeepLink)),
    address: Schema.optional(Text),
    amount: Schema.optional(Code)
  })),
  voucher: Schema.optional(Schema.Struct({
    document_url: Url,
    barcode: Schema.optional(Text),
    reference: Schema.optional(Text)
  })),
  bank_transfer: Schema.optional(Schema.Struct({
    clabe: Code,
    bank_name: Name,
    reference: Text,
    beneficiary: Name
  }))
})
/** What the customer must do next. */
export type NextAction = typeof NextAction.Type

/** The customer a payment names: contact details and address. */
export const Customer = Schema.Struct({
  email: Schema.optional(Email),
  name: Schema.optional(Name),
  /** Collected by the hosted page when the session asks (collect_phone, collect_address). */
  phone: Schema.optional(Text),
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
