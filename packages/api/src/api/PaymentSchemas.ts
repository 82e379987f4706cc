/**
 * Wire schemas of the payment resources, for decoding requests and documenting responses. The
 * domain's views (PaymentViews.ts) are these schemas' types (Views.ts): one shape, written here.
 */
import { Schema } from "effect"
import * as Payment from "../PaymentFields.ts"
import { ORDER_STATUSES, TRANSACTION_STATUSES } from "../Statuses.ts"
import * as Limits from "../Limits.ts"
import { Code, Email, Id, Int, int, list, Name, Reference, Text, Url } from "./Bounded.ts"

const optional = Schema.optional

const IdentifierType = Schema.Literals(["checkout", "order"])
/** Another id a payment is known by: its order, or its checkout session. */
export const AdditionalIdentifier = Schema.Struct({ identifier: Id, type: IdentifierType })
/** At most one of each type: the order's own id and, for a checkout, its session's. */
const AdditionalIdentifiers = list(AdditionalIdentifier, IdentifierType.literals.length)

/** The spec's Payment object: what create, capture, void and 3-D Secure completion answer. */
export const PaymentSnapshot = Schema.Struct({
  order_id: Id,
  transaction_id: Id,
  merchant_reference: Reference,
  status: Schema.Literals(["requires_action", "completed", "failed", "authorized", "settling", "canceled"]),
  amount: Schema.Number,
  currency: Code,
  provider_transaction_id: Schema.NullOr(Reference),
  additional_identifiers: AdditionalIdentifiers,
  next_action: Schema.NullOr(Payment.NextAction),
  processing_profile: optional(Reference),
  captured_amount: optional(Schema.Number),
  voided_amount: optional(Schema.Number)
})

/** A payment (order) as the API answers it, naming its transactions. */
export const OrderView = Schema.Struct({
  id: Id,
  merchant_reference: Reference,
  subtype: Payment.OrderSubtype,
  status: Schema.Literals(ORDER_STATUSES),
  amount: Schema.Number,
  currency: Code,
  country: Code,
  payment_method: Code,
  capture_method: Payment.CaptureMethod,
  processing_profile: Schema.NullOr(Reference),
  livemode: Schema.Boolean,
  payment_instrument: optional(Payment.PaymentInstrument),
  captured_amount: optional(Schema.Number),
  /** contract.md: once anything is refunded. */
  refunded_amount: optional(Schema.Number),
  customer_id: optional(Reference),
  card_storage_consent: optional(Payment.CardStorageConsent),
  /**
   * Every transaction of the order, oldest first. Not bounded in count: each capture, refund and
   * payout adds one, limited by the amount left, not by a number (docs/decisions.md, "OpenAPI
   * document and the OWASP rules").
   */
  transactions: Schema.Array(Id),
  additional_identifiers: AdditionalIdentifiers,
  created_at: Code,
  updated_at: Code
}).annotate({ identifier: "OrderView" })

/**
 * How a new payment's attempt was routed (issue 27, contract.md `routing`): the rule that decided
 * (null: the default, or no rules) and the rules' version (0: none set), the candidate channels as
 * ranked, the channel it went to, why, and which try of the payment it is (2: a cascade or a smart
 * retry). The reasons are the domain's (RoutingModel.ROUTING_REASONS; PaymentViews checks they agree).
 */
export const RoutingView = Schema.Struct({
  rule: Schema.NullOr(Reference),
  version: Int,
  candidates: list(Reference),
  channel: Reference,
  reason: Schema.Literals(["rule", "split", "success_rate", "exploration", "breaker", "default", "retry"]),
  attempt: Int
})

