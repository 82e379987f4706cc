/** Ports of webhook delivery: endpoints, deliveries with their attempts, and the HTTP transport. */
import { Context, type Effect, type Option, type Scope } from "effect"
import type { SigningKeys } from "../accounts/Account.ts"
import type { Decided } from "../kernel/StateMachine.ts"
import type { PaymentEvent } from "../payments/Payment.ts"
import type { Conflict } from "../kernel/Errors.ts"
import type { Page } from "../kernel/Search.ts"
import type { EventKey } from "./Retention.ts"
import type { DeliveryAttempt, DeliveryPause, DeliveryStatus, WebhookDelivery, WebhookEndpoint } from "./Webhook.ts"

/** Port: where webhook endpoints are stored. */
export class WebhookEndpointRepo extends Context.Service<WebhookEndpointRepo, {
  /**
   * Inserts the endpoint unless its account already has `max`; `false` (nothing written) then. The
   * count and the insert are serialised per account, so concurrent creates never exceed `max`.
   */
  insert(endpoint: WebhookEndpoint, max: number): Effect.Effect<boolean>
  /** The account's endpoint with this id; another account's is none. */
  find(accountId: string, id: string): Effect.Effect<Option.Option<WebhookEndpoint>>
  /** Any account's endpoint with this id. */
  findAny(id: string): Effect.Effect<Option.Option<WebhookEndpoint>>
  /** All of an account's endpoints, oldest first. */
  list(accountId: string): Effect.Effect<ReadonlyArray<WebhookEndpoint>>
  /**
   * Writes `next` (a transition's or `revise`'s) when the stored version is `next.version - 1`;
   * otherwise `Conflict`. PostgreSQL: it holds the endpoint's row lock until the unit of work ends.
   */
  update(next: Decided<WebhookEndpoint>): Effect.Effect<void, Conflict>
  /** Removes the endpoint; its deliveries and their attempts stay (the log outlives it). */
  delete(accountId: string, id: string): Effect.Effect<boolean>
}>()("@tender/domain/WebhookEndpointRepo") {}

/** A search over deliveries: filters, page size and cursor (newest first). */
export interface DeliveryQuery {
  /** `undefined` = every account (operator). */
  readonly account_id?: string | undefined
  readonly endpoint_id?: string | undefined
  readonly event_id?: string | undefined
  readonly status?: ReadonlyArray<DeliveryStatus> | undefined
  readonly created_from?: string | undefined
  readonly limit: number
  /** Strictly older than this row (newest first). */
  readonly cursor?: { readonly created_at: string; readonly id: string } | undefined
}

/** Attempts under way, as [id, count] pairs, per endpoint and per account. */
export interface InFlightCounts {
  readonly endpoints: ReadonlyArray<readonly [string, number]>
  readonly accounts: ReadonlyArray<readonly [string, number]>
}

/**
 * A claimed delivery with what its attempt needs, read in the claim's own statement (issue 24: one
 * round trip for the batch, rather than a read of the event per delivery and of the endpoint and
 * account per claim). `None`: gone (an event or account removed, an endpoint deleted).
 */
export interface ClaimedDelivery {
  readonly delivery: WebhookDelivery
  readonly event: Option.Option<PaymentEvent>
  readonly endpoint: Option.Option<WebhookEndpoint>
  /** The account's signing secrets, as its row holds them at the claim. */
  readonly signing: Option.Option<SigningKeys>
}

/**
 * The dispatcher's wake-ups (issue 24): storage says when deliveries may have become due — stored,
 * retried by hand, resumed — so an idle dispatcher claims at once rather than at its next poll.
 * A hint, never a promise: a wake-up may find nothing due, and what becomes due by time alone (a
 * retry's delay, a lease running out) is announced by nobody.
 */
export interface DeliveryWakeups {
  /** Waits for the next wake-up; several since the last one count as one. */
  readonly next: Effect.Effect<void>
  /**
   * Whether wake-ups are heard now. While they are not (PostgreSQL: the listener's connection is
   * down), a delivery may be stored unannounced, so the dispatcher polls.
   */
  readonly heard: Effect.Effect<boolean>
}

