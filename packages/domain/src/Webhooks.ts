/**
 * Webhooks: the outbox fan-out (every recorded event → one delivery per subscribed endpoint, in the
 * same unit of work), the merchant's endpoints, the delivery log, manual retries, and the
 * dispatcher that delivers each delivery at least once on contract.md's schedule.
 *
 * At least once, crash-safe: a delivery is claimed with a lease (its `next_attempt_at` moves to the
 * lease's end) in a committed unit of work before the POST; the attempt is recorded after it. A
 * worker that dies between the two leaves the delivery due again once the lease ends, and the next
 * attempt carries the same envelope id (receivers de-duplicate on it).
 */
import { isoOf, nowIso } from "./Time.ts"
import { Clock, Context, Effect, Layer, Option, Queue, Random, Result } from "effect"
import type { Account } from "./Account.ts"
import { signingSecrets } from "./Account.ts"
import * as Cidr from "./Cidr.ts"
import {
  invalidField,
  NotFound,
  type ValidationFailed,
  WebhookDeliveryNotFound,
  WebhookDeliveryNotRetryable,
  WebhookLimitExceeded,
  WebhookNotFound
} from "./Errors.ts"
import type { Conflict } from "./Errors.ts"
import { Ids } from "./Ids.ts"
import type { AccountId } from "./Ids.ts"
import type { PaymentEvent } from "./Payment.ts"
import { EventRepo } from "./PaymentPorts.ts"
import { AccountRepo } from "./Ports.ts"
import {
  ATTEMPT_TIMEOUT_MS,
  type DeliveryAttempt,
  type DeliveryStatus,
  type DeliveryTrigger,
  EVENT_TYPES,
  matches,
  MAX_ATTEMPTS,
  MAX_ENDPOINTS,
  nextAttemptDelay,
  type WebhookDelivery,
  type WebhookEndpoint
} from "./Webhook.ts"
import * as Webhook from "./Webhook.ts"
import * as StateMachine from "./StateMachine.ts"
import { decodeInput, pageOf, type SearchResult } from "./Search.ts"
import { HostResolver, PayloadSigner, WebhookDeliveryRepo, WebhookEndpointRepo, WebhookTransport } from "./WebhookPorts.ts"


// --- the outbox ---------------------------------------------------------------------------

/**
 * Records an event and fans it out to the account's subscribed endpoints. Call it inside the unit of
 * work of the change the event reports, so the change, the event and its deliveries commit together.
 */
/** An event as its emitter states it; the outbox gives it its id and time. */
export type EventDraft = Omit<PaymentEvent, "id" | "created_at">

export class Outbox extends Context.Service<Outbox, {
  /** Records the event (a fresh `evt_…` id, created now) and returns it as stored. */
  record(event: EventDraft): Effect.Effect<PaymentEvent>
}>()("@tender/domain/Outbox") {
  static readonly layer = Layer.effect(
    Outbox,
    Effect.gen(function*() {
      const events = yield* EventRepo
      const endpoints = yield* WebhookEndpointRepo
      const deliveries = yield* WebhookDeliveryRepo
      const ids = yield* Ids
      return Outbox.of({
        record: Effect.fnUntraced(function*(draft) {
          const event: PaymentEvent = { id: yield* ids.make("event"), created_at: yield* nowIso, ...draft }
          yield* events.append(event)
          for (const endpoint of yield* endpoints.list(event.account_id)) {
            if (!matches(endpoint, event.type)) continue
            yield* deliveries.insert(Webhook.born({
              id: yield* ids.make("webhookDelivery"),
              account_id: event.account_id,
              endpoint_id: endpoint.id,
              event_id: event.id,
              event_type: event.type,
              attempts: 0,
              next_attempt_at: event.created_at,
              last_attempt_at: null,
              created_at: event.created_at
            }))
          }
          return event
        })
      })
    })
  )
}

// --- views --------------------------------------------------------------------------------

