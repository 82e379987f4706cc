/** The API views of webhook endpoints, deliveries, their attempts and the event envelope. */
import type { PaymentEvent } from "../payments/Payment.ts"
import type * as Views from "@tender/api/Views"
import type { DeliveryAttempt, WebhookDelivery, WebhookEndpoint } from "./Webhook.ts"

// The views are the API's (@tender/api/Views), built here from the records.
/** A webhook endpoint as the API shows it (@tender/api/Views). */
export type EndpointView = typeof Views.EndpointView.Type

/** A delivery as the API shows it (@tender/api/Views). */
export type DeliveryView = typeof Views.DeliveryView.Type

/** A delivery attempt as the API shows it (@tender/api/Views). */
export type AttemptView = typeof Views.AttemptView.Type

/** The body every webhook POSTs: the event's id, type, time, mode and data. */
export interface Envelope {
  readonly id: string
  readonly type: string
  readonly created_at: string
  readonly livemode: boolean
  readonly processing_profile: string | null
  readonly data: Record<string, unknown>
}

export const endpointView = (e: WebhookEndpoint): EndpointView => ({
  id: e.id,
  url: e.url,
  enabled_events: e.enabled_events,
  description: e.description,
  status: e.status,
  created_at: e.created_at
})

export const deliveryView = (d: WebhookDelivery): DeliveryView => ({
  id: d.id,
  endpoint_id: d.endpoint_id,
  event_id: d.event_id,
  event_type: d.event_type,
  // While an attempt holds its lease the row still says pending/failed; the view says when it is due.
  status: d.status,
  attempt_count: d.attempts,
  next_attempt_at: d.status === "pending" || d.status === "failed" ? d.next_attempt_at : null,
  last_attempt_at: d.last_attempt_at,
  created_at: d.created_at
})

export const attemptView = (a: DeliveryAttempt): AttemptView => ({
  attempted_at: a.attempted_at,
  status_code: a.status_code,
  duration_ms: a.duration_ms,
  error: a.error
})

/** A recorded event as the webhook body that carries it. */
export const envelopeOf = (event: PaymentEvent): Envelope => ({
  id: event.id,
  type: event.type,
  created_at: event.created_at,
  livemode: event.livemode,
  processing_profile: event.processing_profile,
  data: event.data
})