/** Port: where deliveries and their attempts are stored, claimed by the dispatcher and leased. */
export class WebhookDeliveryRepo extends Context.Service<WebhookDeliveryRepo, {
  /**
   * Stores new deliveries, in one write (an event's fan-out: PostgreSQL, one statement, or the
   * unit of work's one statement; one wake-up for all of them either way).
   */
  insert(...deliveries: ReadonlyArray<WebhookDelivery>): Effect.Effect<void>
  /** The account's delivery with this id; another account's is none. */
  find(accountId: string, id: string): Effect.Effect<Option.Option<WebhookDelivery>>
  /** Any account's delivery with this id (operator access). */
  findAny(id: string): Effect.Effect<Option.Option<WebhookDelivery>>
  /** A page of deliveries matching the query, newest first. */
  search(query: DeliveryQuery): Effect.Effect<Page<WebhookDelivery>>
  /**
   * Claims up to `limit` deliveries due at `now` (status pending or failed, next_attempt_at <= now),
   * skipping rows another worker holds (PostgreSQL: FOR UPDATE SKIP LOCKED), endpoints in
   * `excludeEndpoints`, accounts in `excludeAccounts` and endpoints that are disabled (their
   * deliveries wait until it is enabled again; checked here whatever `pause` stored, which misses a
   * delivery fanned out as its endpoint was being disabled, or retried while paused). Fair across accounts: each endpoint's
   * oldest `perEndpoint` due are the candidates, of which at most `perAccount` per account are
   * taken round-robin (each account's oldest candidate first, then each one's second…). Its cost
   * follows the endpoints with open deliveries and these bounds, not the backlog's size. Each
   * claimed row gets `next_attempt_at = leaseUntil` and `lease_token = lease`, so a worker that
   * dies mid-attempt leaves it due again once the lease ends. Runs in its own unit of work;
   * returns them oldest due first, each with its event, endpoint and signing secrets as they were
   * when it was claimed (ClaimedDelivery).
   *
   * `busy`: attempts the caller already has in flight, per endpoint and per account; they count
   * against the bounds (an endpoint with 3 of 4 busy gets at most 1 more, an account's round-robin
   * rank starts after its busy ones), so everything claimed can run at once: nothing is handed back.
   */
  claimDue(options: {
    readonly now: string
    readonly leaseUntil: string
    readonly lease: string
    readonly limit: number
    readonly perAccount: number
    readonly perEndpoint: number
    readonly excludeEndpoints: ReadonlyArray<string>
    readonly excludeAccounts: ReadonlyArray<string>
    readonly busy?: InFlightCounts | undefined
  }): Effect.Effect<ReadonlyArray<ClaimedDelivery>>
  /**
   * Wake-ups until the scope closes: whenever deliveries are stored, and when one is retried by
   * hand or resumed (made due without a lease). PostgreSQL: a connection of its own LISTENs (a
   * trigger NOTIFYs when such a change commits); while it is lost, `heard` is false until it
   * listens again, which wakes the caller (a change committed meanwhile was not heard).
   */
  readonly wakeups: Effect.Effect<DeliveryWakeups, never, Scope.Scope>
  /**
   * Records attempts, each with its delivery's new state, and ends their leases: a batch in one
   * write, each attempt landing only together with its state. Fenced per delivery: written only
   * while the stored row still carries `delivery.lease_token` (the lease its writer holds; `null`
   * for none); `false` for it, and nothing of it written, when another claim or a retry took it
   * since. Answers in the batch's order; a delivery may appear once per batch.
   */
  recordAttempts(batch: ReadonlyArray<{ readonly delivery: WebhookDelivery; readonly attempt: DeliveryAttempt }>): Effect.Effect<ReadonlyArray<boolean>>
  /**
   * Writes a delivery's new state (a retry, a claim handed back) and ends its lease; fenced as
   * `recordAttempts`. `false` also when the delivery is gone: retention pruned it since it was read.
   */
  update(delivery: Decided<WebhookDelivery>): Effect.Effect<boolean>
  /** A delivery's attempts, oldest first. */
  attempts(deliveryId: string): Effect.Effect<ReadonlyArray<DeliveryAttempt>>
  /**
   * Stores the pause rule's decision (`Webhook.pauseOf`) on the endpoint's deliveries of the given
   * statuses; in the caller's unit of work, after the endpoint's own update (the lock order).
   */
  pause(decision: DeliveryPause): Effect.Effect<void>
}>()("@tender/domain/WebhookDeliveryRepo") {}

/** What one batch of the event log's pruning removed, and where it stopped. */
export interface EventPruneBatch {
  readonly events: number
  readonly deliveries: number
  readonly attempts: number
  /** Events looked at: fewer than the batch's `limit` when no older one is left after `last`. */
  readonly scanned: number
  /** The last event looked at (kept or not): the next batch's `after`; none when nothing was looked at. */
  readonly last: EventKey | undefined
}

/**
 * Port: removes what the retention rule (Retention.ts) lets go, in batches, each its own short unit
 * of work (never the caller's), so that no lock is held longer than one batch.
 */
