/**
 * Orders and transactions: the records every payment flow writes. An order is the net result of a
 * payment across its attempts; a transaction is one attempt at the provider (payment,
 * authorization, capture, void). Amounts are integer minor units.
 */
import { Schema } from "effect"
import { AccountId, OrderId, TransactionId } from "../kernel/Ids.ts"
import { ORDER_STATUSES } from "./Order.ts"
import { TRANSACTION_STATUSES } from "./Transaction.ts"

export const CaptureMethod = Schema.Literals(["automatic", "manual"])
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

export const Address = Schema.Struct({
  line1: Schema.optional(Schema.String),
  line2: Schema.optional(Schema.String),
  city: Schema.optional(Schema.String),
  state: Schema.optional(Schema.String),
  postal_code: Schema.optional(Schema.String),
  country: Schema.optional(Schema.String)
})

/** An address as an instrument keeps it: its fields with no value dropped, and no address at all when none has one. */
export const presentAddress = (address: Partial<Record<keyof typeof Address.fields, string | undefined>> | undefined): typeof Address.Type | undefined => {
  if (address === undefined) return undefined
  const fields = Object.fromEntries(Object.entries(address).filter(([, v]) => v !== undefined))
  return Object.keys(fields).length === 0 ? undefined : fields
}

export const InstrumentType = Schema.Literals(["bank_account", "wallet", "crypto_wallet", "real_time_payment", "card"])
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

export const DeepLink = Schema.Struct({ label: Schema.String, url: Schema.String, target: Schema.Literals(["app", "web"]) })

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
export type NextAction = typeof NextAction.Type

export const Customer = Schema.Struct({
  email: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  /** Collected by the hosted page when the session asks (collect_phone, collect_address). */
  phone: Schema.optional(Schema.String),
  address: Schema.optional(Address)
})
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

export const Order = Schema.Struct({
  id: OrderId,
  account_id: AccountId,
  livemode: Schema.Boolean,
  merchant_reference: Schema.String,
  subtype: OrderSubtype,
  /** A checkout order's session (spec: `additional_identifiers` type `checkout`); null for direct payments. */
  checkout_session_id: Schema.NullOr(Schema.String),
  status: Schema.Literals(ORDER_STATUSES),
  amount: Schema.Int,
  currency: Schema.String,
  country: Schema.String,
  payment_method: Schema.String,
  capture_method: CaptureMethod,
  processing_profile: Schema.NullOr(Schema.String),
  customer: Schema.NullOr(Customer),
  success_url: Schema.NullOr(Schema.String),
  cancel_url: Schema.NullOr(Schema.String),
  /** The vaulted card the order charges (a token, never a number). */
  card_token: Schema.NullOr(Schema.String),
  /** Set once the order succeeded: the instrument of its final transaction (spec). */
  payment_instrument: Schema.NullOr(PaymentInstrument),
  /** Crypto under/overpayments: what actually arrived, until the merchant decides. */
  received_amount: Schema.NullOr(Schema.Int),
  /** What refunds have given back so far (succeeded refunds only), minor units; 0 until one does. */
  refunded_amount: Schema.Int,
  /** The customer record (`cus_…`) the payment names, if any. */
  customer_id: Schema.NullOr(Schema.String),
  /** The card-storage consent asserted for the payment, once one is (then only the same one is accepted). */
  card_storage_consent: Schema.NullOr(CardStorageConsent),
  /**
   * A direct payment's create request, as a SHA-256 of its canonical JSON (operations/Create.ts): how
   * a retry after a 502 is told from another request with the same reference. Null for other orders.
   */
  request_hash: Schema.NullOr(Schema.String),
  /**
   * Set while a direct payment whose create answered 502 `provider_unavailable` awaits the merchant's
   * retry (status `pending`): until then the same request attempts again; past it the order fails.
   */
  retry_until: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String,
  version: Schema.Int
})
export type Order = typeof Order.Type

