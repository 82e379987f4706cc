/**
 * Webhooks: the outbox fan-out (every recorded event → one delivery per subscribed endpoint, in the
 * same unit of work), the merchant's endpoints, the delivery log, manual retries, and the
 * dispatcher that delivers each delivery at least once on contract.md's schedule.
 *
 * At least once, crash-safe: a delivery is claimed with a lease (its `next_attempt_at` moves to the
 * lease's end) in a committed unit of work before the POST; the attempt is recorded after it. A
 * worker that dies between the two leaves the delivery due again once the lease ends, and the next
 * attempt carries the same envelope id (receivers de-duplicate on it). Every write after the POST is
 * fenced by the claim's lease token, so a worker that outlived its lease (and whose delivery was
 * claimed again, or retried) records nothing over the new holder's work.
 */
import { isoOf, nowIso } from "../kernel/Time.ts"
import { Clock, Context, Deferred, Effect, Exit, Layer, Metric, Option, Queue, Random, Result, Schedule } from "effect"
import { webhookFirstAttemptLag } from "../kernel/OperationalMetrics.ts"
import type { Account } from "../accounts/Account.ts"
import { signingSecrets } from "../accounts/Account.ts"
import * as Cidr from "../kernel/Cidr.ts"
import { urlProblem } from "../payments/RequestChecks.ts"
import {
  Conflict,
  invalidField,
  NotFound,
  type ValidationFailed,
  WebhookDeliveryNotFound,
  WebhookDeliveryNotRetryable,
  WebhookLimitExceeded,
  WebhookNotFound
} from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import type { AccountId } from "../kernel/Ids.ts"
import type { PaymentEvent } from "../payments/Payment.ts"
import { EventRepo } from "../payments/PaymentPorts.ts"
import { AccountRepo } from "../accounts/AccountPorts.ts"
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
import * as StateMachine from "../kernel/StateMachine.ts"
import { decodeInput, pageOf, type SearchResult } from "../kernel/Search.ts"
import { HostResolver, type Listener, PayloadSigner, ServerListeners, WebhookDeliveryRepo, WebhookEndpointRepo, WebhookTransport } from "./WebhookPorts.ts"


// --- the outbox ---------------------------------------------------------------------------

/**
 * Records an event and fans it out to the account's subscribed endpoints. Call it inside the unit of
 * work of the change the event reports, so the change, the event and its deliveries commit together.
 */
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
          const event: PaymentEvent = { id: yield* ids.make("event"), created_at: yield* nowIso, ...draft, data: withoutClientSecret(draft.data) }
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

/**
 * What an address is, for the SSRF check of webhook endpoints: `loopback` (allowed only to a test-mode
 * `http` endpoint on a loopback host), `private` (allowed when the operator sets TENDER_WEBHOOK_ALLOW_PRIVATE),
 * `special` (never). Public addresses are in none of the ranges.
 *
 * Source: the IANA IPv4 and IPv6 Special-Purpose Address Registries
 * (iana.org/assignments/iana-ipv4-special-registry, …/iana-ipv6-special-registry, as of 2025), plus the
 * multicast blocks (IANA multicast registries), 6to4's retired relay anycast and IPv6 site-local. Blocks
 * whose registry entry says "globally reachable" but which no receiver lives in (192.0.0.0/24 as a
 * whole, NAT64's 64:ff9b::/96, Teredo and the rest of 2001::/23) are refused too: each carries or
 * reaches another address (an embedded IPv4, a tunnel) that this check could not see. IPv4-mapped
 * IPv6 (::ffff:0:0/96) is matched as the IPv4 address it carries (Cidr.ts).
 */
