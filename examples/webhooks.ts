/**
 * Receiving Tender's webhooks, merchant side: a helper small enough to copy into your own server.
 *
 *   const handle = createWebhookHandler({ signingSecret: process.env.TENDER_SIGNING_SECRET!, path: "/webhooks/tender" })
 *   const result = handle(rawBody, { "x-signature": req.headers["x-signature"] })
 *   // accepted, or a duplicate: answer 2xx now and do the work afterwards; anything else: 400
 *
 * It follows the spec's handler rules (payment-service-interface.md, Events) in this order:
 *   1. verify `X-Signature` over `t` + endpoint path + the RAW body bytes, within 300 s either side;
 *   2. only then parse the JSON;
 *   3. de-duplicate on the envelope `id` (delivery is at least once);
 *   4. apply `data.order_status` forward-only, because events can arrive out of order.
 */
import { verifySignature } from "@tender/api/Signature"

/** Order statuses as Tender reports them in `data.order_status` (spec, States and transitions: Order). */
export const IN_FLIGHT_STATUSES = ["pending", "processing", "requires_action", "authorized"] as const
export const FINAL_STATUSES = ["succeeded", "failed", "canceled", "returned"] as const
export type InFlightStatus = (typeof IN_FLIGHT_STATUSES)[number]
export type FinalStatus = (typeof FINAL_STATUSES)[number]
export type OrderStatus = InFlightStatus | FinalStatus

const isFinal = (status: OrderStatus): status is FinalStatus => (FINAL_STATUSES as ReadonlyArray<string>).includes(status)
const isOrderStatus = (value: unknown): value is OrderStatus =>
  typeof value === "string" && ([...IN_FLIGHT_STATUSES, ...FINAL_STATUSES] as ReadonlyArray<string>).includes(value)

/**
 * The webhook envelope (contract.md, Webhook endpoints and deliveries). `data` is the object's view at
 * the time of the event: for payment events the payment snapshot with `order_id`, `order_status`,
 * `transaction_id`, `merchant_reference` and, where the spec says so, `payment_instrument`,
 * `captured_amount`, `capture_transaction_id`, `capture_provider_transaction_id`.
 */
export interface Envelope {
  readonly id: string
  readonly type: string
  readonly created_at: string
  readonly livemode: boolean
  readonly processing_profile: string | null
  readonly data: EventData
}

export interface EventData {
  readonly order_id?: string
  readonly order_status?: string
  readonly transaction_id?: string
  readonly merchant_reference?: string
  readonly [field: string]: unknown
}

/** The headers Tender sends with a delivery, lower-cased as Node (and most servers) give them. */
export interface WebhookHeaders {
  readonly "x-signature"?: string | undefined
  readonly "x-event-id"?: string | undefined
  readonly "x-event-type"?: string | undefined
}

export type RejectReason = "invalid_signature" | "expired" | "duplicate" | "malformed"

export type WebhookResult =
  | { readonly accepted: true; readonly event: Envelope; readonly status: StatusUpdate | undefined }
  /** `event` is set for a duplicate: it is genuine, only already handled. */
  | { readonly accepted: false; readonly reason: RejectReason; readonly event?: Envelope }

/**
 * Remembers which event ids were handled. The default keeps the last `limit` ids in memory, which
 * covers retries while the process lives; Tender retries for about 27.5 hours, so a server that
 * restarts or runs several instances should back this with its database (a unique key on the id).
 */
export interface SeenEvents {
  /** Records `id`; returns `false` when it was already recorded. */
  add(id: string): boolean
}

export const boundedSeenEvents = (limit = 10_000): SeenEvents => {
  // A Set iterates in insertion order, so its first element is the oldest id.
  const ids = new Set<string>()
  return {
    add(id) {
      if (ids.has(id)) return false
      ids.add(id)
      if (ids.size > limit) {
        const oldest = ids.values().next()
        if (oldest.done !== true) ids.delete(oldest.value)
      }
      return true
    }
  }
}

/** What an event did to its order's status. */
export interface StatusUpdate {
  readonly orderId: string
  /** The status the event reported. */
  readonly reported: OrderStatus
  /** The order's status after the event: `reported` when applied, otherwise the one kept. */
  readonly current: OrderStatus
  readonly applied: boolean
  /** Why an event was not applied: the order is already final, or a newer in-flight event came first. */
  readonly ignored?: "final" | "stale"
}

