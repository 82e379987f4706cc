/**
 * The Order aggregate: the net result across a payment's attempts. The spec's Order table gives four
 * rows; the others complete the lifecycle every flow needs (docs/state-machines.md). The `emits`
 * column is the only list of the payment events an order's move produces; manual-capture closes
 * emit through the authorization's table instead (AuthorizationStatus.ts).
 */
import { Schema } from "effect"
import { InvalidOrderStatusTransition } from "../kernel/Errors.ts"
import { AccountId, OrderId } from "../kernel/Ids.ts"
import { CaptureMethod, CardStorageConsent, Customer, OrderSubtype, PaymentInstrument } from "./PaymentFields.ts"
import { define, type Machine, transitionOf } from "../kernel/StateMachine.ts"

/** An order's statuses, in table order. */
export const ORDER_STATUSES = [
  "pending",
  "processing",
  "requires_action",
  "authorized",
  "succeeded",
  "failed",
  "canceled",
  "returned"
] as const
/** An order's status. */
export type OrderStatus = (typeof ORDER_STATUSES)[number]

/** What moves an order on: its attempts' outcomes, settlement, amount mismatches, expiry, cancelation, transfers. */
export type OrderTrigger =
  | "attempt_sent"
  | "action_required"
  | "merchant_action_required"
  | "action_completed"
  | "attempt_declined_retry"
  | "attempt_declined_final"
  | "attempt_unreachable"
  | "retry_lapsed"
  | "payment_settled"
  | "authorization_succeeded"
  | "authorization_closed_settled"
  | "authorization_voided"
  | "underpaid"
  | "overpaid"
  | "mismatch_accepted"
  | "mismatch_returned"
  | "expired"
  | "canceled"
  | "session_closed"
  | "transfer_paid"
  | "transfer_refused"

const IN_FLIGHT = ["pending", "processing", "requires_action"] as const

/** An order's status table. */
export const OrderMachine: Machine<OrderStatus, OrderTrigger> = define({
  name: "Order",
  states: ORDER_STATUSES,
  finals: ["succeeded", "failed", "canceled", "returned"],
  transitions: [
    { from: ["pending"], trigger: "attempt_sent", to: "processing" },
    { from: ["pending", "processing"], trigger: "action_required", to: "requires_action", emits: ["payment.requires_action"] },
    // spec: payment.requires_action "never for merchant-initiated card charges"; a card transfer awaits
    // its execute (the merchant's action) before it, and again after an execute answered 502.
    { from: ["pending", "processing"], trigger: "merchant_action_required", to: "requires_action", when: "a merchant-initiated charge; a card transfer awaiting its execute" },
    { from: ["requires_action"], trigger: "action_completed", to: "processing" },
    // spec: (attempt in progress) — declined attempt with retries remaining → pending. No payment.failed:
    // that event is "final, no retry on the same payment".
    { from: IN_FLIGHT, trigger: "attempt_declined_retry", to: "pending", when: "retries remaining (a checkout session's)" },
    { from: IN_FLIGHT, trigger: "attempt_declined_final", to: "failed", when: "no retry remains", emits: ["payment.failed"] },
    // contract.md, Idempotency: a create answered 502 (nothing applied at any provider) may be retried
    // with the same request, on this order; no payment.failed (nor transfer.failed) for the 502.
    { from: ["processing"], trigger: "attempt_unreachable", to: "pending", when: "a direct payment's or transfer's create found no provider reachable (awaits the same request again)" },
    { from: ["pending"], trigger: "retry_lapsed", to: "failed", when: "no retry of a direct payment came within the retry window", emits: ["payment.failed"] },
    { from: IN_FLIGHT, trigger: "payment_settled", to: "succeeded", emits: ["payment.succeeded"] },
    // spec: (manual-capture hold) — authorization succeeded → authorized
    { from: IN_FLIGHT, trigger: "authorization_succeeded", to: "authorized", emits: ["payment.authorized"] },
    { from: ["authorized"], trigger: "authorization_closed_settled", to: "succeeded", when: "a final capture settled, a void behind settled captures, or a closing authorization's last capture or release in flight ended with something captured (the authorization's row emits)" },
    { from: ["authorized"], trigger: "authorization_voided", to: "canceled", when: "nothing captured: a void, or a closing authorization's last capture or release in flight ended (the authorization's row emits)" },
    // spec: (under- or overpayment) — payment received with wrong amount → processing
    { from: IN_FLIGHT, trigger: "underpaid", to: "processing", when: "stays until the merchant decides", emits: ["payment.underpaid"] },
    { from: IN_FLIGHT, trigger: "overpaid", to: "processing", when: "stays until the merchant decides", emits: ["payment.overpaid"] },
    { from: ["processing"], trigger: "mismatch_accepted", to: "succeeded", emits: ["payment.succeeded"] },
    // spec: processing (mismatch) — merchant declines and funds are sent back → returned
    { from: ["processing"], trigger: "mismatch_returned", to: "returned", emits: ["payment.returned"] },
    { from: IN_FLIGHT, trigger: "expired", to: "canceled", when: "the payment window closed", emits: ["payment.failed"] },
    { from: IN_FLIGHT, trigger: "canceled", to: "canceled", when: "the customer canceled at the provider", emits: ["payment.failed"] },
    { from: IN_FLIGHT, trigger: "session_closed", to: "canceled", when: "its checkout session expired or was canceled (the session's event tells)" },
    // A transfer order (subtype transfer): its Transfer record's table emits transfer.*, never payment.*.
    { from: ["processing"], trigger: "transfer_paid", to: "succeeded", when: "a transfer the provider paid (the transfer's row emits)" },
    { from: IN_FLIGHT, trigger: "transfer_refused", to: "failed", when: "a transfer the provider refused or never received, or whose retry window lapsed (the transfer's row emits)" }
  ]
})

