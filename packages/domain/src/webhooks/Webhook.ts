/**
 * Webhook endpoints and deliveries. Every recorded event is fanned out, in the unit of work that
 * records it, to one delivery per subscribed endpoint of its account; the dispatcher then delivers
 * each at least once on the contract's schedule.
 */
import { Schema } from "effect"
import { define, type Machine, transitionOf } from "../kernel/StateMachine.ts"

/** At most this many endpoints per account (spec: a maximum exists; contract.md: 16; its home is Limits.ts). */
export { MAX_WEBHOOK_ENDPOINTS as MAX_ENDPOINTS } from "../kernel/Limits.ts"

/** contract.md: attempt now, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; then exhausted. */
export const RETRY_DELAYS_MS: ReadonlyArray<number> = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000
]
/** A delivery's attempts in all: the first, then one per retry delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1
/** Each attempt's time limit (contract.md). */
export const ATTEMPT_TIMEOUT_MS = 15_000

/**
 * The headers a webhook delivery carries (contract.md, Signatures), around its signature header
 * (`t=…, v1=…` over t + the URL's path + the body): every delivery's, and `tender listen`'s forwards.
 */
export const deliveryHeaders = (signature: string, event: { readonly id: string; readonly type: string }) => ({
  "content-type": "application/json",
  "x-signature": signature,
  "x-event-id": event.id,
  "x-event-type": event.type
})

/** Every event type Tender emits (spec's table plus contract.md's refund, payout and transfer events). */
export const EVENT_TYPES = [
  "payment.succeeded",
  "payment.failed",
  "payment.requires_action",
  "payment.authorized",
  "payment.partially_captured",
  "payment.capture_failed",
  "payment.canceled",
  "payment.underpaid",
  "payment.overpaid",
  "payment.returned",
  "checkout.session.completed",
  "checkout.session.expired",
  "checkout.session.failed",
  "checkout.session.canceled",
  "refund.succeeded",
  "refund.failed",
  "payout.succeeded",
  "payout.failed",
  "transfer.succeeded",
  "transfer.failed"
] as const

/** A webhook endpoint's statuses. */
export const ENDPOINT_STATUSES = ["enabled", "disabled"] as const
/** A webhook endpoint's status. */
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number]
/** The merchant's moves on an endpoint's status. */
export type EndpointTrigger = "disable" | "enable"

/** A webhook endpoint as stored: its URL, the events it takes, and its status. */
export const WebhookEndpoint = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  url: Schema.String,
  /** Event types delivered; `["*"]` means all. */
  enabled_events: Schema.Array(Schema.String),
  description: Schema.NullOr(Schema.String),
  status: Schema.Literals(ENDPOINT_STATUSES),
  created_at: Schema.String,
  updated_at: Schema.String,
  version: Schema.Int
})
/** A webhook endpoint as stored. */
export type WebhookEndpoint = typeof WebhookEndpoint.Type

/**
 * A webhook endpoint (contract.md, Webhook endpoints and deliveries): born `enabled`; the merchant
 * disables and enables it (`POST /v1/webhook_endpoints/{id}` with `status`). Deleting it removes the
 * row, which is no status.
 */
export const EndpointMachine: Machine<EndpointStatus, EndpointTrigger> = define({
  name: "Webhook endpoint",
  states: ENDPOINT_STATUSES,
  finals: [],
  transitions: [
    { from: ["enabled"], trigger: "disable", to: "disabled", when: "the merchant disables it: its open deliveries pause" },
    { from: ["disabled"], trigger: "enable", to: "enabled", when: "the merchant enables it: its paused deliveries resume" }
  ]
})

/** Our own flows never ask the endpoint table for a move it lacks: a refusal is a bug. */
export const transitionEndpoint = transitionOf(EndpointMachine, (endpoint: WebhookEndpoint, move) =>
  new Error(`Webhook endpoint ${endpoint.id}: ${move}`))

/** The move to a status the merchant asked for. */
export const triggerTo = (status: EndpointStatus): EndpointTrigger => status === "disabled" ? "disable" : "enable"

/** A new endpoint: `enabled`, version 1. */
export const bornEndpoint = (fields: Omit<WebhookEndpoint, "status" | "updated_at" | "version">): WebhookEndpoint => ({
  ...fields,
  status: "enabled",
  updated_at: fields.created_at,
  version: 1
})

/** A delivery's statuses, in table order. */
export const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "exhausted"] as const
/** A delivery's status. */
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/** What moves a delivery on: an attempt's result, or a manual retry. */
export type DeliveryTrigger = "attempt_succeeded" | "attempt_failed" | "attempt_failed_final" | "retried"

/**
 * A delivery of one event to one endpoint (contract.md, Webhook endpoints and deliveries): attempted
 * on the retry schedule until it succeeds or is exhausted; an operator or merchant retries a failed
 * or exhausted one (POST /v1/webhook_deliveries/{id}/retry).
 */
export const DeliveryMachine: Machine<DeliveryStatus, DeliveryTrigger> = define({
  name: "Webhook delivery",
  states: DELIVERY_STATUSES,
  finals: ["succeeded"],
  transitions: [
    { from: ["pending", "failed"], trigger: "attempt_succeeded", to: "succeeded", when: "the endpoint answered 2xx" },
    { from: ["pending", "failed"], trigger: "attempt_failed", to: "failed", when: "a later attempt is scheduled" },
    { from: ["pending", "failed"], trigger: "attempt_failed_final", to: "exhausted", when: "the schedule ran out, or the endpoint is gone or disabled" },
    { from: ["failed", "exhausted"], trigger: "retried", to: "pending", when: "a manual retry (exhausted: one more attempt)" }
  ]
})

