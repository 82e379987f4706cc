/**
 * The webhook transport over node:http / node:https: one POST per attempt, with the signed headers
 * and the exact body bytes, over a kept-alive connection (see `Agents`). Whatever happens is an outcome, never a
 * failure: any HTTP answer is `Answered` (the domain decides that only a 2xx succeeds), and a refused
 * target, a timeout, a refused connection or a name that does not resolve is `Failed` with a reason
 * the delivery log can show.
 *
 * SSRF: before every attempt the host is resolved through the HostResolver port and each address
 * checked (`deliveryTargets`, the same rules as registration, this deployment's own addresses and
 * ports included); the socket then connects to those
 * addresses only (a `lookup` that answers with them), while SNI, certificate checks and the Host
 * header keep the name. A name re-pointed at an internal address after the check (DNS rebinding)
 * is never asked again. Redirects are not followed; a response body is read to 64 KiB at most.
 *
 * Connections are kept alive (issue 13: a new TCP and TLS handshake per attempt capped the rate to
 * one endpoint), in one agent per origin *and checked address set*: a reused socket was connected
 * to an address of the set that this attempt's own check has just allowed again, so keeping it
 * skips no check. An endpoint whose name now resolves elsewhere gets another agent (new
 * connections, to the new addresses only). https agents reuse TLS sessions (node's default cache).
 *
 * Where this deployment listens (the receiver policy's `deployment`: every server's row) is asked
 * of storage for every attempt; PostgreSQL keeps it in process and forgets it when a server starts
 * listening (ServerListenersPg, issue 24), so a new server is refused as a target at once.
 */
import * as http from "node:http"
import * as https from "node:https"
import { isIP, type LookupFunction } from "node:net"
import { type DeliveryOutcome, deliveryTargets, HostResolver, RESPONSE_BYTES, WebhookPrivateReceivers, WebhookReceiverPolicy, WebhookTransport } from "@tender/domain"
import { Clock, Effect, Layer } from "effect"

/** Read at most this much of a response before dropping the connection: nobody reads it. */
export const DRAIN_LIMIT_BYTES = 64 * 1024

/** Node reports several addresses tried in turn (Happy Eyeballs) as one AggregateError. */
const reasonOf = (error: unknown): string => {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return [...new Set(error.errors.map(reasonOf))].join("; ")
  }
  if (!(error instanceof Error)) return String(error)
  if (error.message !== "") return error.message
  const code = (error as { readonly code?: unknown }).code
  return typeof code === "string" ? code : error.name
}

/**
 * A resolver for the socket that answers with the checked addresses whatever it is asked: the
 * connection can only go where the check looked. Node asks for one address, or for all of them
 * (`all: true`, when it races IPv4 and IPv6).
 */
const pinnedLookup = (addresses: ReadonlyArray<string>): LookupFunction => (_hostname, options, callback) => {
  const entries = addresses.map((address) => ({ address, family: isIP(address) }))
  if (options.all === true) callback(null, entries)
  else callback(null, entries[0].address, entries[0].family)
}

type PostRequest = Parameters<WebhookTransport["Service"]["post"]>[0]
type Reply = { readonly status: number; readonly body?: string } | { readonly error: string }

/** At most this many agents (origin × address set) are kept; the least recently used one is closed. */
export const MAX_AGENTS = 256

/** Kept-alive agents by origin and checked addresses, least recently used first. */
class Agents {
  private readonly byKey = new Map<string, http.Agent>()

  for(url: URL, addresses: ReadonlyArray<string>): http.Agent {
    const key = `${url.protocol}//${url.host} ${[...addresses].sort().join(",")}`
    let agent = this.byKey.get(key)
    if (agent !== undefined) this.byKey.delete(key)
    else {
      const options: http.AgentOptions = { keepAlive: true, maxFreeSockets: 32, lookup: pinnedLookup(addresses) }
      agent = url.protocol === "https:" ? new https.Agent(options) : new http.Agent(options)
    }
    this.byKey.set(key, agent)
    if (this.byKey.size > MAX_AGENTS) {
      const [oldest, evicted] = this.byKey.entries().next().value!
      this.byKey.delete(oldest)
      evicted.destroy()
    }
    return agent
  }

