/**
 * The hosted checkout session: it owns the customer's retries until it completes, fails, expires or
 * is canceled (spec: Checkout session). Its transition table is the spec's, row for row.
 */
import { Result, Schema } from "effect"
import { AccountId, CheckoutSessionId, OrderId, TransactionId } from "../kernel/Ids.ts"
import { InvalidSessionState } from "../kernel/Errors.ts"
import { type Changes, define, type Machine, type Moved, revise, transitionOf } from "../kernel/StateMachine.ts"
import { toMajor } from "../kernel/Money.ts"
import type * as Views from "@tender/api/Views"
import { CaptureMethod, Customer, NextAction } from "../payments/Payment.ts"

/** A checkout session's statuses, in table order. */
export const SESSION_STATUSES = ["open", "pending_action", "completed", "failed", "expired", "canceled"] as const
/** A checkout session's status. */
export type SessionStatus = (typeof SESSION_STATUSES)[number]

/** What moves a checkout session on: its attempts, expiry and cancelation. */
export type SessionTrigger =
  | "external_step"
  | "attempt_declined_retry"
  | "payment_succeeded"
  | "last_attempt_declined"
  | "expired"
  | "canceled"

const LIVE = ["open", "pending_action"] as const

/** A checkout session's status table. */
export const SessionMachine: Machine<SessionStatus, SessionTrigger> = define({
  name: "Checkout session",
  states: SESSION_STATUSES,
  finals: ["completed", "failed", "expired", "canceled"],
  transitions: [
    { from: ["open"], trigger: "external_step", to: "pending_action", when: "the customer submits a payment needing an external step (redirect, 3-D Secure, QR, voucher); the session's next_action is set" },
    { from: ["pending_action"], trigger: "attempt_declined_retry", to: "open", when: "attempts remain (max_payment_attempts not exhausted); the customer may retry" },
    { from: LIVE, trigger: "payment_succeeded", to: "completed", when: "transaction_id is the settled transaction; for manual capture it means authorized, not captured", emits: ["checkout.session.completed"] },
    { from: LIVE, trigger: "last_attempt_declined", to: "failed", when: "attempts exhausted", emits: ["checkout.session.failed"] },
    { from: LIVE, trigger: "expired", to: "expired", when: "expires_at passed; applied when the session is next touched by the hosted page or the API (or the sweeper)", emits: ["checkout.session.expired"] },
    { from: LIVE, trigger: "canceled", to: "canceled", when: "POST /v1/checkout/sessions/{id}/cancel, or the customer cancels on the hosted page", emits: ["checkout.session.canceled"] }
  ]
})

/** max_payment_attempts: default 3, bounds 1–10 (the spec leaves them open; docs/decisions.md). */
export const DEFAULT_MAX_ATTEMPTS = 3
/** The range `max_payment_attempts` may take. */
export const MAX_ATTEMPTS_BOUNDS = { min: 1, max: 10 } as const
/** A session's line items: at most this many, each of at most this quantity (their home is Limits.ts). */
export { MAX_LINE_ITEMS, MAX_QUANTITY } from "../kernel/Limits.ts"
/** One hour unless `expires_at` is given; at most 24 hours ahead. */
export const DEFAULT_LIFETIME_MS = 60 * 60 * 1000
/** The furthest ahead a session's `expires_at` may be. */
export const MAX_LIFETIME_MS = 24 * 60 * 60 * 1000
/** After expiry, how long an attempt the customer started at a provider may still report (then it is closed). */
export const LATE_OUTCOME_WINDOW_MS = 60 * 60 * 1000

/** One line of what a session sells: name, quantity and unit amount in minor units. */
export const LineItem = Schema.Struct({ name: Schema.String, quantity: Schema.Int, unit_amount: Schema.Int })
/** One line of what a session sells. */
export type LineItem = typeof LineItem.Type

/** A checkout session as stored: a hosted payment page's order, its attempts and its lifetime. */
export const CheckoutSession = Schema.Struct({
  id: CheckoutSessionId,
  account_id: AccountId,
  livemode: Schema.Boolean,
  order_id: OrderId,
  merchant_reference: Schema.String,
  status: Schema.Literals(SESSION_STATUSES),
  amount: Schema.Int,
  currency: Schema.String,
  country: Schema.NullOr(Schema.String),
  capture_method: CaptureMethod,
  /** Confining (several) or pre-selecting (one) methods; null = every method routable. */
  payment_methods: Schema.NullOr(Schema.Array(Schema.String)),
  straight_through: Schema.Boolean,
  max_payment_attempts: Schema.Int,
  attempts: Schema.Int,
  expires_at: Schema.String,
  transaction_id: Schema.NullOr(TransactionId),
  next_action: Schema.NullOr(NextAction),
  customer: Schema.NullOr(Customer),
  success_url: Schema.String,
  cancel_url: Schema.String,
  locale: Schema.NullOr(Schema.String),
  line_items: Schema.NullOr(Schema.Array(LineItem)),
  collect_address: Schema.Boolean,
  collect_phone: Schema.Boolean,
  processing_profile: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String,
  version: Schema.Int
})
/** A checkout session as stored. */
export type CheckoutSession = typeof CheckoutSession.Type