export class Pruning extends Context.Service<Pruning, {
  /**
   * One batch of the event log: looks at the oldest `limit` events created before `before` (the
   * cutoff) and after `after` (`created_at`, then `id`); removes each of their deliveries that
   * `Retention.deliveryMayGo` lets go, with its attempts, and then each of those events that
   * `Retention.eventMayGo` lets go (no delivery left). A delivery whose status, lease or last write
   * changed meanwhile (a retry) is judged as it is now, never as it was read.
   */
  pruneEvents(options: {
    readonly before: string
    readonly limit: number
    readonly after?: EventKey | undefined
  }): Effect.Effect<EventPruneBatch>
  /**
   * Removes up to `limit` of storage's own entries whose expiry has passed (the signature replay
   * cache's, when it is kept in storage) and answers how many went.
   */
  pruneExpired(limit: number): Effect.Effect<number>
}>()("@tender/domain/Pruning") {}

/** How much of a receiver's answer body the transport keeps: enough for an error message, no more. */
export const RESPONSE_BYTES = 1024

/**
 * What one POST to an endpoint came to: an HTTP answer (with the start of its body, at most
 * `RESPONSE_BYTES` of it, as UTF-8), or a failure (no answer).
 */
export type DeliveryOutcome =
  | { readonly _tag: "Answered"; readonly status: number; readonly duration_ms: number; readonly body?: string | undefined }
  | { readonly _tag: "Failed"; readonly error: string; readonly duration_ms: number }

/** Port: POSTs one signed webhook and reports what happened (never fails: failures are outcomes). */
export class WebhookTransport extends Context.Service<WebhookTransport, {
  /** POSTs the body with its headers, within `timeoutMs`, and reports the answer or the failure. */
  post(request: {
    readonly url: string
    readonly headers: Record<string, string>
    readonly body: Uint8Array
    readonly timeoutMs: number
  }): Effect.Effect<DeliveryOutcome>
}>()("@tender/domain/WebhookTransport") {}

/** Port: the addresses a host name resolves to (SSRF checks of endpoint URLs, at registration and at every delivery). */
export class HostResolver extends Context.Service<HostResolver, {
  /** The addresses the host name resolves to. */
  resolve(host: string): Effect.Effect<ReadonlyArray<string>>
}>()("@tender/domain/HostResolver") {}

/**
 * Port: the `X-Signature` value for a payload (HMAC-SHA256 of t + path + body), one `v1` entry per
 * secret (the account's current signing secret, and the previous one while a rotation overlaps).
 */
export class PayloadSigner extends Context.Service<PayloadSigner, {
  /** The signature header's value: one `v1` HMAC per secret, over timestamp, path and body. */
  sign(secrets: ReadonlyArray<string>, timestampSeconds: number, path: string, body: Uint8Array): string
}>()("@tender/domain/PayloadSigner") {}

/** Where one server process accepts connections: its port, on every loopback address and on `addresses`. */
export interface Listener {
  readonly port: number
  /** The addresses of the machine it runs on (a server bound to one address is still on that machine). */
  readonly addresses: ReadonlyArray<string>
}

/**
 * Port: the addresses of the machine this process runs on (every interface's, loopback included),
 * read when asked: what a serving process records as its place (`Listener.addresses`).
 */
export class MachineAddresses extends Context.Service<MachineAddresses, {
  readonly addresses: Effect.Effect<ReadonlyArray<string>>
}>()("@tender/domain/MachineAddresses") {}

/**
 * Port: where this deployment's servers listen (issue 21). Every `serve` process records its port and
 * its machine's addresses while it runs, so that every process sharing its storage (another `serve`,
 * a standalone `tender worker`) refuses webhook endpoints on them; the webhook URL policy
 * (WebhookReceivers.ts) asks at every registration and delivery. Times are the storage's own clock (a
 * process's skewed clock neither ages nor refreshes a row); a process gone without a word stops
 * counting once its row is `staleMs` old, and the next registration of anyone deletes it.
 */
export class ServerListeners extends Context.Service<ServerListeners, {
  /** Records, or refreshes, that process `process` listens as `listener`, seen now; deletes rows older than `staleMs`. */
  register(process: string, listener: Listener, staleMs: number): Effect.Effect<void>
  /** The process stopped listening (a graceful stop). */
  unregister(process: string): Effect.Effect<void>
  /** The processes seen within the last `staleMs`. */
  listening(staleMs: number): Effect.Effect<ReadonlyArray<Listener>>
}>()("@tender/domain/ServerListeners") {}
