/**
 * The Transaction aggregate: one attempt at the provider. The spec: initial → pending or processing;
 * then → completed, failed, canceled or returned; treat initial, pending and processing all as in
 * flight. Transactions emit no events of their own: the order or the authorization they belong to does.
 */
import { InvalidTransactionStatus } from "../kernel/Errors.ts"
import type { Transaction } from "./Payment.ts"
import { define, type Machine, transitionOf } from "../kernel/StateMachine.ts"

export const TRANSACTION_STATUSES = ["initial", "pending", "processing", "completed", "failed", "canceled", "returned"] as const
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number]

export type TransactionTrigger = "queued" | "sent" | "succeeded" | "declined" | "canceled" | "returned"

const IN_FLIGHT = ["initial", "pending", "processing"] as const

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

export const transition = transitionOf(TransactionMachine, (txn: Transaction, move) =>
  new InvalidTransactionStatus({ message: `Transaction ${txn.id}: ${move}` }))

/** A new transaction: `initial`, not yet sent to a provider. */
export const born = (fields: Omit<Transaction, "status" | "version" | "updated_at">): Transaction => ({
  ...fields,
  status: "initial",
  updated_at: fields.created_at,
  version: 1
})
