import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_ENDPOINT_STATUSES } from "../Statuses.ts"
import { Code, Description, list, Reference, Text, Url } from "./Bounded.ts"
import { page } from "./PaymentSchemas.ts"

const optional = Schema.optional
const EndpointId = Schema.String.check(Schema.isPattern(/^we_[A-Za-z0-9]{8,64}$/))
const DeliveryId = Schema.String.check(Schema.isPattern(/^wd_[A-Za-z0-9]{8,64}$/))

/** A webhook endpoint as the API answers it. */
export const EndpointView = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  enabled_events: Schema.Array(Schema.String),
  description: Schema.NullOr(Schema.String),
  status: Schema.Literals(WEBHOOK_ENDPOINT_STATUSES),
  created_at: Schema.String
})

/** A webhook delivery as the API answers it. */
export const DeliveryView = Schema.Struct({
  id: Schema.String,
  endpoint_id: Schema.String,
  event_id: Schema.String,
  event_type: Schema.String,
  status: Schema.Literals(WEBHOOK_DELIVERY_STATUSES),
  attempt_count: Schema.Int,
  next_attempt_at: Schema.NullOr(Schema.String),
  last_attempt_at: Schema.NullOr(Schema.String),
  created_at: Schema.String
})

/** One attempt of a webhook delivery as the API answers it. */
export const AttemptView = Schema.Struct({
  attempted_at: Schema.String,
  status_code: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  error: Schema.NullOr(Schema.String)
})

export class WebhookEndpointsApi extends HttpApiGroup.make("webhookEndpoints")
  .annotate(OpenApi.Description, "Where Tender sends signed event notifications, at most 16 per account.")
  .add(
  HttpApiEndpoint.post("create", "/v1/webhook_endpoints", {
    // The URL's own checks are the webhook domain's (Webhook.ts); its length and the rest are bounded here.
    payload: Schema.Struct({
      url: Url,
      enabled_events: optional(list(Code)),
      description: optional(Description)
    }),
    success: EndpointView.pipe(HttpApiSchema.status(201))
  }).annotate(OpenApi.Summary, "Create a webhook endpoint")
    .annotate(OpenApi.Description, "Registers an endpoint (at most 16 per account). https only (test mode also takes http on a loopback host); never a private, loopback, link-local or other special-purpose address, checked again at every delivery; no credentials in the URL; at most 2,048 characters."),
  HttpApiEndpoint.get("list", "/v1/webhook_endpoints", { success: Schema.Struct({ data: Schema.Array(EndpointView) }) }).annotate(OpenApi.Summary, "List webhook endpoints"),
  HttpApiEndpoint.get("get", "/v1/webhook_endpoints/:id", { params: { id: EndpointId }, success: EndpointView }).annotate(OpenApi.Summary, "Retrieve a webhook endpoint"),
  HttpApiEndpoint.post("update", "/v1/webhook_endpoints/:id", {
    params: { id: EndpointId },
    payload: Schema.Struct({
      url: optional(Url),
      enabled_events: optional(list(Code)),
      description: optional(Description),
      status: optional(Schema.Literals(WEBHOOK_ENDPOINT_STATUSES))
    }),
    success: EndpointView
  }).annotate(OpenApi.Summary, "Update a webhook endpoint"),
  HttpApiEndpoint.delete("delete", "/v1/webhook_endpoints/:id", {
    params: { id: EndpointId },
    success: Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) })
  }).annotate(OpenApi.Summary, "Delete a webhook endpoint")
) {}

export class WebhookDeliveriesApi extends HttpApiGroup.make("webhookDeliveries")
  .annotate(OpenApi.Description, "Each attempt to deliver an event to an endpoint; failed ones can be retried.")
  .add(
  HttpApiEndpoint.get("list", "/v1/webhook_deliveries", {
    query: {
      endpoint_id: optional(Reference),
      event_id: optional(Reference),
      status: optional(Schema.Literals(WEBHOOK_DELIVERY_STATUSES)),
      limit: optional(Schema.NumberFromString.check(Schema.isInt())),
      cursor: optional(Text)
    },
    success: page(DeliveryView)
  }).annotate(OpenApi.Summary, "List webhook deliveries"),
  HttpApiEndpoint.get("get", "/v1/webhook_deliveries/:id", {
    params: { id: DeliveryId },
    success: Schema.Struct({ ...DeliveryView.fields, attempts: Schema.Array(AttemptView) })
  }).annotate(OpenApi.Summary, "Retrieve a webhook delivery"),
  HttpApiEndpoint.post("retry", "/v1/webhook_deliveries/:id/retry", {
    params: { id: DeliveryId },
    success: DeliveryView
  }).annotate(OpenApi.Summary, "Retry a webhook delivery")
    .annotate(
      OpenApi.Description,
      "Makes a failed or exhausted delivery due now; otherwise 400 webhook_delivery_not_retryable. While an attempt of it is under way, 409 conflict."
    )
) {}
