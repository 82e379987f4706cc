/**
 * Operations on the event log beyond the outbox: the merchant's feed of its account's events (a
 * long poll: GET /v1/events, what `tender listen` reads), one of its events, and the operator's
 * resend of an event (`tender events resend`).
 */
import { Clock, Effect, Option } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { invalidField, NotFound, ValidationFailed, WebhookNotFound } from "../../kernel/Errors.ts"
import { Ids } from "../../kernel/Ids.ts"
import { UnitOfWork } from "../../kernel/Ports.ts"
import { nowIso } from "../../kernel/Time.ts"
import type { PaymentEvent } from "../../payments/Payment.ts"
import { EventRepo } from "../../payments/PaymentPorts.ts"
import { cursorOf, type FeedInput, type FeedPage, type FeedPosition, feedRequest } from "../EventFeed.ts"
import { WebhookDeliveryRepo, WebhookEndpointRepo } from "../WebhookPorts.ts"
import { deliveryView, envelopeOf } from "../WebhookViews.ts"
import { fanOut, subscribers } from "./Record.ts"

/**
 * How often a waiting read asks storage again. The feed is a developer's loop (`tender listen`),
 * where a quarter second is immediate; one indexed read per waiting listener per tick is cheap.
 */
export const FEED_POLL_MS = 250

const feedView = (page: FeedPage<PaymentEvent>, limit: number) => ({
  data: page.events.map(envelopeOf),
  next_cursor: cursorOf(page.next),
  // A full page: more may be servable now, so a reader asks again at once.
  has_more: page.events.length === limit
})

/**
 * The account's events after the cursor (from now without one), waiting up to `wait` seconds for
 * a first one; answers as soon as there is any, or empty with the cursor to continue from.
 */
export const readFeed = Effect.fn("Webhooks.readFeed")(function*(account: Account, input: FeedInput) {
  const request = feedRequest(input)
  if (request instanceof ValidationFailed) return yield* request
  const events = yield* EventRepo
  const read = (after: FeedPosition | undefined) =>
    events.feed({ account_id: account.id, after, types: request.types, limit: request.limit })
  let after = request.after ?? (yield* read(undefined)).next
  const deadline = (yield* Clock.currentTimeMillis) + request.waitMs
  while (true) {
    const page = yield* read(after)
    const now = yield* Clock.currentTimeMillis
    if (page.events.length > 0 || now >= deadline) return feedView(page, request.limit)
    after = page.next
    yield* Effect.sleep(Math.min(FEED_POLL_MS, deadline - now))
  }
})

/** The account's event with this id, as webhooks carry it; another account's is not found. */
export const getAccountEvent = Effect.fn("Webhooks.getAccountEvent")(function*(account: Account, id: string) {
  const event = yield* (yield* EventRepo).findAny(id)
  if (Option.isNone(event) || event.value.account_id !== account.id) return yield* new NotFound({ message: `No event ${id}` })
  return envelopeOf(event.value)
})

/**
 * Operator: a new delivery of a recorded event, due now, to the named endpoint (enabled or not: a
 * disabled one's waits until it is enabled, as every delivery does), or to every enabled endpoint
 * of the event's account subscribed to its type. The endpoint must be the event's account's.
 */
export const resendEvent = Effect.fn("Webhooks.resendEvent")(function*(id: string, endpointId: string | undefined) {
  const found = yield* (yield* EventRepo).findAny(id)
  if (Option.isNone(found)) return yield* new NotFound({ message: `No event ${id}` })
  const event = found.value
  const endpoints = yield* WebhookEndpointRepo
  let targets
  if (endpointId === undefined) {
    targets = subscribers(event, yield* endpoints.list(event.account_id))
  } else {
    const endpoint = yield* endpoints.findAny(endpointId)
    if (Option.isNone(endpoint)) return yield* new WebhookNotFound({ message: `No webhook endpoint ${endpointId}` })
    if (endpoint.value.account_id !== event.account_id) {
      return yield* invalidField(
        "endpoint",
        `${endpointId} belongs to account ${endpoint.value.account_id}, not to ${event.account_id} (the account of ${id})`
      )
    }
    targets = [endpoint.value]
  }
  const ids = yield* Ids
  const deliveryIds = yield* Effect.forEach(targets, () => ids.make("webhookDelivery"))
  const deliveries = fanOut(event, targets, deliveryIds, yield* nowIso)
  if (deliveries.length > 0) yield* (yield* UnitOfWork).transaction((yield* WebhookDeliveryRepo).insert(...deliveries))
  return { event: { ...envelopeOf(event), account_id: event.account_id }, deliveries: deliveries.map(deliveryView) }
})