/** One event's delivery to one endpoint as stored: its status, attempts, due time and lease. */
export const WebhookDelivery = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  endpoint_id: Schema.String,
  event_id: Schema.String,
  event_type: Schema.String,
  status: Schema.Literals(DELIVERY_STATUSES),
  /** Attempts made so far. */
  attempts: Schema.Int,
  /** When the next attempt is due (pending, failed); while an attempt runs, the end of its lease. */
  next_attempt_at: Schema.NullOr(Schema.String),
  last_attempt_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String,
  /**
   * The lease of the attempt under way: set by the claim, cleared by the write that records the
   * attempt (or hands the delivery back, or retries it). Writes are fenced by it: a worker whose
   * lease ran out and was claimed again, or retried, finds another token and writes nothing.
   */
  lease_token: Schema.NullOr(Schema.String)
})
/** One event's delivery to one endpoint as stored. */
export type WebhookDelivery = typeof WebhookDelivery.Type

/** One POST of a delivery as stored: when, the answer's status, how long, or the error. */
export const DeliveryAttempt = Schema.Struct({
  delivery_id: Schema.String,
  attempted_at: Schema.String,
  /** HTTP status, when the endpoint answered. */
  status_code: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  /** Why it failed, when it did (timeout, connection refused, non-2xx). */
  error: Schema.NullOr(Schema.String),
  /**
   * The start of the receiver's answer body (the transport reads at most `RESPONSE_BYTES` of it),
   * when it answered: what an operator reads to tell why a receiver refused. Absent when nothing
   * answered, and in attempts logged before it was kept (issue 26).
   */
  response: Schema.optional(Schema.String)
})
/** One POST of a delivery as stored. */
export type DeliveryAttempt = typeof DeliveryAttempt.Type

/**
 * The pause rule (docs/decisions.md, "Disabled endpoints pause"): what an endpoint's status change
 * does to its deliveries, stored in the unit of work of the change. A disabled endpoint's open
 * deliveries (`pending`, `failed`) are paused: the claim passes over them, and storage leaves them out
 * of the dispatcher's index. Enabling resumes every paused one, whatever its status: one whose
 * attempt was under way at the disable may have ended since, and a later retry must find it
 * claimable. The API never shows the flag: a paused delivery keeps its status and due time.
 */
export interface DeliveryPause {
  readonly endpoint_id: string
  readonly paused: boolean
  /** The deliveries it applies to, by status. */
  readonly statuses: ReadonlyArray<DeliveryStatus>
}

/** The statuses of deliveries still to be attempted (what a disabled endpoint pauses). */
export const OPEN_STATUSES: ReadonlyArray<DeliveryStatus> = ["pending", "failed"]

const resume = (endpointId: string): DeliveryPause => ({ endpoint_id: endpointId, paused: false, statuses: DELIVERY_STATUSES })

/** What an endpoint's new status does to its deliveries. */
export const pauseOf = (endpoint: WebhookEndpoint): DeliveryPause =>
  endpoint.status === "disabled" ? { endpoint_id: endpoint.id, paused: true, statuses: OPEN_STATUSES } : resume(endpoint.id)

/**
 * What deleting an endpoint does to its deliveries: they resume, so that the next attempt of each
 * open one ends it `exhausted` ("endpoint deleted") rather than leaving it paused for ever. Whatever
 * status the endpoint was read with: a disable committing between that read and the delete has
 * paused them (an enabled endpoint's have nothing paused, and resuming them changes nothing).
 */
export const pauseOnDelete = (endpoint: WebhookEndpoint): DeliveryPause => resume(endpoint.id)

/** Whether the endpoint takes this event type: enabled, and subscribed to it (or to `*`). */
export const matches = (endpoint: WebhookEndpoint, eventType: string): boolean =>
  endpoint.status === "enabled" && (endpoint.enabled_events.includes("*") || endpoint.enabled_events.includes(eventType))

/**
 * When the attempt after `attempts` failed ones is due, or `undefined` when none is left. The jitter
 * (±10%, from `random` in [0,1)) spreads retries of one outage so they do not land at once.
 */
export const nextAttemptDelay = (attempts: number, random: number): number | undefined => {
  const base = RETRY_DELAYS_MS[attempts - 1]
  if (base === undefined) return undefined
  return Math.round(base * (0.9 + 0.2 * random))
}

/** A delivery's status move through its table (a refusal names the move). */
export const transition = transitionOf(DeliveryMachine, (_: WebhookDelivery, move) => move)

/** A new delivery: `pending`, due at once. */
export const born = (fields: Omit<WebhookDelivery, "status" | "updated_at" | "lease_token">): WebhookDelivery => ({
  ...fields,
  status: "pending",
  updated_at: fields.created_at,
  lease_token: null
})

/** An attempt holds the delivery now: it was claimed and its lease has not run out. */
export const isLeased = (delivery: WebhookDelivery, now: string): boolean =>
  delivery.lease_token !== null && delivery.next_attempt_at !== null && Date.parse(delivery.next_attempt_at) > Date.parse(now)
