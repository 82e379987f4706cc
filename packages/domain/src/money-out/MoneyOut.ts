/**
 * Money back out: refunds (a reversal of one settlement), payouts (to the instrument of an earlier
 * payment) and transfers (to a destination instrument). Each is a record with its own transition
 * table; its provider call is one transaction of an order (kind `refund`, `payout` or `transfer`),
 * so it shows in transaction reads and search like every other attempt.
 *
 * Refunds and payouts share one lifecycle: `pending` until the provider paid it (at once, or later
 * through the settlement worker), else `failed`. A transfer first waits for its card to be
 * collected (`requires_action`) when its destination is a card.
 */
import { Schema } from "effect"
import { InvalidTransactionStatus } from "../kernel/Errors.ts"
import { AccountId, OrderId, TransactionId } from "../kernel/Ids.ts"
import { NextAction, PaymentInstrument } from "../payments/Payment.ts"
import { define, type Machine, transitionOf } from "../kernel/StateMachine.ts"

/** A refund's or payout's statuses, in table order. */
export const OUTFLOW_STATUSES = ["pending", "succeeded", "failed"] as const
/** A refund's or payout's status. */
export type OutflowStatus = (typeof OUTFLOW_STATUSES)[number]
/** What moves a refund or payout on: the provider paid it, or refused it. */
export type OutflowTrigger = "paid" | "refused"

/** pending → succeeded | failed, emitting `<prefix>.succeeded` / `<prefix>.failed`. */
const outflowMachine = (name: string, prefix: "refund" | "payout"): Machine<OutflowStatus, OutflowTrigger> =>
  define({
    name,
    states: OUTFLOW_STATUSES,
    finals: ["succeeded", "failed"],
    transitions: [
      { from: ["pending"], trigger: "paid", to: "succeeded", when: "the provider paid it (at once, or when a pending one settled)", emits: [`${prefix}.succeeded`] },
      { from: ["pending"], trigger: "refused", to: "failed", when: "the provider refused it or could not be reached; nothing moved", emits: [`${prefix}.failed`] }
    ]
  })

/** A refund's status table. */
export const RefundMachine = outflowMachine("Refund", "refund")
/** A payout's status table. */
export const PayoutMachine = outflowMachine("Payout", "payout")

const common = {
  account_id: AccountId,
  livemode: Schema.Boolean,
  /** The order of the original payment (refunds, payouts) or the transfer's own order. */
  order_id: OrderId,
  /** The record's own transaction under that order (kind refund, payout or transfer). */
  transaction_id: TransactionId,
  amount: Schema.Int,
  currency: Schema.String,
  processing_profile: Schema.NullOr(Schema.String),
  /** Why the provider refused it, once failed. */
  decline_code: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String,
  version: Schema.Int
}

/** A refund as stored: money sent back to the payer out of an order's settlement. */
export const Refund = Schema.Struct({
  id: Schema.String,
  ...common,
  /** The settlement it reverses: a completed payment, or one completed capture. */
  original_transaction_id: TransactionId,
  status: Schema.Literals(OUTFLOW_STATUSES),
  reason: Schema.NullOr(Schema.String),
  /** The merchant's own reference, unique per account when given. */
  refund_reference: Schema.NullOr(Schema.String)
})
/** A refund as stored. */
export type Refund = typeof Refund.Type

/** A payout as stored: money paid out of an order's settlement to a payment instrument. */
export const Payout = Schema.Struct({
  id: Schema.String,
  ...common,
  /** The original payment whose instrument receives the money. */
  original_transaction_id: TransactionId,
  status: Schema.Literals(OUTFLOW_STATUSES),
  payment_instrument: PaymentInstrument,
  payout_reference: Schema.NullOr(Schema.String)
})
/** A payout as stored. */
export type Payout = typeof Payout.Type

/** A transfer's statuses, in table order. */
export const TRANSFER_STATUSES = ["pending", "requires_action", "processing", "succeeded", "failed"] as const
/** A transfer's status. */
export type TransferStatus = (typeof TRANSFER_STATUSES)[number]
/** What moves a transfer on: card collection, the provider's answer, or a lost call. */
export type TransferTrigger = "awaiting_card" | "sent" | "paid" | "refused" | "create_unreachable" | "execute_unreachable" | "retry_lapsed"

/** A transfer's status table. */
export const TransferMachine: Machine<TransferStatus, TransferTrigger> = define({
  name: "Transfer",
  states: TRANSFER_STATUSES,
  finals: ["succeeded", "failed"],
  transitions: [
    { from: ["pending"], trigger: "awaiting_card", to: "requires_action", when: "a card destination: the card is collected in the browser (collect_card), then executed" },
    { from: ["pending", "requires_action"], trigger: "sent", to: "processing", when: "the provider call is reserved (on create, or on execute for a card)" },
    { from: ["processing"], trigger: "paid", to: "succeeded", when: "the provider paid it (at once, or when a pending one settled)", emits: ["transfer.succeeded"] },
    { from: ["pending", "requires_action", "processing"], trigger: "refused", to: "failed", when: "the provider refused it, or never received the call (reconciliation); nothing moved", emits: ["transfer.failed"] },
    // contract.md, Idempotency: a create answered 502 (nothing applied at any provider) may be retried
    // with the same request, on this transfer; no transfer.failed for the 502.
    { from: ["processing"], trigger: "create_unreachable", to: "pending", when: "its create found no provider reachable: nothing moved; awaits the same request again within the retry window" },
    { from: ["pending"], trigger: "retry_lapsed", to: "failed", when: "no retry came within the retry window", emits: ["transfer.failed"] },
    // Execute answered 502: nothing moved, so the transfer awaits its execute again, as before it.
    { from: ["processing"], trigger: "execute_unreachable", to: "requires_action", when: "its execute found no provider reachable: nothing moved; execute may be called again" }
  ]
})

/** A transfer as stored: money the account sends to a destination (bank account, wallet, card). */
export const Transfer = Schema.Struct({
  id: Schema.String,
  ...common,
  status: Schema.Literals(TRANSFER_STATUSES),
  /** The destination code (contract.md: bank_transfer, paypal, mercadopago, crypto, pix, upi, payid, card). */
  payment_method: Schema.String,
  channel_id: Schema.NullOr(Schema.String),
  /** The destination as returned (`pi_…` id, destination fields top level; never the card token or expiry). */
  payment_instrument: PaymentInstrument,
  /** A card transfer's collect_card action while it awaits collection. */
  next_action: Schema.NullOr(NextAction)
})
/** A transfer as stored. */
export type Transfer = typeof Transfer.Type

const refuse = (what: string) => <R extends { readonly id: string }>(record: R, move: string) =>
  new InvalidTransactionStatus({ message: `${what} ${record.id}: ${move}` })

/** A refund's status move through its table; `InvalidTransactionStatus` when there is no such move. */
export const refundTransition = transitionOf(RefundMachine, refuse("Refund")<Refund>)
/** A payout's status move through its table; `InvalidTransactionStatus` when there is no such move. */
export const payoutTransition = transitionOf(PayoutMachine, refuse("Payout")<Payout>)
/** A transfer's status move through its table; `InvalidTransactionStatus` when there is no such move. */
export const transferTransition = transitionOf(TransferMachine, refuse("Transfer")<Transfer>)

/** New records start `pending`. */
export const born = <R extends { readonly created_at: string }>(fields: R): R & { readonly status: "pending"; readonly updated_at: string; readonly version: 1 } => ({
  ...fields,
  status: "pending",
  updated_at: fields.created_at,
  version: 1
})
