/**
 * Ports of money back out: the refund and payout records (MoneyOut.ts). Both stores have one shape,
 * so one interface describes them; each record's reference (`refund_reference`, `payout_reference`)
 * is unique per account when given, even when two creates race on two processes.
 */
import { Context, type Effect, type Option } from "effect"
import { type Conflict, DuplicateMerchantReferenceId } from "../kernel/Errors.ts"
import type { Payout, Refund } from "./MoneyOut.ts"
import type { Decided } from "../kernel/StateMachine.ts"

/** What the refund and payout repositories share: insert, reads, and the version-checked update. */
export interface OutflowStore<R> {
  /** Refuses a second record with the same reference in the account, without spoiling the unit of work. */
  insert(record: R): Effect.Effect<void, DuplicateMerchantReferenceId>
  /** The account's record with this id; another account's is none. */
  find(accountId: string, id: string): Effect.Effect<Option.Option<R>>
  /** Operator access (CLI): any account. */
  findAny(id: string): Effect.Effect<Option.Option<R>>
  /** The account's record holding the merchant's reference, if any. */
  findByReference(accountId: string, reference: string): Effect.Effect<Option.Option<R>>
  /** The record whose provider call is this transaction. */
  findByTransaction(transactionId: string): Effect.Effect<Option.Option<R>>
  /** Writes `next` when the stored version is `next.version - 1`; otherwise `Conflict`. */
  update(next: Decided<R>): Effect.Effect<void, Conflict>
}

/** Port: where refunds are stored. */
export class RefundRepo extends Context.Service<RefundRepo, OutflowStore<Refund>>()("@tender/domain/RefundRepo") {}
/** Port: where payouts are stored, with the account's daily totals for the payout limit. */
export class PayoutRepo extends Context.Service<PayoutRepo, OutflowStore<Payout> & {
  /**
   * What the account paid out in `currency` in [from, to) — payouts pending or succeeded, by their
   * creation — after taking the account's payout lock for that currency until the unit of work ends
   * (after the order's lock, per the lock order), so that two payouts of the account on two orders,
   * on two processes, count each other and never exceed a daily limit together.
   */
  lockedDayTotal(accountId: string, currency: string, from: string, to: string): Effect.Effect<number>
}>()("@tender/domain/PayoutRepo") {}

/** contract.md, Idempotency: a reference already taken means the first create was accepted. */
export const duplicateOutflowReference = (field: "refund_reference" | "payout_reference", reference: string) =>
  new DuplicateMerchantReferenceId({
    message: `${field} ${reference} already exists for this account; the first create with it was accepted`
  })