  close() {
    for (const agent of this.byKey.values()) agent.destroy()
    this.byKey.clear()
  }
}

const exchange = (request: PostRequest, url: URL, agent: http.Agent, addresses: ReadonlyArray<string>, timeoutMs: number, interrupted: AbortSignal) =>
  new Promise<Reply>((resolve) => {
    const timeout = AbortSignal.timeout(timeoutMs)
    let status: number | undefined
    // The start of the body, kept for the log (RESPONSE_BYTES); the rest is drained unread.
    const kept: Array<Buffer> = []
    let keptBytes = 0
    // Once the status is in, the attempt has its answer: a body cut short (limit, timeout, reset) does not change it.
    const settle = (reply: Reply) =>
      resolve(status === undefined ? reply : { status, body: Buffer.concat(kept).subarray(0, RESPONSE_BYTES).toString("utf8") })
    const options: https.RequestOptions = {
      method: "POST",
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      headers: { ...request.headers, "content-length": String(request.body.byteLength) },
      // Kept alive, to the addresses this attempt checked only (the agent is theirs).
      agent,
      lookup: pinnedLookup(addresses),
      signal: AbortSignal.any([timeout, interrupted])
    }
    const outgoing = (url.protocol === "https:" ? https : http).request(options, (response) => {
      status = response.statusCode ?? 0
      let read = 0
      response.on("data", (chunk: Buffer) => {
        if (keptBytes < RESPONSE_BYTES) {
          kept.push(chunk)
          keptBytes += chunk.byteLength
        }
        read += chunk.byteLength
        // Past the limit the connection is dropped rather than read on (an endless body would hold the slot).
        if (read > DRAIN_LIMIT_BYTES) {
          outgoing.destroy()
          settle({ status: status! })
        }
      })
      response.on("end", () => settle({ status: status! }))
      response.on("error", () => settle({ status: status! }))
      response.on("close", () => settle({ status: status! }))
    })
    outgoing.on("error", (error) => settle({ error: timeout.aborted ? `timed out after ${request.timeoutMs} ms` : reasonOf(error) }))
    outgoing.end(request.body)
  })

/** Needs the HostResolver the registration check uses (HostResolverDns in production). */
export const layer: Layer.Layer<WebhookTransport, never, HostResolver> = Layer.effect(
  WebhookTransport,
  Effect.gen(function*() {
    const resolver = yield* HostResolver
    const allowPrivate = yield* WebhookPrivateReceivers
    const policy = yield* WebhookReceiverPolicy
    const agents = yield* Effect.acquireRelease(Effect.sync(() => new Agents()), (agents) => Effect.sync(() => agents.close()))
    return WebhookTransport.of({
      post: (request) =>
        Effect.gen(function*() {
          const started = yield* Clock.currentTimeMillis
          const elapsed = Effect.map(Clock.currentTimeMillis, (now) => Math.max(0, now - started))
          // Resolving counts against the attempt's timeout, as connecting does.
          const targets = yield* deliveryTargets(request.url).pipe(
            Effect.provideService(HostResolver, resolver),
            Effect.provideService(WebhookPrivateReceivers, allowPrivate),
            Effect.provideService(WebhookReceiverPolicy, policy),
            Effect.timeoutOption(request.timeoutMs)
          )
          let result: Reply
          if (targets._tag === "None") result = { error: `timed out after ${request.timeoutMs} ms` }
          else if (targets.value._tag === "Refused") result = { error: targets.value.reason }
          else {
            const { addresses } = targets.value
            const remaining = Math.max(1, request.timeoutMs - (yield* elapsed))
            const url = new URL(request.url)
            const agent = agents.for(url, addresses)
            result = yield* Effect.promise((interrupted) => exchange(request, url, agent, addresses, remaining, interrupted))
          }
          const duration_ms = yield* elapsed
          const outcome: DeliveryOutcome = "status" in result
            ? { _tag: "Answered", status: result.status, duration_ms, body: result.body }
            : { _tag: "Failed", error: result.error, duration_ms }
          return outcome
        }).pipe(Effect.withSpan("WebhookTransportHttp.post"))
    })
  })
)
