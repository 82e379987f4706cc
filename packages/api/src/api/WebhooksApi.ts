import { Schema, SchemaTransformation } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_ENDPOINT_STATUSES } from "../Statuses.ts"
import { ID_PREFIXES, prefixed } from "../Ids.ts"
import * as Limits from "../Limits.ts"
import { Code, Description, Id, Int, int, list, Message, Reference, Text, Url } from "./Bounded.ts"
import { page } from "./PaymentSchemas.ts"

const optional = Schema.optional
const EndpointId = prefixed(ID_PREFIXES.webhookEndpoint)
const DeliveryId = prefixed(ID_PREFIXES.webhookDelivery)

/** A webhook endpoint as the API answers it. */
export const EndpointView = Schema.Struct({
  id: Id,
  url: Url,
  enabled_events: list(Code),
  description: Schema.NullOr(Description),
  status: Schema.Literals(WEBHOOK_ENDPOINT_STATUSES),
  created_at: Code
})

/** A webhook delivery as the API answers it. */
export const DeliveryView = Schema.Struct({
  id: Id,
  endpoint_id: Id,
  event_id: Id,
  event_type: Code,
  status: Schema.Literals(WEBHOOK_DELIVERY_STATUSES),
  attempt_count: Int,
  next_attempt_at: Schema.NullOr(Code),
  last_attempt_at: Schema.NullOr(Code),
  created_at: Code
})

/** One attempt of a webhook delivery as the API answers it. */
export const AttemptView = Schema.Struct({
  attempted_at: Code,
  status_code: Schema.NullOr(Int),
  duration_ms: Int,
  error: Schema.NullOr(Message)
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
  HttpApiEndpoint.get("list", "/v1/webhook_endpoints", { success: Schema.Struct({ data: list(EndpointView, Limits.MAX_WEBHOOK_ENDPOINTS) }) }).annotate(OpenApi.Summary, "List webhook endpoints")
    .annotate(OpenApi.Description, "Every webhook endpoint of this account (at most 16)."),
  HttpApiEndpoint.get("get", "/v1/webhook_endpoints/:id", { params: { id: EndpointId }, success: EndpointView }).annotate(OpenApi.Summary, "Retrieve a webhook endpoint")
    .annotate(OpenApi.Description, "One webhook endpoint of this account by its id; any other id is 404 webhook_not_found."),
  HttpApiEndpoint.post("update", "/v1/webhook_endpoints/:id", {
    params: { id: EndpointId },
    payload: Schema.Struct({
      url: optional(Url),
      enabled_events: optional(list(Code)),
      description: optional(Description),
      status: optional(Schema.Literals(WEBHOOK_ENDPOINT_STATUSES))
    }),
    success: EndpointView
  }).annotate(OpenApi.Summary, "Update a webhook endpoint")
    .annotate(OpenApi.Description, "Changes an endpoint's url, events, description or status (enabled or disabled); fields left out are kept."),
  HttpApiEndpoint.delete("delete", "/v1/webhook_endpoints/:id", {
    params: { id: EndpointId },
    success: Schema.Struct({ id: Id, deleted: Schema.Literal(true) })
  }).annotate(OpenApi.Summary, "Delete a webhook endpoint")
    .annotate(OpenApi.Description, "Removes the endpoint from this account.")
) {}

export class WebhookDeliveriesApi extends HttpApiGroup.make("webhookDeliveries")
  .annotate(OpenApi.Description, "Each attempt to deliver an event to an endpoint; failed ones can be retried.")
  .add(
  HttpApiEndpoint.get("list", "/v1/webhook_deliveries", {
    query: {
      endpoint_id: optional(Reference),
      event_id: optional(Reference),
      status: optional(Schema.Literals(WEBHOOK_DELIVERY_STATUSES)),
      // A query's values are text: the digits of an integer from 1 to MAX_PAGE.
      limit: optional(Code.pipe(Schema.decodeTo(int(1, Limits.MAX_PAGE), SchemaTransformation.numberFromString))),
      cursor: optional(Text)
    },
    success: page(DeliveryView)
  }).annotate(OpenApi.Summary, "List webhook deliveries")
    .annotate(OpenApi.Description, "This account's webhook deliveries, filtered by endpoint, event or status; a page of at most `limit` (1–100, default 20) and the cursor of the next."),
  HttpApiEndpoint.get("get", "/v1/webhook_deliveries/:id", {
    params: { id: DeliveryId },
    // Every attempt, oldest first: not bounded in count (an operator's retries each add one; docs/decisions.md).
    success: Schema.Struct({ ...DeliveryView.fields, attempts: Schema.Array(AttemptView) }).annotate({ identifier: "DeliveryWithAttempts" })
  }).annotate(OpenApi.Summary, "Retrieve a webhook delivery")
    .annotate(OpenApi.Description, "One delivery of this account by its id, with every attempt made of it, oldest first."),
  HttpApiEndpoint.post("retry", "/v1/webhook_deliveries/:id/retry", {
    params: { id: DeliveryId },
    success: DeliveryView
  }).annotate(OpenApi.Summary, "Retry a webhook delivery")
    .annotate(
      OpenApi.Description,
      "Makes a failed or exhausted delivery due now; otherwise 400 webhook_delivery_not_retryable. While an attempt of it is under way, 409 conflict."
    )
) {}