const SPECIAL_PURPOSE: ReadonlyArray<readonly [cidr: string, kind: "loopback" | "private" | "special", name: string]> = [
  ["0.0.0.0/8", "special", "this network (connects to the host itself on Linux)"],
  ["10.0.0.0/8", "private", "private-use"],
  ["100.64.0.0/10", "private", "shared address space (CGNAT)"],
  ["127.0.0.0/8", "loopback", "loopback"],
  ["169.254.0.0/16", "special", "link-local (cloud metadata services)"],
  ["172.16.0.0/12", "private", "private-use"],
  ["192.0.0.0/24", "special", "IETF protocol assignments"],
  ["192.0.2.0/24", "special", "documentation (TEST-NET-1)"],
  ["192.88.99.0/24", "special", "6to4 relay anycast (deprecated)"],
  ["192.168.0.0/16", "private", "private-use"],
  ["198.18.0.0/15", "special", "benchmarking"],
  ["198.51.100.0/24", "special", "documentation (TEST-NET-2)"],
  ["203.0.113.0/24", "special", "documentation (TEST-NET-3)"],
  ["224.0.0.0/4", "special", "multicast"],
  ["240.0.0.0/4", "special", "reserved (and 255.255.255.255, limited broadcast)"],
  ["::/128", "special", "unspecified"],
  ["::1/128", "loopback", "loopback"],
  ["::/96", "special", "IPv4-compatible (deprecated)"],
  ["64:ff9b::/96", "special", "NAT64 (IPv4-IPv6 translation)"],
  ["64:ff9b:1::/48", "special", "NAT64 (local-use translation)"],
  ["100::/64", "special", "discard-only"],
  ["100:0:0:1::/64", "special", "dummy prefix"],
  ["2001::/23", "special", "IETF protocol assignments (Teredo 2001::/32, benchmarking 2001:2::/48, ORCHID, …)"],
  ["2001:db8::/32", "special", "documentation"],
  ["2002::/16", "special", "6to4"],
  ["3fff::/20", "special", "documentation"],
  ["5f00::/16", "special", "segment routing (SRv6) SIDs"],
  ["fc00::/7", "private", "unique local (ULA)"],
  ["fe80::/10", "special", "link-local"],
  ["fec0::/10", "special", "site-local (deprecated)"],
  ["ff00::/8", "special", "multicast"]
]

const RANGES = SPECIAL_PURPOSE.map(([cidr, kind, name]) => ({ cidr: Cidr.parseCidr(cidr)!, kind, name }))

/** The special-purpose range an address is in, or `undefined` for a public one. */
const specialRangeOf = (ip: string) => RANGES.find((range) => Cidr.cidrContains(range.cidr, ip))

/** A host written as loopback (`URL.hostname` form: `localhost`, 127.x.x.x, `[::1]`). */
const isLoopbackHost = (host: string) => {
  const literal = host.replace(/^\[|\]$/g, "")
  return host === "localhost" || (Cidr.isValidIp(literal) && specialRangeOf(literal)?.kind === "loopback")
}

/**
 * The one way to reach loopback: `http` on a loopback host, a test-mode account's local receiver (live
 * mode refuses `http`, so a stored URL of this shape was registered in test mode).
 */
const isLocalReceiver = (url: URL) => url.protocol === "http:" && isLoopbackHost(url.hostname)

/**
 * The operator's receiver policy. `loopback` (`TENDER_WEBHOOK_ALLOW_LOOPBACK`, default on): test-mode
 * local receivers at all; a shared production deployment turns it off, since any merchant could
 * otherwise have the server POST to any loopback port (a port scan, an admin endpoint such as a
 * sidecar's). `deployment`: where this deployment listens, which no endpoint may target, asked at
 * every check (registration, each delivery) after the URL's host is resolved: each place a port on
 * every loopback address and on its `addresses`. Every `serve` process's (ServerListeners, shared
 * through storage, so a standalone `tender worker` knows them too), the database's, Redis's, and the
 * public, SDK and fields URLs' when they resolve to this deployment (webhooks/Deployment.ts in the
 * adapters works them out).
 */