/** An order as stored: one payment's amount, parties and net result across its attempts. */
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
/** An order as stored. */
export type Order = typeof Order.Type

/**
 * What the payer paid for an order: its amount, or what arrived when a crypto under- or overpayment
 * was reported (contract.md: "After an accepted crypto overpayment the refundable balance is what
 * arrived (less earlier refunds)"). The bound of `refunded_amount`, in the refund's decision
 * (operations/Original.ts, Refund.ts) and in storage alike (the orders' trigger, migrations 0028 and
 * 0036; the memory adapter's OrderRepo).
 */
export const arrivedAmount = (order: Pick<Order, "amount" | "received_amount">): number => order.received_amount ?? order.amount

/** An order's status move through its table; `InvalidOrderStatusTransition` when there is no such move. */
export const transition = transitionOf(OrderMachine, (order: Order, move) =>
  new InvalidOrderStatusTransition({ message: `Order ${order.id}: ${move}` }))

/**
 * What tells one new order from another: the owner, the reference and the money, and what its kind
 * of order knows at birth. The rest (customer, return URLs, card, session, …) is null unless given.
 */
export interface OrderBirth {
  readonly id: OrderId
  /** The account the order belongs to: its id and its mode (livemode). */
  readonly owner: { readonly id: AccountId; readonly mode: "test" | "live" }
  readonly subtype: Order["subtype"]
  readonly merchant_reference: string
  readonly amount: number
  readonly currency: string
  readonly country: string
  readonly payment_method: string
  readonly capture_method: Order["capture_method"]
  readonly processing_profile: string | null
  readonly created_at: string
  readonly customer?: Order["customer"] | undefined
  readonly success_url?: string | null | undefined
  readonly cancel_url?: string | null | undefined
  readonly card_token?: string | null | undefined
  readonly checkout_session_id?: string | null | undefined
  readonly customer_id?: string | null | undefined
  readonly card_storage_consent?: Order["card_storage_consent"] | undefined
  /** A direct payment's or transfer's create request (Retry.ts): how a retry after a 502 is told apart. */
  readonly request_hash?: string | undefined
}

/**
 * A new order, the one birth of every kind (direct payment, checkout, transfer): `pending` until its
 * first attempt is sent, with nothing received, refunded or settled on any instrument yet.
 */
export const born = (birth: OrderBirth): Order => ({
  id: birth.id,
  account_id: birth.owner.id,
  livemode: birth.owner.mode === "live",
  merchant_reference: birth.merchant_reference,
  subtype: birth.subtype,
  checkout_session_id: birth.checkout_session_id ?? null,
  status: "pending",
  amount: birth.amount,
  currency: birth.currency,
  country: birth.country,
  payment_method: birth.payment_method,
  capture_method: birth.capture_method,
  processing_profile: birth.processing_profile,
  customer: birth.customer ?? null,
  success_url: birth.success_url ?? null,
  cancel_url: birth.cancel_url ?? null,
  card_token: birth.card_token ?? null,
  payment_instrument: null,
  received_amount: null,
  refunded_amount: 0,
  customer_id: birth.customer_id ?? null,
  card_storage_consent: birth.card_storage_consent ?? null,
  request_hash: birth.request_hash ?? null,
  retry_until: null,
  created_at: birth.created_at,
  updated_at: birth.created_at,
  version: 1
})
