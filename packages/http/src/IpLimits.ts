/**
 * Limits per client IP address, for the requests no account's own bucket covers (docs/decisions.md,
 * "Fair resource use"):
 *
 * - Routes without an API key (hosted checkout and sandbox pages, SDK assets and card fields, provider
 *   notifications and returns, the OpenAPI document and docs, unknown paths outside `/v1/`) spend one
 *   token of the IP's bucket `ip:<address>` per request, and say it in the `RateLimit-*` headers
 *   (RateLimitHeaders.ts). A refusal is 429 with `Retry-After`: the
 *   spec's envelope on API-shaped paths (`/v1/…`, provider notifications), a plain page elsewhere.
 *   The browser SDK's `/v1/client/…` routes keep their own per-IP bucket (client/ClientRoutes.ts),
 *   in their own error object, keyed by the same address.
 * - Provider notifications have their own, larger bucket (`notify:ip:<address>`, `notifications`):
 *   a provider posts from few addresses, and its bursts must not be refused by the pages' budget.
 *   They are not exempt: an unverified one still costs a channel lookup before its HMAC is checked.
 * - Unknown API keys: each one costs a hash and a query. An IP that presents more than its allowance
 *   of unknown keys (`unknown-key:ip:<address>`) gets 429 `rate_limited` and, until the bucket would
 *   let it try again, every further keyed request from it bearing a key not seen to authenticate in
 *   this process is refused before it is looked up. Keys that did authenticate here recently are
 *   checked as usual: a NAT or a load balancer shared with a scanner does not lock merchants out.
 *   A publishable key sent as a Bearer key costs a query too, and spends the same allowance.
 *
 * The address is the socket's peer, unless the operator says how many proxies stand in front
 * (`trustedProxies`): then it is the X-Forwarded-For entry that many hops from the right, the one
 * the outermost trusted proxy saw. Entries further left are the client's own claims and never used;
 * a header with fewer entries than there are proxies did not come through all of them, so the peer
 * is used. The gateway checks an account's IP allowlist against this address; the buckets key it by
 * the network a client owns (Cidr.clientNetwork: an IPv6 address by its /64).
 */
import { createHash } from "node:crypto"
import { isIP } from "node:net"
import { Clock, Effect, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Cidr, Errors, RateLimiter, type RateLimitDecision } from "@tender/domain"
import { BoundedCache } from "@tender/domain/kernel/BoundedCache"
import * as ApiError from "./ApiError.ts"
import * as RateLimitHeaders from "./RateLimitHeaders.ts"
import { HEALTH_PATH, READY_PATH } from "./Health.ts"

export interface Limit {
  readonly perSecond: number
  readonly burst: number
}

export interface IpLimitOptions {
  /** Requests per IP on the routes without an API key. */
  readonly perIp: Limit
  /** Requests per IP to `/providers/{channel_id}/notifications`, apart from `perIp`. */
  readonly notifications: Limit
  /** Unknown API keys per IP before its keyed requests are refused unread. */
  readonly unknownKeys: Limit
  /** Proxies in front that append to X-Forwarded-For (0: the header is ignored). */
  readonly trustedProxies: number
}

export const DEFAULT_IP_LIMITS: IpLimitOptions = {
  perIp: { perSecond: 20, burst: 100 },
  // a provider's notification bursts come from few addresses
  notifications: { perSecond: 200, burst: 1000 },
  // ten unknown keys at once, then one every ten seconds
  unknownKeys: { perSecond: 0.1, burst: 10 },
  trustedProxies: 0
}

/** IPs currently refused for unknown keys, kept in-process so the refusal costs no round trip. */
const MAX_BLOCKED = 10_000

/** Keys (by hash) that authenticated in this process: they pass an address's unknown-key refusal. */
const MAX_KNOWN_KEYS = 10_000

const keyHash = (key: string) => createHash("sha256").update(key).digest("base64url")

/** `::ffff:192.0.2.1` (an IPv4 peer on a dual-stack socket) is `192.0.2.1`: one address, one bucket. */
const normalise = (address: string): string => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  return mapped !== null ? mapped[1]! : address.toLowerCase()
}