/**
 * Per-order status, applied forward-only. A final status (succeeded, failed, canceled, returned) is
 * applied once and never replaced: not by a late in-flight event, not by another final one. Between
 * in-flight statuses the envelope's `created_at` decides, so a delayed `requires_action` does not
 * undo a `processing` that was emitted after it. Keep this in your database in production, as a
 * conditional update (`… WHERE status NOT IN ('succeeded','failed','canceled','returned')`).
 */
export class PaymentStatusBook {
  readonly #orders = new Map<string, { readonly status: OrderStatus; readonly at: number }>()

  get(orderId: string): OrderStatus | undefined {
    return this.#orders.get(orderId)?.status
  }

  /** `undefined` when the event carries no order status (refund, payout and transfer events, for one). */
  apply(event: Envelope): StatusUpdate | undefined {
    const orderId = event.data.order_id
    const reported = event.data.order_status
    if (typeof orderId !== "string" || !isOrderStatus(reported)) return undefined
    const at = Date.parse(event.created_at)
    const known = this.#orders.get(orderId)
    if (known !== undefined && isFinal(known.status)) {
      return { orderId, reported, current: known.status, applied: false, ignored: "final" }
    }
    // A final status ends the order whenever it was emitted; only in-flight ones compete on time.
    if (known !== undefined && !isFinal(reported) && at < known.at) {
      return { orderId, reported, current: known.status, applied: false, ignored: "stale" }
    }
    this.#orders.set(orderId, { status: reported, at })
    return { orderId, reported, current: reported, applied: true }
  }
}

export interface WebhookHandlerOptions {
  /** The account's signing secret (`whsec_…`): the same one that signs API requests. */
  readonly signingSecret: string
  /**
   * The path of the endpoint URL you registered, without its query, e.g. `/webhooks/tender`. It is
   * part of the signed string, so a delivery meant for another endpoint does not verify here.
   */
  readonly path: string
  /** Milliseconds since the epoch, like `Date.now`; injectable for tests. */
  readonly now?: () => number
  readonly seen?: SeenEvents
  readonly statuses?: PaymentStatusBook
}

export type WebhookHandler = (rawBody: Uint8Array | string, headers: WebhookHeaders) => WebhookResult

export const createWebhookHandler = (options: WebhookHandlerOptions): WebhookHandler => {
  const now = options.now ?? Date.now
  const seen = options.seen ?? boundedSeenEvents()
  const statuses = options.statuses ?? new PaymentStatusBook()

  return (rawBody, headers) => {
    // The bytes as received: re-serialising parsed JSON would change them and break the signature.
    const verdict = verifySignature(
      options.signingSecret,
      headers["x-signature"],
      options.path,
      rawBody,
      Math.floor(now() / 1000)
    )
    if (verdict === "expired") return { accepted: false, reason: "expired" }
    // A missing or garbled header is as untrustworthy as a wrong one; "malformed" is kept for
    // deliveries that verify but cannot be read.
    if (verdict !== "valid") return { accepted: false, reason: "invalid_signature" }

    const event = parseEnvelope(rawBody)
    if (event === undefined) return { accepted: false, reason: "malformed" }
    // The id and type headers are not signed; when they disagree with the signed body, something
    // between Tender and here changed the request.
    if (
      (headers["x-event-id"] !== undefined && headers["x-event-id"] !== event.id) ||
      (headers["x-event-type"] !== undefined && headers["x-event-type"] !== event.type)
    ) {
      return { accepted: false, reason: "malformed" }
    }

    // Recorded only after verification, so forged requests cannot mark a real event id as seen.
    if (!seen.add(event.id)) return { accepted: false, reason: "duplicate", event }
    return { accepted: true, event, status: statuses.apply(event) }
  }
}

const decoder = new TextDecoder("utf-8", { fatal: true })

const parseEnvelope = (rawBody: Uint8Array | string): Envelope | undefined => {
  let value: unknown
  try {
    value = JSON.parse(typeof rawBody === "string" ? rawBody : decoder.decode(rawBody))
  } catch {
    return undefined
  }
  if (typeof value !== "object" || value === null) return undefined
  const { id, type, created_at, livemode, processing_profile, data } = value as Record<string, unknown>
  if (typeof id !== "string" || id === "" || typeof type !== "string") return undefined
  if (typeof created_at !== "string" || Number.isNaN(Date.parse(created_at))) return undefined
  if (typeof livemode !== "boolean") return undefined
  if (processing_profile !== null && typeof processing_profile !== "string") return undefined
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined
  return { id, type, created_at, livemode, processing_profile, data: data as EventData }
}