export interface ReceiverPolicy {
  readonly loopback: boolean
  readonly deployment: Effect.Effect<ReadonlyArray<Listener>>
}

export const WebhookReceiverPolicy = Context.Reference<ReceiverPolicy>("@tender/domain/WebhookReceiverPolicy", {
  defaultValue: () => ({ loopback: true, deployment: Effect.succeed([]) })
})

/**
 * How often a serving process refreshes its ServerListeners row, and how old a row may be and still
 * count: three refreshes missed, the process is gone (killed, its host lost).
 */
export const LISTENER_HEARTBEAT_MS = 30_000
export const LISTENER_STALE_MS = 3 * LISTENER_HEARTBEAT_MS

/**
 * Keeps this process's ServerListeners row while the scope is open: written now, refreshed every
 * `everyMs`, deleted when the scope closes (a graceful stop). A refresh that fails (the database away
 * a moment) or hangs (a lock held on the table) is logged and the next one tries again: a heartbeat
 * that stopped would free the port to webhooks once the row went stale, while the server still
 * answers on it. A hanging one is given up after `everyMs` (interrupted: its statement cancelled).
 */
export const keepListed = Effect.fnUntraced(function*(process: string, listener: Listener, everyMs: number = LISTENER_HEARTBEAT_MS) {
  const listeners = yield* ServerListeners
  const beat = listeners.register(process, listener, LISTENER_STALE_MS).pipe(
    Effect.timeout(everyMs),
    Effect.catchCause((cause) => Effect.logWarning(`recording port ${listener.port} as this server's failed; trying again in ${everyMs} ms`, cause))
  )
  yield* Effect.acquireRelease(beat, () =>
    listeners.unregister(process).pipe(
      Effect.catchCause((cause) => Effect.logWarning(`port ${listener.port} could not be given back; it stops counting once stale`, cause))
    ))
  yield* Effect.forkScoped(Effect.repeat(beat, Schedule.spaced(everyMs)))
})

/** The port a URL reaches (its scheme's default when it names none). */
const portOfUrl = (url: URL) => url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80

/** Why a local receiver may not be used under the operator's policy, or `undefined`. */
const localReceiverRefusal = (policy: ReceiverPolicy) =>
  policy.loopback ? undefined : "must be https (loopback receivers are turned off on this server)"

/** Which of SPECIAL_PURPOSE's kinds an address is in (`loopback` for 127.0.0.0/8, ::1 and their IPv4-mapped forms), else `public`. */
export const addressKind = (address: string) => specialRangeOf(address)?.kind ?? "public"

/** Why `address`:`port` may not be reached because this deployment is there, or `undefined`. */
const deploymentRefusal = (address: string, port: number, deployment: ReadonlyArray<Listener>) => {
  const loopback = addressKind(address) === "loopback"
  const ours = deployment.some((place) =>
    place.port === port && (loopback || place.addresses.some((own) => Cidr.sameAddress(own, address)))
  )
  if (!ours) return undefined
  return loopback ? `must not point at loopback port ${port} (used by this server)` : `must not point at ${address} port ${port} (used by this server)`
}

/**
 * The operator's choice (`TENDER_WEBHOOK_ALLOW_PRIVATE`): endpoints may be on private-use, CGNAT and
 * unique-local addresses (receivers inside the operator's own network). Read at registration and at
 * every delivery.
 */
export const WebhookPrivateReceivers = Context.Reference<boolean>("@tender/domain/WebhookPrivateReceivers", {
  defaultValue: () => false
})

/** RFC 1035 / 1123 host names: letters, digits and hyphens, labels of 1–63, at most 253 in all. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i
const MAX_HOSTNAME = 253

const hostnameProblem = (hostname: string): string | undefined => {
  // An IP literal: the URL parser has already checked and normalised it (`[…]` for IPv6).
  if (hostname.startsWith("[") || Cidr.isValidIp(hostname)) return undefined
  const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname
  if (name.length > MAX_HOSTNAME) return `host must be at most ${MAX_HOSTNAME} characters`
  if (!name.split(".").every((label) => LABEL.test(label))) {
    return "host must be a domain name (labels of letters, digits and hyphens, at most 63 characters each) or an IP address"
  }
  return undefined
}

/**
 * What is wrong with an endpoint URL as written, whatever its host resolves to, or the parsed URL.
 * Live mode: https only. Test mode: https, or http on a loopback host (local receivers).
 */
