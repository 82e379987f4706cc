/**
 * The Transaction aggregate: one attempt at the provider. The spec: initial → pending or processing;
 * then → completed, failed, canceled or returned; treat initial, pending and processing all as in
 * flight. Transactions emit no events of their own: the order or the authorization they belong to does.
 */
import { Schema } from "effect"
import { InvalidTransactionStatus } from "../kernel/Errors.ts"
import { AccountId, OrderId, TransactionId } from "../kernel/Ids.ts"
import type { Order } from "./Order.ts"
import { NextAction, PaymentInstrument, PendingCall, ThreeDsStatus, TransactionKind } from "./PaymentFields.ts"
import { define, type Machine, transitionOf } from "../kernel/StateMachine.ts"
import { Routing } from "../channels/RoutingModel.ts"

/** A transaction's statuses, in table order. */
export const TRANSACTION_STATUSES = ["initial", "pending", "processing", "completed", "failed", "canceled", "returned"] as const
/** A transaction's status. */
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number]

/** What moves a transaction on: queued, sent, and the provider's answer. */
export type TransactionTrigger = "queued" | "sent" | "succeeded" | "declined" | "canceled" | "returned"

const IN_FLIGHT = ["initial", "pending", "processing"] as const

/** A transaction's status table. */
export const TransactionMachine: Machine<TransactionStatus, TransactionTrigger> = define({
  name: "Transaction",
  states: TRANSACTION_STATUSES,
  finals: ["completed", "failed", "canceled", "returned"],
  transitions: [
    // contract.md: "A refund, payout or transfer transaction waiting at the provider (queued, settling
    // later) reads pending; processing only while a call is in flight."
    { from: ["initial", "processing"], trigger: "queued", to: "pending", when: "the provider queued it: a refund, payout or transfer it pays later" },
    { from: ["initial"], trigger: "sent", to: "processing", when: "reserved for a provider call, or handed to the customer at the provider" },
    { from: IN_FLIGHT, trigger: "succeeded", to: "completed" },
    { from: IN_FLIGHT, trigger: "declined", to: "failed", when: "declined or errored; decline_code says why" },
    // spec: canceled — "Void released the hold, or session cancelled or expired"
    { from: IN_FLIGHT, trigger: "canceled", to: "canceled", when: "a void released the hold; a window or session closed" },
    { from: IN_FLIGHT, trigger: "returned", to: "returned" }
  ]
})

/** A transaction as stored: one call at a provider for an order (payment, capture, refund, …). */
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
  /**
   * How a new payment's attempt was routed (issue 27, contract.md `routing`): the rule and version
   * that decided, the candidates, the channel and why, which try of the payment it is. Null on
   * follow-ups (they go where their transaction went), on the built-in sandbox, and on rows stored
   * before routing was recorded.
   */
  routing: Schema.NullOr(Routing),
  created_at: Schema.String,
  updated_at: Schema.String,
  version: Schema.Int
})
/** A transaction as stored. */
export type Transaction = typeof Transaction.Type

/**
 * Where a provider page of `txn` sends the customer once it ended (`good`: the payment can go on):
 * the browser SDK's return URL when its redirect mode brought them (one page either way: it re-reads
 * the payment), else the order's success_url or cancel_url.
 */
export const customerReturnUrl = (order: Order, txn: Transaction, good: boolean): string | null =>
  txn.customer_return_url ?? (good ? order.success_url : order.cancel_url)

/** Whether the status is one the provider has not answered for good yet. */
export const isInFlight = (status: TransactionStatus): boolean => (IN_FLIGHT as ReadonlyArray<string>).includes(status)

/**
 * Whether the provider holds `t` for later, its call answered: a settling capture (processing), or a
 * queued refund, payout or transfer (pending; or processing with no call in flight, as a version
 * before issue 21 wrote a queued one, even after migration 0029 moved the rows it found: a process
 * of that version still running wrote them so). What the settlement worker and a provider's
 * settlement notice act on (TransactionRepo.listSettling reads the same rows).
 */
export const awaitsSettlement = (t: Transaction): boolean =>
  t.pending_call === null &&
  (t.kind === "capture" ? t.status === "processing" : QUEUED_KINDS.includes(t.kind) && (t.status === "pending" || t.status === "processing"))

const QUEUED_KINDS: ReadonlyArray<Transaction["kind"]> = ["refund", "payout", "transfer"]

/** Moves through `sent` first when the attempt was never sent (outcomes may arrive on `initial`). */
export const viaSent = (txn: Transaction, trigger: TransactionTrigger): ReadonlyArray<TransactionTrigger> =>
  txn.status === "initial" ? ["sent", trigger] : [trigger]

/** A transaction's status move through its table; `InvalidTransactionStatus` when there is no such move. */
export const transition = transitionOf(TransactionMachine, (txn: Transaction, move) =>
  new InvalidTransactionStatus({ message: `Transaction ${txn.id}: ${move}` }))

/** A new transaction: `initial`, not yet sent to a provider. */
/** What a new transaction must be told; everything else starts empty (`initial`, no provider answer yet). */
export type TransactionBirth =
  & Pick<Transaction, "id" | "order_id" | "account_id" | "livemode" | "kind" | "amount" | "currency" | "payment_method" | "processing_profile" | "provider" | "channel_id" | "created_at">
  & Partial<Omit<Transaction, "status" | "version" | "updated_at">>

/** A new transaction: `initial`, nothing from the provider yet; the one birth of the record kind. */
export const born = (fields: TransactionBirth): Transaction => ({
  provider_transaction_id: null,
  decline_code: null,
  payment_instrument: null,
  parent_transaction_id: null,
  final: null,
  multicapture: null,
  next_action: null,
  three_ds: null,
  customer_return_url: null,
  browser_flow: false,
  expires_at: null,
  pending_call: null,
  settlement_check_at: null,
  routing: null,
  ...fields,
  status: "initial",
  updated_at: fields.created_at,
  version: 1
})

/** A provider call reserved and not recorded yet: the outcome is in doubt until it is. */
export const callInFlight = (t: Transaction): boolean => t.pending_call !== null

/**
 * The latest payment attempt of an order (payment or authorization) among its transactions as
 * listed (by created_at, id). A smart retry's second try can be created in the same millisecond as
 * the first and sort before it by id: between attempts created together, the higher routing attempt
 * is the later; otherwise the later listed.
 */
export const latestAttempt = (txns: ReadonlyArray<Transaction>): Transaction | undefined => {
  let latest: Transaction | undefined
  for (const t of txns) {
    if (t.kind !== "payment" && t.kind !== "authorization") continue
    if (latest === undefined || t.created_at > latest.created_at ||
      (t.created_at === latest.created_at && (t.routing?.attempt ?? 0) >= (latest.routing?.attempt ?? 0))) latest = t
  }
  return latest
}
