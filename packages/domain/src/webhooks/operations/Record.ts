/**
 * Operation: record an event (the outbox). Every event is written with the change it reports and
 * fanned out, in the same unit of work, to one delivery per enabled endpoint of its account
 * subscribed to its type; the dispatcher then delivers each (Dispatch.ts).
 */
import { Context, Effect, Layer } from "effect"
import { Ids } from "../../kernel/Ids.ts"
import { nowIso } from "../../kernel/Time.ts"
import type { PaymentEvent } from "../../payments/Payment.ts"
import { EventRepo } from "../../payments/PaymentPorts.ts"
import * as Webhook from "../Webhook.ts"
import { WebhookDeliveryRepo, WebhookEndpointRepo } from "../WebhookPorts.ts"

/** An event as its emitter states it; the outbox gives it its id and time. */
export type EventDraft = Omit<PaymentEvent, "id" | "created_at">

/**
 * contract.md, Secrets at rest: "webhook event payloads carry none". A card form's client secret is
 * a bearer grant for the browser: the merchant's server has it from the create response, and an
 * event, stored and sent to every endpoint, keeps only the action's type and expiry.
 */
export const withoutClientSecret = (data: Record<string, unknown>): Record<string, unknown> => {
  const action = data.next_action
  if (typeof action !== "object" || action === null || !("client_secret" in action)) return data
  const { client_secret: _secret, ...rest } = action as Record<string, unknown>
  return { ...data, next_action: rest }
}

/** The endpoints an event goes to: enabled, and subscribed to its type. */
export const subscribers = (event: PaymentEvent, endpoints: ReadonlyArray<Webhook.WebhookEndpoint>) =>
  endpoints.filter((endpoint) => Webhook.matches(endpoint, event.type))

/**
 * The fan-out (pure): one new delivery, due at once, per subscriber, the i-th with `ids[i]`; made
 * at `at` (the event's time when it is recorded, later for an operator's resend).
 */
export const fanOut = (
  event: PaymentEvent,
  subscribed: ReadonlyArray<Webhook.WebhookEndpoint>,
  ids: ReadonlyArray<string>,
  at: string = event.created_at
): ReadonlyArray<Webhook.WebhookDelivery> =>
  subscribed.map((endpoint, i) =>
    Webhook.born({
      id: ids[i]!,
      account_id: event.account_id,
      endpoint_id: endpoint.id,
      event_id: event.id,
      event_type: event.type,
      attempts: 0,
      next_attempt_at: at,
      last_attempt_at: null,
      created_at: at
    })
  )

/**
 * Records the event (a fresh `evt_…` id, created now) and its deliveries; returns it as stored. Call
 * it inside the unit of work of the change the event reports, so the three commit together.
 */
export const record = Effect.fnUntraced(function*(draft: EventDraft) {
  const ids = yield* Ids
  const endpoints = yield* WebhookEndpointRepo
  const deliveries = yield* WebhookDeliveryRepo
  const event: PaymentEvent = { id: yield* ids.make("event"), created_at: yield* nowIso, ...draft, data: withoutClientSecret(draft.data) }
  yield* (yield* EventRepo).append(event)
  const subscribed = subscribers(event, yield* endpoints.list(event.account_id))
  const deliveryIds = yield* Effect.forEach(subscribed, () => ids.make("webhookDelivery"))
  yield* deliveries.insert(...fanOut(event, subscribed, deliveryIds))
  return event
})

/** The transactional outbox: records an event and its deliveries in the unit of work of the change it reports. */
export class Outbox extends Context.Service<Outbox, {
  /** Records the event (a fresh `evt_…` id, created now) and returns it as stored. */
  record(event: EventDraft): Effect.Effect<PaymentEvent>
}>()("@tender/domain/Outbox") {
  static readonly layer = Layer.effect(
    Outbox,
    Effect.gen(function*() {
      const context = Context.pick(EventRepo, WebhookEndpointRepo, WebhookDeliveryRepo, Ids)(yield* Effect.context<EventRepo | WebhookEndpointRepo | WebhookDeliveryRepo | Ids>())
      return Outbox.of({ record: (draft) => Effect.provideContext(record(draft), context) })
    })
  )
}