const endpointUrlProblem = (raw: string, mode: Account["mode"], policy: ReceiverPolicy) => {
  const problem = urlProblem(raw)
  if (problem !== undefined) return problem
  const url = new URL(raw)
  if (url.username !== "" || url.password !== "") return "must not carry credentials"
  const host = hostnameProblem(url.hostname)
  if (host !== undefined) return host
  if (url.protocol === "https:") return url
  if (mode === "live") return "must be https in live mode"
  if (!isLocalReceiver(url)) return "must be https (http is allowed for loopback hosts in test mode)"
  return localReceiverRefusal(policy) ?? url
}

/** Why an endpoint may not be reached at `address` (what its host resolved to), or `undefined`. */
const addressRefusal = (address: string, allow: { readonly loopback: boolean; readonly private: boolean }) => {
  if (!Cidr.isValidIp(address)) return `resolves to ${address}, not an IP address`
  const range = specialRangeOf(address)
  if (range === undefined || (range.kind === "loopback" && allow.loopback) || (range.kind === "private" && allow.private)) {
    return undefined
  }
  return `must not point at ${address} (${range.name})`
}

/** The addresses a URL's host stands for: an IP literal itself, a name through the resolver. */
const addressesOf = (url: URL) => {
  const host = url.hostname.replace(/^\[|\]$/g, "")
  return Cidr.isValidIp(host) ? Effect.succeed([host]) : Effect.flatMap(HostResolver, (resolver) => resolver.resolve(host))
}

/**
 * Every address the host resolves to, checked: the first refusal, or the addresses. Registration and
 * each delivery ask (a name may point elsewhere since), and the transport connects only to these.
 * Beyond the address ranges, no address may be one of this deployment's at the URL's port.
 */
const checkAddresses = Effect.fnUntraced(function*(url: URL) {
  const allow = { loopback: isLocalReceiver(url), private: yield* WebhookPrivateReceivers }
  const addresses = yield* addressesOf(url)
  for (const address of addresses) {
    const refusal = addressRefusal(address, allow)
    if (refusal !== undefined) return { _tag: "Refused" as const, reason: refusal, of: "host" as const }
  }
  if (addresses.length > 0) {
    const deployment = yield* (yield* WebhookReceiverPolicy).deployment
    for (const address of addresses) {
      const refusal = deploymentRefusal(address, portOfUrl(url), deployment)
      if (refusal !== undefined) return { _tag: "Refused" as const, reason: refusal, of: "URL" as const }
    }
  }
  return { _tag: "Checked" as const, addresses }
})

/**
 * An endpoint URL as registered (create, or update of its URL): well-formed, its scheme allowed in the
 * account's mode, and every address its host resolves to allowed (loopback only to `http` on a
 * loopback host, in test mode; never an address:port of this deployment). A name that does not
 * resolve is refused in live mode; in test mode it may be registered (a receiver not set up yet), and
 * each delivery checks it again anyway.
 */
export const checkEndpointUrl = Effect.fnUntraced(function*(mode: Account["mode"], raw: string) {
  const url = endpointUrlProblem(raw, mode, yield* WebhookReceiverPolicy)
  if (typeof url === "string") return yield* invalidField("url", url)
  const checked = yield* checkAddresses(url)
  if (checked._tag === "Refused") return yield* invalidField("url", checked.reason)
  if (checked.addresses.length === 0 && mode === "live") return yield* invalidField("url", `host ${url.hostname} does not resolve`)
  return url.toString()
})

