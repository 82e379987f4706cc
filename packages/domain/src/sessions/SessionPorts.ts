/** Storage of checkout sessions. */
import { Context, type Effect, type Option } from "effect"
import type { Decided } from "../kernel/StateMachine.ts"
import type { CheckoutSession } from "./CheckoutSession.ts"
import type { Conflict, DuplicateMerchantReferenceId } from "../kernel/Errors.ts"
import type { Page, SearchQuery } from "../kernel/Search.ts"

/** Port: where checkout sessions are stored. */
export class CheckoutSessionRepo extends Context.Service<CheckoutSessionRepo, {
  /**
   * Refuses (DuplicateMerchantReferenceId) a session whose reference already names an open,
   * pending_action or completed session of the account, even when both arrive at once: at most one
   * such session per reference (contract.md), enforced by the database.
   */
  insert(session: CheckoutSession): Effect.Effect<void, DuplicateMerchantReferenceId>
  /** The account's session with this id; another account's is none. */
  find(accountId: string, id: string): Effect.Effect<Option.Option<CheckoutSession>>
  /** Any account's session with this id (operator access and the hosted page). */
  findAny(id: string): Effect.Effect<Option.Option<CheckoutSession>>
  /** The session an order was created under, if any. */
  findByOrder(orderId: string): Effect.Effect<Option.Option<CheckoutSession>>
  /** The most recent session with the reference (by-reference read). */
  findNewestByReference(accountId: string, reference: string): Effect.Effect<Option.Option<CheckoutSession>>
  /** Reads and holds the session until the enclosing unit of work ends (PostgreSQL: FOR UPDATE). */
  lock(id: string): Effect.Effect<Option.Option<CheckoutSession>>
  /** Writes `next` when the stored version is `next.version - 1`; otherwise `Conflict`. */
  update(next: Decided<CheckoutSession>): Effect.Effect<void, Conflict>
  /** Newest first; filters as orders (status any-of, created_from/to, processing_profile, merchant_reference). */
  search(accountId: string, query: SearchQuery): Effect.Effect<Page<CheckoutSession>>
  /** Open or pending_action sessions whose expires_at <= now, oldest first, across accounts (the sweeper). */
  listOverdue(now: string, limit: number): Effect.Effect<ReadonlyArray<CheckoutSession>>
}>()("@tender/domain/CheckoutSessionRepo") {}

/** Where customers' browsers reach this server: hosted pages are addressed under it. */
export const PublicUrl = Context.Reference<string>("@tender/domain/PublicUrl", {
  defaultValue: () => "http://127.0.0.1:8080"
})
