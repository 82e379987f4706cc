/**
 * Ports of the payment flows' storage, per aggregate: orders, transactions, the event outbox (the
 * provider is ProviderPorts.ts). All storage calls made inside `UnitOfWork.transaction` commit or
 * roll back together.
 */
import { Context, type Effect, type Option } from "effect"
import type { Decided } from "../kernel/StateMachine.ts"
import type { Conflict, DuplicateMerchantReferenceId } from "../kernel/Errors.ts"
import type { Order, PaymentEvent, Transaction } from "./Payment.ts"
import type { Page, SearchQuery } from "../kernel/Search.ts"
import type { FeedPage, FeedPosition } from "../webhooks/EventFeed.ts"

/** Port: where orders are stored, claimed by reference, searched and updated under a version check. */
export class OrderRepo extends Context.Service<OrderRepo, {
  /**
   * Claims the order's reference in the account's one reference space (contract.md, Idempotency),
   * even when inserts arrive at once on several processes: a direct payment or a transfer is refused
   * when any order holds the reference; a checkout order when a direct payment or a transfer does
   * (checkout orders share a reference among themselves; CheckoutSessionRepo decides between sessions).
   *
   * A refused claim fails this call, and the caller's unit of work stays usable. With
   * `refusedWithUnit`, a caller inside a unit of work that would only fail on a refusal lets the
   * adapter report it when the unit ends instead: the unit then fails whole with it, having stored
   * nothing, and the insert can travel with the unit's other writes (PostgreSQL: one statement).
   */
  insert(order: Order, options?: { readonly refusedWithUnit?: boolean }): Effect.Effect<void, DuplicateMerchantReferenceId>
  /** The account's order with this id; another account's is none. */
  find(accountId: string, id: string): Effect.Effect<Option.Option<Order>>
  /** Operator access (CLI): any account. */
  findAny(id: string): Effect.Effect<Option.Option<Order>>
  /** The order holding the reference: a direct payment or transfer first, else the newest. */
  findByReference(accountId: string, reference: string): Effect.Effect<Option.Option<Order>>
  /**
   * Orders whose retry window (`retry_until`) is at or before `now`, soonest first, ties by id,
   * across accounts: the direct payments a 502 left awaiting a retry that never came (the worker).
   */
  listRetryLapsed(now: string, limit: number): Effect.Effect<ReadonlyArray<Order>>
  /**
   * The account's orders with the reference, newest first (created_at, then id), at most `limit`:
   * sessions reuse a reference once the earlier ended (and orders from before migration 0027 may
   * pair a direct payment with sessions), so a by-reference target must see them all.
   */
  listByReference(accountId: string, reference: string, limit: number): Effect.Effect<ReadonlyArray<Order>>
  /**
   * Reads the order and holds it until the enclosing unit of work ends (PostgreSQL: `FOR UPDATE`),
   * so captures, voids and 3-D Secure completion on one order are serialised across processes.
   */
  lock(id: string): Effect.Effect<Option.Option<Order>>
  /** Writes `next` when the stored version is `next.version - 1`; otherwise `Conflict`. */
  update(next: Decided<Order>): Effect.Effect<void, Conflict>
  /** A page of the account's orders matching the query, newest first. */
  search(accountId: string, query: SearchQuery): Effect.Effect<Page<Order>>
  /** The account's orders among `ids`, in one read (a search page's transactions name their orders); unknown ids are absent. */
  findMany(accountId: string, ids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Order>>
}>()("@tender/domain/OrderRepo") {}

/** Port: where transactions are stored, with the reads the settlement and reconciliation workers need. */
export class TransactionRepo extends Context.Service<TransactionRepo, {
  /** Stores a new transaction. */
  insert(transaction: Transaction): Effect.Effect<void>
  /** The account's transaction with this id; another account's is none. */
  find(accountId: string, id: string): Effect.Effect<Option.Option<Transaction>>
  /** Any account's transaction with this id (operator access, provider pages and notifications). */
  findAny(id: string): Effect.Effect<Option.Option<Transaction>>
  /** Every transaction of an order, oldest first. */
  listByOrder(orderId: string): Effect.Effect<ReadonlyArray<Transaction>>
  /** Every transaction of each of the orders, oldest first, in one read (a search page's orders). */
  listByOrders(orderIds: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Transaction>>
  /** Writes `next` when the stored version is `next.version - 1`; otherwise `Conflict`. */
  update(next: Decided<Transaction>): Effect.Effect<void, Conflict>
  /** `merchant_reference` filters on the order's reference. */
  search(accountId: string, query: SearchQuery): Effect.Effect<Page<Transaction>>
  /**
   * What the provider accepted for later and has not settled (TransactionStatus.awaitsSettlement,
   * with the provider's id), due for a check at or before `before` (its `settlement_check_at`, else
   * its creation), soonest first, ties by id, across accounts (the settlement worker).
   */
  listSettling(before: string, limit: number): Effect.Effect<ReadonlyArray<Transaction>>
  /**
   * Provider calls not recorded and due for a check at or before `before` (their `retry_at`, else
   * their reservation time), soonest first (the reconciliation worker).
   */
  listPendingCalls(before: string, limit: number): Effect.Effect<ReadonlyArray<Transaction>>
  /**
   * Attempts still in flight (initial, pending, processing), with no provider call in doubt, whose
   * payment window has closed (`expires_at` set and at or before `nowIso`), soonest expiry first,
   * ties by id, across accounts: what a window-expiry worker closes.
   */
  listExpiredWindows(nowIso: string, limit: number): Effect.Effect<ReadonlyArray<Transaction>>
}>()("@tender/domain/TransactionRepo") {}

/** The transactional outbox: events are appended in the same unit of work as the change they report. */
export class EventRepo extends Context.Service<EventRepo, {
  /** Appends an event, in the caller's unit of work. */
  append(event: PaymentEvent): Effect.Effect<void>
  /** Every event of an order, oldest first. */
  listByOrder(orderId: string): Effect.Effect<ReadonlyArray<PaymentEvent>>
  /** Any account's event with this id. */
  findAny(id: string): Effect.Effect<Option.Option<PaymentEvent>>
  /** Newest first; `account_id` undefined = every account (operator); `created_from` inclusive. */
  search(query: {
    readonly account_id?: string | undefined
    readonly type?: string | undefined
    readonly created_from?: string | undefined
    readonly limit: number
    readonly cursor?: { readonly created_at: string; readonly id: string } | undefined
  }): Effect.Effect<Page<PaymentEvent>>
  /**
   * The account's feed (webhooks/EventFeed.ts): its events of `types` (all when undefined) after
   * `after`, in position order, at most `limit`. Complete: an event that commits after a read is
   * never at or before the `next` that read gave, however the writers' commits interleave (an event
   * is served only once no event can still appear before it). `after` undefined: no events, and
   * `next` is now (after every event committed so far). Reads the primary, never a replica.
   */
  feed(query: {
    readonly account_id: string
    readonly after: FeedPosition | undefined
    readonly types: ReadonlyArray<string> | undefined
    readonly limit: number
  }): Effect.Effect<FeedPage<PaymentEvent>>
}>()("@tender/domain/EventRepo") {}