/** The client's address for rate limiting (see the module's comment for X-Forwarded-For). */
export const clientIp = (request: HttpServerRequest.HttpServerRequest, trustedProxies: number): string => {
  const peer = normalise(Option.getOrElse(request.remoteAddress, () => "unknown"))
  if (trustedProxies <= 0) return peer
  const forwarded = (request.headers["x-forwarded-for"] ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
  // fewer entries than proxies: the header did not come through all of them, the client wrote it
  if (forwarded.length < trustedProxies) return peer
  const entry = forwarded[forwarded.length - trustedProxies]
  return entry !== undefined && isIP(entry) !== 0 ? normalise(entry) : peer
}

/** The bucket of a client's address: the network it owns (an IPv6 address by its /64). */
export const clientBucket = (request: HttpServerRequest.HttpServerRequest, trustedProxies: number): string =>
  Cidr.clientNetwork(clientIp(request, trustedProxies))

/** A refusal of the gateway's keyed path: the error and the `Retry-After` and `RateLimit-*` it carries. */
export class Limited {
  readonly _tag = "Limited"
  readonly error: Errors.RateLimited
  readonly headers: Record<string, string>
  constructor(limit: Limit, decision: RateLimitDecision) {
    this.error = new Errors.RateLimited({ message: `Too many requests from this address; retry after ${decision.retryAfterSeconds}s` })
    this.headers = RateLimitHeaders.of(limit, decision)
  }
}

const CLIENT_PREFIX = "/v1/client/"

/**
 * Health probes (Health.ts) spend from no bucket: load balancers poll them often from few
 * addresses, and they are cheap. /metrics keeps the per-IP limit: a scrape queries the database.
 */
const PROBES = new Set<string>([HEALTH_PATH, READY_PATH])

/** Paths a program calls (it reads the envelope); everything else public is a browser's page or asset. */
const isNotification = (path: string) => /^\/providers\/[^/]+\/notifications\/?$/.test(path)
const isApiShaped = (path: string) => path.startsWith("/v1/") || isNotification(path)

/** Errors of a key that names no account the server API serves: each one cost a lookup. */
const UNKNOWN_KEY_TAGS: ReadonlySet<string> = new Set(["InvalidApiKey", "PublishableApiKeyNotAllowed"])

const refusalPage = (retryAfterSeconds: number, rateHeaders: Record<string, string>) =>
  HttpServerResponse.text(
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Too many requests</title></head>" +
      `<body><h1>Too many requests</h1><p>Please wait ${retryAfterSeconds} seconds and try again.</p></body></html>`,
    {
      status: 429,
      contentType: "text/html; charset=utf-8",
      headers: {
        ...rateHeaders,
        "cache-control": "no-store",
        "content-security-policy": "default-src 'none'",
        "x-frame-options": "DENY"
      }
    }
  )

export const make = (options: IpLimitOptions) =>
  Effect.gen(function*() {
    const limiter = yield* RateLimiter
    const blockedUntil = new BoundedCache<string, number>(MAX_BLOCKED)
    const knownKeys = new BoundedCache<string, true>(MAX_KNOWN_KEYS)
    const ipOf = (request: HttpServerRequest.HttpServerRequest) => clientIp(request, options.trustedProxies)
    const bucketOf = (request: HttpServerRequest.HttpServerRequest) => clientBucket(request, options.trustedProxies)
    // The operator is told once that X-Forwarded-For arrives but is not used: all clients behind a
    // proxy then share the proxy's buckets, and TENDER_TRUSTED_PROXIES is probably unset.
    let forwardedWarned = options.trustedProxies > 0
    const warnForwarded = (request: HttpServerRequest.HttpServerRequest) => {
      if (forwardedWarned || request.headers["x-forwarded-for"] === undefined) return Effect.void
      forwardedWarned = true
      return Effect.logWarning(
        "X-Forwarded-For received but trustedProxies is 0: per-IP limits and allowlists use the socket's peer " +
          "(set TENDER_TRUSTED_PROXIES to the number of proxies in front)"
      )
    }

    return {
      /** The client's address as these limits (and the account's allowlist) see it. */
      clientIp: ipOf,
      /**
       * A route without an API key: `route` when the IP's bucket has a token, else the 429 (the
       * SDK's routes pass straight through to their own bucket).
       */
      guardPublic: <E, R>(
        request: HttpServerRequest.HttpServerRequest,
        path: string,
        requestId: string,
        route: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
      ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
        path.startsWith(CLIENT_PREFIX) || PROBES.has(path)
          ? route
          : Effect.gen(function*() {
            yield* warnForwarded(request)
            const limit = isNotification(path) ? options.notifications : options.perIp
            const taken = yield* limiter.consume(`${isNotification(path) ? "notify:ip" : "ip"}:${bucketOf(request)}`, limit)
            const headers = RateLimitHeaders.of(limit, taken)
            if (taken.allowed) return RateLimitHeaders.set(yield* route, headers)
            if (!isApiShaped(path)) return refusalPage(taken.retryAfterSeconds, headers)
            const refused = new Limited(limit, taken)
            return HttpServerResponse.jsonUnsafe(ApiError.envelope(refused.error, requestId), {
              status: ApiError.statusOf(refused.error.code),
              headers: refused.headers
            })
          }),

      /**
       * Looks `key` up unless its IP is refused for unknown keys and the key has not authenticated
       * here before; an unknown (or publishable) key spends from the IP's allowance, and the one that
       * finds it empty is answered 429 (as is every unseen key from the IP until the bucket would
       * allow one again).
       */
      guardKey: <A, E extends { readonly _tag: string }, R>(
        request: HttpServerRequest.HttpServerRequest,
        key: string,
        authenticate: Effect.Effect<A, E, R>
      ): Effect.Effect<A, E | Limited, R> =>
        Effect.gen(function*() {
          yield* warnForwarded(request)
          const ip = bucketOf(request)
          const hash = keyHash(key)
          const now = yield* Clock.currentTimeMillis
          const until = blockedUntil.get(ip)
          if (until !== undefined && until > now && !knownKeys.has(hash)) {
            // Nothing spends the bucket while the address is refused: at `until` it holds one token,
            // and refills the rest at its rate from there.
            const untilMs = until - now
            return yield* Effect.fail(new Limited(options.unknownKeys, {
              allowed: false,
              retryAfterSeconds: Math.max(1, Math.ceil(untilMs / 1000)),
              remaining: 0,
              resetSeconds: Math.ceil((untilMs + ((options.unknownKeys.burst - 1) * 1000) / options.unknownKeys.perSecond) / 1000)
            }))
          }
          const refused = (error: E): Effect.Effect<never, E | Limited> =>
            !UNKNOWN_KEY_TAGS.has(error._tag)
              ? Effect.fail(error)
              : Effect.flatMap(limiter.consume(`unknown-key:ip:${ip}`, options.unknownKeys), (taken): Effect.Effect<never, E | Limited> => {
                if (taken.allowed) return Effect.fail(error)
                blockedUntil.set(ip, now + taken.retryAfterSeconds * 1000)
                return Effect.fail(new Limited(options.unknownKeys, taken))
              })
          const account = yield* Effect.catch(authenticate, refused)
          knownKeys.set(hash, true)
          return account
        })
    }
  })