/** A transaction as the API answers it. */
export const TransactionView = Schema.Struct({
  id: Id,
  order_id: Id,
  merchant_reference: Reference,
  subtype: Schema.Literals([...Payment.OrderSubtype.literals, "refund", "payout"]),
  kind: Payment.TransactionKind,
  status: Schema.Literals(TRANSACTION_STATUSES),
  amount: Schema.Number,
  currency: Code,
  payment_method: Code,
  processing_profile: Schema.NullOr(Reference),
  provider: Code,
  provider_transaction_id: Schema.NullOr(Reference),
  decline_code: Schema.NullOr(Reference),
  parent_transaction_id: Schema.NullOr(Id),
  payment_instrument: optional(Payment.PaymentInstrument),
  /** A new payment's attempt routed over the account's channels (absent on follow-ups and the sandbox). */
  routing: optional(RoutingView),
  additional_identifiers: AdditionalIdentifiers,
  created_at: Code,
  updated_at: Code
})

/** A card as the customer types it (the hosted form, the test helpers). */
export const CardRequest = Schema.Struct({
  number: Code,
  exp_month: Int,
  exp_year: Int,
  cvc: Code,
  holder_name: optional(Name)
})

/** The customer a payment or session names. */
export const CustomerInput = Schema.Struct({ email: optional(Email), name: optional(Name), ip: optional(Code) })

// Every field is optional here: the domain checks presence together with every other rule, so one
// answer names every offending field (spec, Handling rules) and keeps the spec's specific codes
// (merchant_reference_required, country_required). The schema refuses only wrong JSON types.
// Every string is bounded (Bounded.ts, Limits.ts): the document shows the bound.
export const CreatePaymentRequest = Schema.Struct({
  amount: optional(Code),
  currency: optional(Code),
  country: optional(Code),
  payment_method: optional(Schema.Struct({
    code: optional(Code),
    details: optional(Schema.Struct({
      card_token: optional(Reference),
      stored_credential: optional(Schema.Struct({
        initiator: optional(Code.annotate({ description: "`merchant` (a merchant-initiated charge: authorizes in the create) or `customer`." })),
        reason: optional(Code.annotate({
          description: "Why the merchant charges the stored card: `unscheduled`, `recurring` or `installment` (the card schemes' types of " +
            "merchant-initiated transaction, passed to the provider). A merchant-initiated charge without one is `unscheduled`."
        }))
      })),
      document_id: optional(Code)
    }))
  })),
  merchant_reference: optional(Reference),
  success_url: optional(Url),
  cancel_url: optional(Url),
  customer: optional(CustomerInput),
  processing_profile: optional(Reference),
  capture_method: optional(Code),
  collect_cvv: optional(Schema.Boolean),
  customer_id: optional(Reference),
  card_storage_consent: optional(Payment.CardStorageConsent)
})

/** A payment's card-storage consent as the API answers it. */
export const ConsentView = Schema.Struct({
  order_id: Id,
  customer_id: Schema.NullOr(Reference),
  card_storage_consent: Payment.CardStorageConsent
})

/** What names an original order (capture, void, refund, payout): exactly one of the first three. */
export const Target = {
  order_id: optional(Reference),
  transaction_id: optional(Reference),
  merchant_reference: optional(Reference),
  /** Optional: the channel the caller believes holds the authorization (contract.md, Providers). */
  channel_id: optional(Reference)
}

export const CaptureRequest = Schema.Struct({ ...Target, amount: optional(Code), final: optional(Schema.Boolean) })
export const VoidRequest = Schema.Struct(Target)

export const SearchRequest = Schema.Struct({
  status: optional(list(Code)),
  created_from: optional(Code),
  created_to: optional(Code),
  processing_profile: optional(Reference),
  merchant_reference: optional(Reference),
  limit: optional(int(1, Limits.MAX_PAGE)),
  cursor: optional(Text)
})

/** A page of a list or search: at most `limit` items (MAX_PAGE), and the cursor of the next page. */
export const page = <S extends Schema.Top>(item: S) =>
  Schema.Struct({ data: list(item, Limits.MAX_PAGE), has_more: Schema.Boolean, next_cursor: Schema.NullOr(Text) })

export const SimulateRequest = Schema.Struct({
  outcome: Schema.Literals(["succeed", "fail", "expire", "underpay", "overpay"]),
  amount: optional(Code)
})

export const AmountMismatchDecisionRequest = Schema.Struct({
  decision: Schema.Literals(["accept", "decline"]),
  refund_destination: optional(Schema.Struct({ address: optional(Text) }))
})