/**
 * What the payer paid for an order: its amount, or what arrived when a crypto under- or overpayment
 * was reported (contract.md: "After an accepted crypto overpayment the refundable balance is what
 * arrived (less earlier refunds)"). The bound of `refunded_amount`, in the refund's decision
 * (operations/Original.ts, Refund.ts) and in storage alike (the orders' trigger, migrations 0028 and
 * 0036; the memory adapter's OrderRepo).
 */
export const arrivedAmount = (order: Pick<Order, "amount" | "received_amount">): number => order.received_amount ?? order.amount

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

export const Transaction = Schema.Struct({
  id: TransactionId,
  order_id: OrderId,
  account_id: AccountId,
  livemode: Schema.Boolean,
  kind: TransactionKind,
  status: Schema.Literals(TRANSACTION_STATUSES),
  amount: Schema.Int,
  currency: Schema.String,
  payment_method: Schema.String,
  processing_profile: Schema.NullOr(Schema.String),
  provider: Schema.String,
  /**
   * The channel the transaction went to (contract.md, Providers); null for the built-in sandbox.
   * Its follow-ups (capture, void, refund, 3-D Secure), reconciliation and notifications go there.
   */
  channel_id: Schema.NullOr(Schema.String),
  provider_transaction_id: Schema.NullOr(Schema.String),
  decline_code: Schema.NullOr(Schema.String),
  /** On every attempt that ran on a stored instrument, failed ones included (spec). */
  payment_instrument: Schema.NullOr(PaymentInstrument),
  /** Captures and voids point at their authorization. */
  parent_transaction_id: Schema.NullOr(TransactionId),
  /** Captures: whether this capture closes the authorization. */
  final: Schema.NullOr(Schema.Boolean),
  /** Authorizations: whether the provider granted multicapture. */
  multicapture: Schema.NullOr(Schema.Boolean),
  next_action: Schema.NullOr(NextAction),
  three_ds: Schema.NullOr(ThreeDsStatus),
  /**
   * Where a provider page of this attempt (the 3-D Secure challenge) sends the customer back to, when
   * the browser SDK's `redirect` display mode took the whole page there: `pay`'s return URL with
   * `tender_payment_id` appended. Null otherwise (the order's success_url / cancel_url apply). Not
   * part of any merchant API view.
   */
  customer_return_url: Schema.NullOr(Schema.String),
  /**
   * The attempt is the customer's in one of Tender's browser flows (the SDK's `pay`, a checkout
   * session): the customer's answer to its 3-D Secure challenge completes it at once (contract.md,
   * Browser SDK). False: the merchant's server created it with a token and shows the challenge itself,
   * then completes it (`3ds/complete`). Not part of any merchant API view.
   */
  browser_flow: Schema.Boolean,
  expires_at: Schema.NullOr(Schema.String),
  pending_call: Schema.NullOr(PendingCall),
  /**
   * While it awaits settlement (TransactionStatus.awaitsSettlement): when the settlement worker asks
   * the provider next, put off after a round that did not settle it (SettleDue.ts); null: due since
   * it was created. Not part of any merchant API view.
   */
  settlement_check_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String,
  version: Schema.Int
})
export type Transaction = typeof Transaction.Type

/**
 * Where a provider page of `txn` sends the customer once it ended (`good`: the payment can go on):
 * the browser SDK's return URL when its redirect mode brought them (one page either way: it re-reads
 * the payment), else the order's success_url or cancel_url.
 */
export const customerReturnUrl = (order: Order, txn: Transaction, good: boolean): string | null =>
  txn.customer_return_url ?? (good ? order.success_url : order.cancel_url)

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

/** Search filters (contract.md) shared by orders and transactions; `cursor` is opaque. */
export interface SearchQuery {
  readonly status?: ReadonlyArray<string> | undefined
  readonly created_from?: string | undefined
  readonly created_to?: string | undefined
  readonly processing_profile?: string | undefined
  readonly merchant_reference?: string | undefined
  readonly limit: number
  readonly cursor?: { readonly created_at: string; readonly id: string } | undefined
}

export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly has_more: boolean
}