/**
 * Where a delivery to a stored endpoint URL may connect: its host resolved now and every address
 * checked as at registration (a URL stored before a rule existed is held to it too). The transport
 * connects to these addresses only, so a name re-pointed between this check and the connection (DNS
 * rebinding) reaches nothing else.
 */
export const deliveryTargets = Effect.fnUntraced(function*(raw: string) {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { _tag: "Refused" as const, reason: "endpoint URL is not a URL" }
  }
  if (url.protocol !== "https:" && !isLocalReceiver(url)) return { _tag: "Refused" as const, reason: "endpoint URL must be https" }
  // A local receiver registered before the operator turned loopback off.
  const local = isLocalReceiver(url) ? localReceiverRefusal(yield* WebhookReceiverPolicy) : undefined
  if (local !== undefined) return { _tag: "Refused" as const, reason: `endpoint URL ${local}` }
  const checked = yield* checkAddresses(url)
  if (checked._tag === "Refused") return { _tag: "Refused" as const, reason: `endpoint ${checked.of} ${checked.reason}` }
  if (checked.addresses.length === 0) return { _tag: "Refused" as const, reason: `host ${url.hostname} does not resolve` }
  return checked
})

// --- the use case ---------------------------------------------------------------------------

export interface DispatchOptions {
  /** Deliveries in flight at once in this process. */
  readonly concurrency: number
  /** Deliveries in flight at once per endpoint, so one slow endpoint cannot hold every slot. */
  readonly perEndpoint: number
  /**
   * Deliveries in flight at once per account, below `concurrency`: one tenant's hanging endpoints
   * (16 of them × perEndpoint would be every slot) leave the others' deliveries slots to run in.
   */
  readonly perAccount: number
  /** How long a claimed delivery stays with its worker before another may take it. */
  readonly leaseMs: number
}

export const DEFAULT_DISPATCH: DispatchOptions = {
  concurrency: 64,
  perEndpoint: 16,
  perAccount: 32,
  leaseMs: ATTEMPT_TIMEOUT_MS + 15_000
}

/** This process's attempts under way, by endpoint and by account. */
interface InFlight {
  readonly endpoints: Map<string, number>
  readonly accounts: Map<string, number>
}

const emptyInFlight = (): InFlight => ({ endpoints: new Map(), accounts: new Map() })

/** A claim's endpoints and accounts, read once for all its deliveries (`None`: gone). */
interface ClaimContext {
  readonly endpoints: Map<string, Option.Option<WebhookEndpoint>>
  readonly accounts: Map<string, Option.Option<Account>>
}

const emptyContext = (): ClaimContext => ({ endpoints: new Map(), accounts: new Map() })

/** Writes an attempt with its delivery's new state; whether its fence held. */
type Recorder = (delivery: WebhookDelivery, attempt: DeliveryAttempt) => Effect.Effect<boolean>

