/**
 * Retention of the event log (issue 24): what may be pruned, and when. Events and their webhook
 * deliveries are history once every delivery is finished; they are kept `days` after that and then
 * go, so the tables stay bounded. Storage carries the rule out (the `Pruning` port) and must never
 * take a row the rule keeps: above all, an event whose delivery is still owed.
 *
 * - A delivery may go when it is finished (`succeeded`, or `exhausted`: no attempt is scheduled),
 *   no attempt holds it (no lease), and its last write (the attempt that finished it) is older than
 *   the cutoff. `pending` and `failed` ones (retrying), paused ones of a disabled endpoint (still
 *   `pending` or `failed`) and leased ones are owed and stay, however old.
 * - An event may go when it was created before the cutoff and no delivery of it is left (it had
 *   none, or every one went). An event whose delivery is owed stays with it.
 *
 * What goes stops being listed: the operator's event list, an order's events and the delivery log
 * show only what is kept, and a pruned `exhausted` delivery can no longer be retried.
 */
import type { DeliveryStatus, WebhookDelivery } from "./Webhook.ts"

/** Days the event log is kept after its last delivery attempt (`TENDER_RETENTION_DAYS`). */
export const DEFAULT_RETENTION_DAYS = 30

/**
 * Rows looked at per pruning batch, one short statement each: small enough that a batch's burst of
 * database work (tens of ms) does not show in the p99 of the reads beside it (the growth bench).
 */
export const PRUNE_BATCH = 250

/** The statuses of deliveries with nothing left to attempt: only these may be pruned. */
export const FINISHED_STATUSES: ReadonlyArray<DeliveryStatus> = ["succeeded", "exhausted"]

const DAY_MS = 86_400_000

/** The cutoff of a retention of `days` at `now` (ms): rows whose time is before it may go. */
export const cutoff = (now: number, days: number): string => new Date(now - days * DAY_MS).toISOString()

/** Whether a delivery may go at `before` (the cutoff): finished, not leased, last written before it. */
export const deliveryMayGo = (delivery: WebhookDelivery, before: string): boolean =>
  FINISHED_STATUSES.includes(delivery.status) &&
  delivery.lease_token === null &&
  Date.parse(delivery.updated_at) < Date.parse(before)

/** Whether an event may go at `before`: created before it, with no delivery of it left. */
export const eventMayGo = (event: { readonly created_at: string }, deliveriesLeft: number, before: string): boolean =>
  deliveriesLeft === 0 && Date.parse(event.created_at) < Date.parse(before)

/** Where a pruning batch ended in the event log (oldest first): the next batch starts after it. */
export interface EventKey {
  readonly created_at: string
  readonly id: string
}

/** What one pruning batch, or a round of them, removed. */
export interface PruneCounts {
  readonly events: number
  readonly deliveries: number
  readonly attempts: number
  /** Storage's own entries past their expiry (the signature replay cache's) and console sessions past their limits. */
  readonly expired: number
}

/** A round that removed nothing. */
export const NOTHING_PRUNED: PruneCounts = { events: 0, deliveries: 0, attempts: 0, expired: 0 }

/** Two rounds' (or batches') counts together. */
export const addCounts = (a: PruneCounts, b: Partial<PruneCounts>): PruneCounts => ({
  events: a.events + (b.events ?? 0),
  deliveries: a.deliveries + (b.deliveries ?? 0),
  attempts: a.attempts + (b.attempts ?? 0),
  expired: a.expired + (b.expired ?? 0)
})