export interface EndpointView {
  readonly id: string
  readonly url: string
  readonly enabled_events: ReadonlyArray<string>
  readonly description: string | null
  readonly status: WebhookEndpoint["status"]
  readonly created_at: string
}

export interface DeliveryView {
  readonly id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly event_type: string
  readonly status: DeliveryStatus
  readonly attempt_count: number
  readonly next_attempt_at: string | null
  readonly last_attempt_at: string | null
  readonly created_at: string
}

export interface AttemptView {
  readonly attempted_at: string
  readonly status_code: number | null
  readonly duration_ms: number
  readonly error: string | null
}

export interface Envelope {
  readonly id: string
  readonly type: string
  readonly created_at: string
  readonly livemode: boolean
  readonly processing_profile: string | null
  readonly data: Record<string, unknown>
}

const endpointView = (e: WebhookEndpoint): EndpointView => ({
  id: e.id,
  url: e.url,
  enabled_events: e.enabled_events,
  description: e.description,
  status: e.status,
  created_at: e.created_at
})

const deliveryView = (d: WebhookDelivery): DeliveryView => ({
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

const attemptView = (a: DeliveryAttempt): AttemptView => ({
  attempted_at: a.attempted_at,
  status_code: a.status_code,
  duration_ms: a.duration_ms,
  error: a.error
})

export const envelopeOf = (event: PaymentEvent): Envelope => ({
  id: event.id,
  type: event.type,
  created_at: event.created_at,
  livemode: event.livemode,
  processing_profile: event.processing_profile,
  data: event.data
})

// --- endpoint URLs --------------------------------------------------------------------------

/** Loopback, private, link-local, CGNAT and unspecified ranges: never a live webhook target (SSRF). */
const INTERNAL_RANGES = [
  "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16",
  "::/128", "::1/128", "fc00::/7", "fe80::/10"
].map((c) => Cidr.parseCidr(c)!)

export const isInternalAddress = (ip: string): boolean => INTERNAL_RANGES.some((range) => Cidr.cidrContains(range, ip))

const isLoopbackHost = (host: string) =>
  host === "localhost" || host === "[::1]" || (Cidr.isValidIp(host) && Cidr.cidrContains(INTERNAL_RANGES[3], host))

// --- the use case ---------------------------------------------------------------------------

export interface DispatchOptions {
  /** Deliveries in flight at once in this process. */
  readonly concurrency: number
  /** Deliveries in flight at once per endpoint, so one slow endpoint cannot hold every slot. */
  readonly perEndpoint: number
  /** How long a claimed delivery stays with its worker before another may take it. */
  readonly leaseMs: number
}

export const DEFAULT_DISPATCH: DispatchOptions = { concurrency: 32, perEndpoint: 4, leaseMs: ATTEMPT_TIMEOUT_MS + 15_000 }

export interface DeliverySearchInput {
  readonly endpoint_id?: string | undefined
  readonly event_id?: string | undefined
  readonly status?: ReadonlyArray<DeliveryStatus> | undefined
  readonly since?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

export class Webhooks extends Context.Service<Webhooks, {
  createEndpoint(account: Account, input: { readonly url: string; readonly enabled_events?: ReadonlyArray<string> | undefined; readonly description?: string | undefined }): Effect.Effect<EndpointView, ValidationFailed | WebhookLimitExceeded>
  listEndpoints(account: Account): Effect.Effect<{ readonly data: ReadonlyArray<EndpointView> }>
  getEndpoint(account: Account, id: string): Effect.Effect<EndpointView, WebhookNotFound>
  updateEndpoint(account: Account, id: string, input: { readonly url?: string | undefined; readonly enabled_events?: ReadonlyArray<string> | undefined; readonly description?: string | undefined; readonly status?: "enabled" | "disabled" | undefined }): Effect.Effect<EndpointView, WebhookNotFound | ValidationFailed | Conflict>
  deleteEndpoint(account: Account, id: string): Effect.Effect<{ readonly id: string; readonly deleted: true }, WebhookNotFound>
  listDeliveries(account: Account | undefined, input: DeliverySearchInput): Effect.Effect<SearchResult<DeliveryView>, ValidationFailed>
  getDelivery(account: Account | undefined, id: string): Effect.Effect<DeliveryView & { readonly attempts: ReadonlyArray<AttemptView> }, WebhookDeliveryNotFound>
  /** Makes a failed or exhausted delivery due now; anything else is `webhook_delivery_not_retryable`. */
  retryDelivery(account: Account | undefined, id: string): Effect.Effect<DeliveryView, WebhookDeliveryNotFound | WebhookDeliveryNotRetryable>
  /** One dispatcher round: claims what is due and delivers it; returns how many attempts ran. */
  dispatchDue(options?: Partial<DispatchOptions>): Effect.Effect<number>
  /** Operator: events of any account, newest first. */
  listEvents(input: { readonly account_id?: string | undefined; readonly type?: string | undefined; readonly since?: string | undefined; readonly limit?: number | undefined; readonly cursor?: string | undefined }): Effect.Effect<SearchResult<Envelope & { readonly account_id: string }>, ValidationFailed>
  getEvent(id: string): Effect.Effect<{ readonly event: Envelope & { readonly account_id: string }; readonly deliveries: ReadonlyArray<DeliveryView> }, NotFound>
  /** The dispatcher, until interrupted: claims as slots free up, attempts run concurrently. */
  runDispatcher(options?: Partial<DispatchOptions> & { readonly idleMs?: number }): Effect.Effect<never>
}>()("@tender/domain/Webhooks") {
  static readonly layer = Layer.effect(
    Webhooks,
    Effect.gen(function*() {
      const endpoints = yield* WebhookEndpointRepo
      const deliveries = yield* WebhookDeliveryRepo
      const events = yield* EventRepo
      const accounts = yield* AccountRepo
      const transport = yield* WebhookTransport
      const resolver = yield* HostResolver
      const signer = yield* PayloadSigner
      const ids = yield* Ids

      const validateUrl = Effect.fnUntraced(function*(account: Account, raw: string) {
        let url: URL
        try {
          url = new URL(raw)
        } catch {
          return yield* invalidField("url", "must be an absolute URL")
        }
        if (url.username !== "" || url.password !== "") return yield* invalidField("url", "must not carry credentials")
        if (account.mode === "live") {
          if (url.protocol !== "https:") return yield* invalidField("url", "must be https in live mode")
          const host = url.hostname.replace(/^\[|\]$/g, "")
          const addresses = Cidr.isValidIp(host) ? [host] : yield* resolver.resolve(host)
          if (addresses.length === 0) return yield* invalidField("url", `host ${host} does not resolve`)
          if (addresses.some(isInternalAddress)) {
            return yield* invalidField("url", "must not point at a private, loopback or link-local address")
          }
        } else if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
          return yield* invalidField("url", "must be https (http is allowed for loopback hosts in test mode)")
        }
        return url.toString()
      })

      const validateEvents = (input: ReadonlyArray<string> | undefined): ReadonlyArray<string> | ValidationFailed => {
        if (input === undefined) return ["*"]
        if (input.length === 0) return invalidField("enabled_events", "must name at least one event type, or \"*\"")
        const unknown = input.filter((t) => t !== "*" && !(EVENT_TYPES as ReadonlyArray<string>).includes(t))
        if (unknown.length > 0) return invalidField("enabled_events", `unknown event types: ${unknown.join(", ")}`)
        return [...new Set(input)]
      }

      const loadEndpoint = (account: Account, id: string) =>
        Effect.flatMap(endpoints.find(account.id, id), Option.match({
          onNone: () => Effect.fail(new WebhookNotFound({ message: `No webhook endpoint ${id}` })),
          onSome: Effect.succeed
        }))

      const loadDelivery = (account: Account | undefined, id: string) =>
        Effect.flatMap(account === undefined ? deliveries.findAny(id) : deliveries.find(account.id, id), Option.match({
          onNone: () => Effect.fail(new WebhookDeliveryNotFound({ message: `No webhook delivery ${id}` })),
          onSome: Effect.succeed
        }))

      const listInput = (input: { readonly limit?: number | undefined; readonly cursor?: string | undefined; readonly since?: string | undefined }) =>
        input.since !== undefined && Number.isNaN(Date.parse(input.since))
          ? Effect.fail(invalidField("since", "must be an ISO 8601 timestamp"))
          : Effect.map(decodeInput({ ...input, created_from: input.since }), ({ created_to: _, ...base }) => base)

      // --- the dispatcher --------------------------------------------------------------------

      /** One attempt: POST the signed envelope, record what happened, schedule the next try. */
      const attempt = Effect.fnUntraced(function*(delivery: WebhookDelivery) {
        const started = yield* Clock.currentTimeMillis
        const event = yield* events.findAny(delivery.event_id)
        const endpoint = yield* endpoints.findAny(delivery.endpoint_id)
        const account = yield* accounts.findById(delivery.account_id as AccountId)
        let outcome: { readonly status_code: number | null; readonly error: string | null; readonly duration_ms: number }
        const gone = Option.isNone(event) || Option.isNone(endpoint) || Option.isNone(account) || endpoint.value.status !== "enabled"
        if (gone) {
          // Nothing to send to any more: recorded as a failed attempt so the log says why.
          outcome = { status_code: null, error: Option.isNone(endpoint) ? "endpoint deleted" : "endpoint disabled", duration_ms: 0 }
        } else {
          const body = new TextEncoder().encode(JSON.stringify(envelopeOf(event.value)))
          const url = new URL(endpoint.value.url)
          const result = yield* transport.post({
            url: endpoint.value.url,
            headers: {
              "content-type": "application/json",
              "x-signature": signer.sign(signingSecrets(account.value, started), Math.floor(started / 1000), url.pathname, body),
              "x-event-id": event.value.id,
              "x-event-type": event.value.type
            },
            body,
            timeoutMs: ATTEMPT_TIMEOUT_MS
          })
          outcome = result._tag === "Answered"
            ? {
              status_code: result.status,
              error: result.status >= 200 && result.status < 300 ? null : `HTTP ${result.status}`,
              duration_ms: result.duration_ms
            }
            : { status_code: null, error: result.error, duration_ms: result.duration_ms }
        }
        const at = yield* Clock.currentTimeMillis
        const attempts = delivery.attempts + 1
        const succeeded = outcome.error === null
        const delay = succeeded ? undefined : nextAttemptDelay(attempts, yield* Random.next)
        // Nothing left to deliver to (endpoint deleted or disabled): no later attempt can succeed.
        const trigger: DeliveryTrigger = succeeded
          ? "attempt_succeeded"
          : gone || delay === undefined || attempts >= MAX_ATTEMPTS
          ? "attempt_failed_final"
          : "attempt_failed"
        const moved = Webhook.transition(delivery, trigger, isoOf(at), {
          attempts,
          next_attempt_at: trigger === "attempt_failed" ? isoOf(at + delay!) : null,
          last_attempt_at: isoOf(started)
        })
        // The claim only hands out pending or failed deliveries: any other is a bug.
        if (Result.isFailure(moved)) return yield* Effect.die(new Error(moved.failure))
        yield* deliveries.recordAttempt(moved.success.next, { delivery_id: delivery.id, attempted_at: isoOf(started), ...outcome })
      })

      /**
       * Claims due deliveries, leaving out endpoints already at their per-endpoint bound, and runs
       * their attempts concurrently. `inFlight` counts this process's running attempts per endpoint.
       */
      const claimAndRun = (options: DispatchOptions, inFlight: Map<string, number>, capacity: number) =>
        Effect.gen(function*() {
          if (capacity <= 0) return []
          const at = yield* Clock.currentTimeMillis
          const saturated = [...inFlight].filter(([, n]) => n >= options.perEndpoint).map(([id]) => id)
          const claimed = yield* deliveries.claimDue({
            now: isoOf(at),
            leaseUntil: isoOf(at + options.leaseMs),
            limit: capacity,
            excludeEndpoints: saturated
          })
          // Within one claim an endpoint may still appear more often than its bound allows: the
          // surplus is handed back, due at once, for the next round (not left to wait out its lease).
          const taken: Array<WebhookDelivery> = []
          for (const d of claimed) {
            const n = inFlight.get(d.endpoint_id) ?? 0
            if (n >= options.perEndpoint) {
              yield* deliveries.update(StateMachine.revise(d, { next_attempt_at: isoOf(at) }, d.updated_at))
              continue
            }
            inFlight.set(d.endpoint_id, n + 1)
            taken.push(d)
          }
          return taken
        })

      const release = (inFlight: Map<string, number>, endpointId: string) => {
        const n = (inFlight.get(endpointId) ?? 1) - 1
        if (n <= 0) inFlight.delete(endpointId)
        else inFlight.set(endpointId, n)
      }

      const dispatchDue = Effect.fn("Webhooks.dispatchDue")(function*(partial: Partial<DispatchOptions> = {}) {
        const options = { ...DEFAULT_DISPATCH, ...partial }
        const inFlight = new Map<string, number>()
        const taken = yield* claimAndRun(options, inFlight, options.concurrency)
        yield* Effect.forEach(taken, (d) => Effect.ensuring(attempt(d), Effect.sync(() => release(inFlight, d.endpoint_id))), {
          concurrency: options.concurrency,
          discard: true
        })
        return taken.length
      })

      /**
       * The dispatcher loop: whenever slots are free it claims more (endpoints at their bound left
       * out), forks their attempts, and polls again after `idleMs` when nothing was due. A slow
       * endpoint holds at most `perEndpoint` slots, so the others keep flowing.
       */
      const runDispatcher = (partial: Partial<DispatchOptions> & { readonly idleMs?: number } = {}) =>
        Effect.gen(function*() {
          const options = { ...DEFAULT_DISPATCH, ...partial }
          const idleMs = partial.idleMs ?? 200
          const inFlight = new Map<string, number>()
          let running = 0
          // A finished attempt frees a slot: it wakes an idle loop at once rather than after idleMs,
          // or one busy endpoint would be held to perEndpoint attempts per idle period.
          const wake = yield* Queue.sliding<void>(1)
          for (;;) {
            const taken = yield* claimAndRun(options, inFlight, options.concurrency - running).pipe(
              Effect.catchCause((cause) => Effect.as(Effect.logError("webhook claim failed", cause), []))
            )
            for (const d of taken) {
              running++
              yield* attempt(d).pipe(
                Effect.catchCause((cause) => Effect.logError(`webhook attempt ${d.id} failed to record`, cause)),
                Effect.ensuring(Effect.andThen(Effect.sync(() => {
                  running--
                  release(inFlight, d.endpoint_id)
                }), Queue.offer(wake, undefined))),
                Effect.forkChild
              )
            }
            if (taken.length === 0) yield* Effect.raceFirst(Effect.sleep(idleMs), Queue.take(wake))
          }
        })

      return Webhooks.of({
        runDispatcher,
        createEndpoint: Effect.fn("Webhooks.createEndpoint")(function*(account, input) {
          const url = yield* validateUrl(account, input.url)
          const enabled = validateEvents(input.enabled_events)
          if (enabled instanceof Error) return yield* enabled
          if (input.description !== undefined && input.description.length > 500) {
            return yield* invalidField("description", "must be at most 500 characters")
          }
          if ((yield* endpoints.list(account.id)).length >= MAX_ENDPOINTS) {
            return yield* new WebhookLimitExceeded({ message: `An account may have at most ${MAX_ENDPOINTS} webhook endpoints` })
          }
          const at = yield* nowIso
          const endpoint: WebhookEndpoint = {
            id: yield* ids.make("webhookEndpoint"),
            account_id: account.id,
            url,
            enabled_events: enabled,
            description: input.description ?? null,
            status: "enabled",
            created_at: at,
            updated_at: at,
            version: 1
          }
          yield* endpoints.insert(endpoint)
          return endpointView(endpoint)
        }),
        listEndpoints: (account) => Effect.map(endpoints.list(account.id), (list) => ({ data: list.map(endpointView) })),
        getEndpoint: (account, id) => Effect.map(loadEndpoint(account, id), endpointView),
        updateEndpoint: Effect.fn("Webhooks.updateEndpoint")(function*(account, id, input) {
          const current = yield* loadEndpoint(account, id)
          const url = input.url === undefined ? current.url : yield* validateUrl(account, input.url)
          const enabled = input.enabled_events === undefined ? current.enabled_events : validateEvents(input.enabled_events)
          if (enabled instanceof Error) return yield* enabled
          const next: WebhookEndpoint = {
            ...current,
            url,
            enabled_events: enabled,
            description: input.description ?? current.description,
            status: input.status ?? current.status,
            updated_at: yield* nowIso,
            version: current.version + 1
          }
          yield* endpoints.update(next)
          return endpointView(next)
        }),
        deleteEndpoint: Effect.fn("Webhooks.deleteEndpoint")(function*(account, id) {
          yield* loadEndpoint(account, id)
          yield* endpoints.delete(account.id, id)
          return { id, deleted: true as const }
        }),
        listDeliveries: Effect.fn("Webhooks.listDeliveries")(function*(account, input) {
          const base = yield* listInput(input)
          const rows = yield* deliveries.search({
            account_id: account?.id,
            endpoint_id: input.endpoint_id,
            event_id: input.event_id,
            status: input.status,
            ...base
          })
          return pageOf(rows, rows.data.map(deliveryView))
        }),
        getDelivery: Effect.fn("Webhooks.getDelivery")(function*(account, id) {
          const delivery = yield* loadDelivery(account, id)
          return { ...deliveryView(delivery), attempts: (yield* deliveries.attempts(delivery.id)).map(attemptView) }
        }),
        retryDelivery: Effect.fn("Webhooks.retryDelivery")(function*(account, id) {
          const delivery = yield* loadDelivery(account, id)
          const at = yield* nowIso
          // An exhausted delivery gets one more attempt; failing it, it is exhausted again.
          const moved = Webhook.transition(delivery, "retried", at, {
            attempts: delivery.status === "exhausted" ? MAX_ATTEMPTS - 1 : delivery.attempts,
            next_attempt_at: at
          })
          if (Result.isFailure(moved)) {
            return yield* new WebhookDeliveryNotRetryable({
              message: `Delivery ${id} is ${delivery.status}; only failed or exhausted deliveries can be retried`
            })
          }
          const next = moved.success.next
          yield* deliveries.update(next)
          return deliveryView(next)
        }),
        dispatchDue,
        listEvents: Effect.fn("Webhooks.listEvents")(function*(input) {
          const base = yield* listInput(input)
          const rows = yield* events.search({ account_id: input.account_id, type: input.type, ...base })
          return pageOf(rows, rows.data.map((e) => ({ ...envelopeOf(e), account_id: e.account_id })))
        }),
        getEvent: Effect.fn("Webhooks.getEvent")(function*(id) {
          const event = yield* events.findAny(id)
          if (Option.isNone(event)) return yield* new NotFound({ message: `No event ${id}` })
          const rows = yield* deliveries.search({ event_id: id, limit: 100 })
          return { event: { ...envelopeOf(event.value), account_id: event.value.account_id }, deliveries: rows.data.map(deliveryView) }
        })
      })
    })
  )
}