/** At most this many attempts in one write of the recorder. */
const RECORD_BATCH = 64

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
  /**
   * Makes a failed or exhausted delivery due now; anything else is `webhook_delivery_not_retryable`,
   * and one whose attempt is under way (it holds the lease) is `conflict`.
   */
  retryDelivery(account: Account | undefined, id: string): Effect.Effect<DeliveryView, WebhookDeliveryNotFound | WebhookDeliveryNotRetryable | Conflict>
  /** One dispatcher round: claims what is due and delivers it; returns how many attempts ran. */
  dispatchDue(options?: Partial<DispatchOptions>): Effect.Effect<number>
  /** Operator: events of any account, newest first. */
  listEvents(input: { readonly account_id?: string | undefined; readonly type?: string | undefined; readonly since?: string | undefined; readonly limit?: number | undefined; readonly cursor?: string | undefined }): Effect.Effect<SearchResult<Envelope & { readonly account_id: string }>, ValidationFailed>
  getEvent(id: string): Effect.Effect<{ readonly event: Envelope & { readonly account_id: string }; readonly deliveries: ReadonlyArray<DeliveryView> }, NotFound>
  /** The dispatcher, until interrupted: claims as slots free up, attempts run concurrently. */
  runDispatcher(options?: Partial<DispatchOptions> & { readonly idleMs?: number }): Effect.Effect<never>
}>()("@tender/domain/webhooks/Webhooks") {
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

      const allowPrivate = yield* WebhookPrivateReceivers
      const receivers = yield* WebhookReceiverPolicy
      const validateUrl = (account: Account, raw: string) =>
        checkEndpointUrl(account.mode, raw).pipe(
          Effect.provideService(HostResolver, resolver),
          Effect.provideService(WebhookPrivateReceivers, allowPrivate),
          Effect.provideService(WebhookReceiverPolicy, receivers)
        )

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

      // The search's shared decoder knows `since` as `created_from`; a refusal names the field the
      // caller sent (an unparsable time, or one outside the years storage holds).
      const listInput = (input: { readonly limit?: number | undefined; readonly cursor?: string | undefined; readonly since?: string | undefined }) =>
        decodeInput({ ...input, created_from: input.since }).pipe(
          Effect.mapError((error) => {
            const since = error.errors?.find((e) => e.field === "created_from")
            return since === undefined ? error : invalidField("since", since.message)
          }),
          Effect.map(({ created_to: _, ...base }) => base)
        )

      // --- the dispatcher --------------------------------------------------------------------

      /** Hands a claimed delivery back unattempted, due at `at`; fenced by its lease. */
      const handBack = (delivery: WebhookDelivery, at: number) =>
        deliveries.update(StateMachine.revise(delivery, { next_attempt_at: isoOf(at) }, isoOf(at)))

      /**
       * One attempt: POST the signed envelope, record what happened (through `record`, which may
       * batch it with others), schedule the next try. `batch` holds the claim's endpoints and
       * accounts, read once for all its deliveries right after the claim.
       */
      const attempt = Effect.fnUntraced(function*(delivery: WebhookDelivery, batch: ClaimContext, record: Recorder, posted: Effect.Effect<void> = Effect.void) {
        const started = yield* Clock.currentTimeMillis
        if (delivery.attempts === 0) yield* Metric.update(webhookFirstAttemptLag, Math.max(0, started - Date.parse(delivery.created_at)) / 1000)
        const event = yield* events.findAny(delivery.event_id)
        const endpoint = batch.endpoints.get(delivery.endpoint_id) ?? Option.none()
        const account = batch.accounts.get(delivery.account_id) ?? Option.none()
        if (Option.isSome(endpoint) && endpoint.value.status === "disabled") {
          // Disabled since the claim: paused, not attempted; the claim passes it over until enabled.
          yield* handBack(delivery, started)
          return
        }
        let outcome: { readonly status_code: number | null; readonly error: string | null; readonly duration_ms: number }
        const gone = Option.isNone(event) || Option.isNone(endpoint) || Option.isNone(account)
        if (gone) {
          // Nothing to send to any more: recorded as a failed attempt so the log says why.
          outcome = { status_code: null, error: Option.isNone(endpoint) ? "endpoint deleted" : "event or account gone", duration_ms: 0 }
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
        // The endpoint has its answer: its slot is free while the outcome is written (the lease
        // still holds the row, so no claim takes it meanwhile).
        yield* posted
        const at = yield* Clock.currentTimeMillis
        const attempts = delivery.attempts + 1
        const succeeded = outcome.error === null
        const delay = succeeded ? undefined : nextAttemptDelay(attempts, yield* Random.next)
        // Nothing left to deliver to (endpoint deleted): no later attempt can succeed.
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
        const recorded = yield* record(moved.success.next, {
          delivery_id: delivery.id,
          attempted_at: isoOf(started),
          ...outcome
        })
        if (!recorded) {
          // Our lease ran out and the delivery was claimed again (or retried): its holder records.
          yield* Effect.logWarning(`webhook attempt of ${delivery.id} dropped: its lease was lost`)
        }
      })

      /**
       * Claims due deliveries within what is left of each endpoint's and account's bound (the claim
       * counts this process's attempts in flight, so all it returns can run at once), and reads
       * their endpoints and accounts once for the batch. `inFlight` counts this process's running
       * attempts; what is returned is counted in it.
       */
      const claimAndRun = (options: DispatchOptions, inFlight: InFlight, capacity: number) =>
        Effect.gen(function*() {
          const none = { taken: [] as ReadonlyArray<WebhookDelivery>, context: emptyContext() }
          if (capacity <= 0) return none
          const at = yield* Clock.currentTimeMillis
          const saturated = (counts: Map<string, number>, bound: number) =>
            [...counts].filter(([, n]) => n >= bound).map(([id]) => id)
          const taken = yield* deliveries.claimDue({
            now: isoOf(at),
            leaseUntil: isoOf(at + options.leaseMs),
            lease: `${at.toString(36)}.${(yield* Random.nextInt).toString(36)}.${(yield* Random.nextInt).toString(36)}`,
            limit: capacity,
            perAccount: options.perAccount,
            perEndpoint: options.perEndpoint,
            excludeEndpoints: saturated(inFlight.endpoints, options.perEndpoint),
            excludeAccounts: saturated(inFlight.accounts, options.perAccount),
            busy: { endpoints: [...inFlight.endpoints], accounts: [...inFlight.accounts] }
          })
          if (taken.length === 0) return none
          for (const d of taken) {
            inFlight.endpoints.set(d.endpoint_id, (inFlight.endpoints.get(d.endpoint_id) ?? 0) + 1)
            inFlight.accounts.set(d.account_id, (inFlight.accounts.get(d.account_id) ?? 0) + 1)
          }
          const context = emptyContext()
          for (const id of new Set(taken.map((d) => d.endpoint_id))) context.endpoints.set(id, yield* endpoints.findAny(id))
          for (const id of new Set(taken.map((d) => d.account_id))) context.accounts.set(id, yield* accounts.findById(id as AccountId))
          return { taken, context }
        })

      const release = (inFlight: InFlight, delivery: WebhookDelivery) => {
        const decrement = (counts: Map<string, number>, key: string) => {
          const n = (counts.get(key) ?? 1) - 1
          if (n <= 0) counts.delete(key)
          else counts.set(key, n)
        }
        decrement(inFlight.endpoints, delivery.endpoint_id)
        decrement(inFlight.accounts, delivery.account_id)
      }

      /**
       * Records attempts as they finish, in batches: while one batch is being written, the attempts
       * finishing meanwhile queue up and go in the next write (one statement, one commit for all of
       * them), so the writes follow the database's pace rather than one round trip per attempt. An
       * attempt waits for its own batch; a failed write fails each attempt of it (their leases end
       * and they are attempted again). Runs until the scope closes.
       */
      const batchedRecorder = Effect.gen(function*() {
        type Pending = { readonly delivery: WebhookDelivery; readonly attempt: DeliveryAttempt; readonly done: Deferred.Deferred<boolean> }
        const queue = yield* Queue.unbounded<Pending>()
        yield* Effect.gen(function*() {
          const batch = yield* Queue.takeBetween(queue, 1, RECORD_BATCH)
          const written = yield* Effect.exit(deliveries.recordAttempts(batch.map(({ attempt, delivery }) => ({ attempt, delivery }))))
          for (const [i, pending] of batch.entries()) {
            yield* Deferred.done(pending.done, Exit.map(written, (recorded) => recorded[i]))
          }
        }).pipe(Effect.forever, Effect.forkScoped)
        const record: Recorder = (delivery, attempt) =>
          Effect.gen(function*() {
            const done = yield* Deferred.make<boolean>()
            yield* Queue.offer(queue, { delivery, attempt, done })
            return yield* Deferred.await(done)
          })
        return record
      })

      const dispatchDue = Effect.fn("Webhooks.dispatchDue")(function*(partial: Partial<DispatchOptions> = {}) {
        const options = { ...DEFAULT_DISPATCH, ...partial }
        const inFlight = emptyInFlight()
        const { context, taken } = yield* claimAndRun(options, inFlight, options.concurrency)
        yield* Effect.scoped(Effect.gen(function*() {
          const record = yield* batchedRecorder
          yield* Effect.forEach(taken, (d) => Effect.ensuring(attempt(d, context, record), Effect.sync(() => release(inFlight, d))), {
            concurrency: options.concurrency,
            discard: true
          })
        }))
        return taken.length
      })

      /**
       * The dispatcher loop: whenever slots are free it claims more (within each endpoint's and
       * account's bound), forks their attempts, and waits when nothing was due: until an attempt
       * frees a slot or `idleMs` passes. A slow endpoint
       * holds at most `perEndpoint` slots and an account at most `perAccount`, so the others keep
       * flowing.
       */
      const runDispatcher = (partial: Partial<DispatchOptions> & { readonly idleMs?: number } = {}) =>
        Effect.scoped(Effect.gen(function*() {
          const options = { ...DEFAULT_DISPATCH, ...partial }
          const idleMs = partial.idleMs ?? 200
          const inFlight = emptyInFlight()
          const record = yield* batchedRecorder
          let running = 0
          // A finished attempt frees a slot: it wakes an idle loop at once rather than after idleMs,
          // or one busy endpoint would be held to perEndpoint attempts per idle period.
          const wake = yield* Queue.sliding<void>(1)
          for (;;) {
            const { context, taken } = yield* claimAndRun(options, inFlight, options.concurrency - running).pipe(
              Effect.catchCause((cause) => Effect.as(Effect.logError("webhook claim failed", cause), { taken: [], context: emptyContext() }))
            )
            for (const d of taken) {
              running++
              // The endpoint's and account's slots free once the POST has its answer; the process's
              // once the attempt is recorded (so what waits to be written stays bounded too).
              let released = false
              const posted = Effect.andThen(Effect.sync(() => {
                if (!released) release(inFlight, d)
                released = true
              }), Queue.offer(wake, undefined))
              yield* attempt(d, context, record, posted).pipe(
                Effect.catchCause((cause) => Effect.logError(`webhook attempt ${d.id} failed to record`, cause)),
                Effect.ensuring(Effect.andThen(Effect.sync(() => {
                  running--
                }), posted)),
                Effect.forkChild
              )
            }
            if (taken.length === 0) yield* Effect.raceFirst(Effect.sleep(idleMs), Queue.take(wake))
          }
        }))

      return Webhooks.of({
        runDispatcher,
        createEndpoint: Effect.fn("Webhooks.createEndpoint")(function*(account, input) {
          const url = yield* validateUrl(account, input.url)
          const enabled = validateEvents(input.enabled_events)
          if (enabled instanceof Error) return yield* enabled
          if (input.description !== undefined && input.description.length > 500) {
            return yield* invalidField("description", "must be at most 500 characters")
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
          if (!(yield* endpoints.insert(endpoint, MAX_ENDPOINTS))) {
            return yield* new WebhookLimitExceeded({ message: `An account may have at most ${MAX_ENDPOINTS} webhook endpoints` })
          }
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
          // Not run beside an attempt under way: it records its outcome, which decides what is next.
          // The update is fenced by the lease read here, so a claim in between also lands here.
          const inFlight = new Conflict({ message: `Delivery ${id} is being attempted now; retry once the attempt is recorded` })
          if (Webhook.isLeased(delivery, at)) return yield* inFlight
          if (!(yield* deliveries.update(next))) return yield* inFlight
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
