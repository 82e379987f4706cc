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
import { MAX_FEED_WAITERS_PER_ACCOUNT } from "../../kernel/Limits.ts"
import { nowIso } from "../../kernel/Time.ts"
import type { PaymentEvent } from "../../payments/Payment.ts"
import { EventRepo } from "../../payments/PaymentPorts.ts"
import { cursorOf, type FeedInput, type FeedPage, type FeedPosition, feedRequest } from "../EventFeed.ts"
import { WebhookDeliveryRepo, WebhookEndpointRepo } from "../WebhookPorts.ts"
import { deliveryView, envelopeOf } from "../WebhookViews.ts"
import { fanOut, subscribers } from "./Record.ts"

/**
 * How often a waiting read asks storage again. The feed is a developer's loop (`tender listen`),
 * where half a second is immediate; one indexed read per waiting read per tick, and at most
 * MAX_FEED_WAITERS_PER_ACCOUNT waiting reads per account (FeedWaiters).
 */
export const FEED_POLL_MS = 500

/**
 * The feed reads waiting now, per account, in this process (the Webhooks layer holds one). Per
 * process rather than shared: it bounds what one server process spends on an account's waits (its
 * pool's connections), and needs no round trip; N processes allow N times the bound.
 */
export class FeedWaiters {
  private readonly waiting = new Map<string, number>()

  /** A place to wait for the account, if one is free: `release` it once the read answers. */
  readonly take = (accountId: string): Effect.Effect<boolean> =>
    Effect.sync(() => {
      const now = this.waiting.get(accountId) ?? 0
      if (now >= MAX_FEED_WAITERS_PER_ACCOUNT) return false
      this.waiting.set(accountId, now + 1)
      return true
    })

  readonly release = (accountId: string): Effect.Effect<void> =>
    Effect.sync(() => {
      const now = (this.waiting.get(accountId) ?? 1) - 1
      if (now <= 0) this.waiting.delete(accountId)
      else this.waiting.set(accountId, now)
    })
}

const feedView = (page: FeedPage<PaymentEvent>, limit: number) => ({
  data: page.events.map(envelopeOf),
  next_cursor: cursorOf(page.next),
  // A full page: more may be servable now, so a reader asks again at once.
  has_more: page.events.length === limit
})

/**
 * The account's events after the cursor (from about now without one), waiting up to `wait` seconds
 * for a first one; answers as soon as there is any, or empty with the cursor to continue from. A
 * read that would wait while the account already has MAX_FEED_WAITERS_PER_ACCOUNT waiting answers at
 * once instead, as with `wait=0`.
 */
export const readFeed = Effect.fn("Webhooks.readFeed")(function*(account: Account, input: FeedInput, waiters: FeedWaiters) {
  const request = feedRequest(input)
  if (request instanceof ValidationFailed) return yield* request
  const events = yield* EventRepo
  const read = (after: FeedPosition | undefined) =>
    events.feed({ account_id: account.id, after, types: request.types, limit: request.limit })
  const deadline = (yield* Clock.currentTimeMillis) + request.waitMs
  const first = yield* read(request.after ?? (yield* read(undefined)).next)
  if (first.events.length > 0 || request.waitMs === 0) return feedView(first, request.limit)
  const wait = Effect.gen(function*() {
    let page = first
    while (true) {
      const now = yield* Clock.currentTimeMillis
      if (page.events.length > 0 || now >= deadline) return feedView(page, request.limit)
      yield* Effect.sleep(Math.min(FEED_POLL_MS, deadline - now))
      page = yield* read(page.next)
    }
  })
  return yield* Effect.acquireUseRelease(
    waiters.take(account.id),
    (placed) => (placed ? wait : Effect.succeed(feedView(first, request.limit))),
    (placed) => (placed ? waiters.release(account.id) : Effect.void)
  )
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