/** Whether the session still takes attempts (open, or waiting on a customer action). */
export const isLive = (status: SessionStatus): boolean => status === "open" || status === "pending_action"

/** contract.md: a new session may reuse a reference only once the newest one ended expired, failed or canceled. */
export const referenceBlocks = (status: SessionStatus): boolean =>
  status === "open" || status === "pending_action" || status === "completed"

/** The session record as the API shows it (and as session events carry it). */
export const sessionView = (session: CheckoutSession, publicUrl: string): SessionView => {
  const major = (minor: number) => toMajor(minor, session.currency)
  return {
    id: session.id,
    url: `${publicUrl.replace(/\/+$/, "")}/checkout/${session.id}`,
    status: session.status,
    merchant_reference: session.merchant_reference,
    order_id: session.order_id,
    amount: major(session.amount),
    currency: session.currency,
    ...(session.country !== null ? { country: session.country } : {}),
    // spec: `manual` echoed when set (also on GET and search)
    ...(session.capture_method === "manual" ? { capture_method: "manual" as const } : {}),
    payment_methods: session.payment_methods,
    straight_through: session.straight_through,
    max_payment_attempts: session.max_payment_attempts,
    attempts: session.attempts,
    expires_at: session.expires_at,
    transaction_id: session.status === "completed" ? session.transaction_id : null,
    next_action: session.status === "pending_action" ? session.next_action : null,
    customer: session.customer,
    success_url: session.success_url,
    cancel_url: session.cancel_url,
    locale: session.locale,
    line_items: session.line_items?.map((i) => ({ name: i.name, quantity: i.quantity, unit_amount: major(i.unit_amount) })) ?? null,
    collect_address: session.collect_address,
    collect_phone: session.collect_phone,
    processing_profile: session.processing_profile,
    created_at: session.created_at
  }
}
/** The view is the API's (@tender/api/Views). */
export type SessionView = typeof Views.SessionView.Type

/**
 * A session event (`checkout.session.*`): the session record, with `capture_method` always set
 * (spec: checkout.session.completed carries capture_method, order_id, transaction_id).
 */
export const sessionEvent = (session: CheckoutSession, type: string, publicUrl: string) => ({
  account_id: session.account_id,
  type,
  livemode: session.livemode,
  processing_profile: session.processing_profile,
  order_id: session.order_id,
  data: { ...sessionView(session, publicUrl), capture_method: session.capture_method }
})

/** A session's status move through its table; `InvalidSessionState` when there is no such move. */
export const transition = transitionOf(SessionMachine, (session: CheckoutSession, move) =>
  new InvalidSessionState({ message: `Checkout session ${session.id}: ${move}; a final session never changes` }))

/** A new session: `open`. */
export const born = (fields: Omit<CheckoutSession, "status" | "version" | "updated_at">): CheckoutSession => ({
  ...fields,
  status: "open",
  updated_at: fields.created_at,
  version: 1
})

/** What became of an attempt under the session's order. */
export type AttemptOutcome =
  | { readonly _tag: "Succeeded"; readonly transaction_id: TransactionId }
  | { readonly _tag: "Declined" }
  | { readonly _tag: "AwaitsCustomer"; readonly next_action: CheckoutSession["next_action"] }

/** Whether a declined attempt leaves the customer a retry. */
export const canRetry = (session: CheckoutSession): boolean =>
  isLive(session.status) && session.attempts < session.max_payment_attempts

/**
 * How the session follows its attempt's outcome (pure): the next row and its events, or undefined
 * when nothing changes. A final session never changes: a late outcome moves only the order.
 */
export const follow = (
  session: CheckoutSession,
  outcome: AttemptOutcome,
  at: string
): Moved<CheckoutSession> | undefined => {
  if (!isLive(session.status)) return undefined
  const moved = (trigger: SessionTrigger, changes: Changes<CheckoutSession>) =>
    Result.getOrThrowWith(transition(session, trigger, at, changes), (e) => e)
  switch (outcome._tag) {
    case "Succeeded":
      return moved("payment_succeeded", { transaction_id: outcome.transaction_id, next_action: null })
    case "AwaitsCustomer":
      // Already waiting (the hosted page's card form): the step changes, e.g. to the card's 3-D
      // Secure challenge, so the page shows the step the customer is actually at.
      return session.status === "open"
        ? moved("external_step", { next_action: outcome.next_action })
        : { next: revise(session, { next_action: outcome.next_action }, at), events: [] }
    case "Declined":
      if (!canRetry(session)) return moved("last_attempt_declined", { next_action: null })
      return session.status === "pending_action" ? moved("attempt_declined_retry", { next_action: null }) : undefined
  }
}
