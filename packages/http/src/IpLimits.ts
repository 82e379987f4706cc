/**
 * Limits per client IP address, for the requests no account's own bucket covers (docs/decisions.md,
 * "Fair resource use"):
 *
 * - Routes without an API key (hosted checkout and sandbox pages, SDK assets and card fields, provider
 *   notifications and returns, the OpenAPI document and docs, unknown paths outside `/v1/`) spend one
 *   token of the IP's bucket `ip:<address>` per request. A refusal is 429 with `Retry-After`: the
 *   spec's envelope on API-shaped paths (`/v1/…`, provider notifications), a plain page elsewhere.
 *   The browser SDK's `/v1/client/…` routes keep their own per-IP bucket (client/ClientRoutes.ts),
 *   in their own error object, keyed by the same address.
 * - Unknown API keys: each one costs a hash and a query. An IP that presents more than its allowance
 *   of unknown keys (`unknown-key:ip:<address>`) gets 429 `rate_limited` and, until the bucket would
 *   let it try again, every further keyed request from it is refused before any key is looked up.
 *
 * The address is the socket's peer, unless the operator says how many proxies stand in front
 * (`trustedProxies`): then it is the X-Forwarded-For entry that many hops from the right, the one
 * the outermost trusted proxy saw. Entries further left are the client's own claims and never used.
 * The gateway checks an account's IP allowlist against the same address.
 */
import { isIP } from "node:net"
import { Clock, Effect, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Errors, RateLimiter } from "@tender/domain"
import { BoundedCache } from "@tender/domain/BoundedCache"
import * as ApiError from "./ApiError.ts"

export interface Limit {
  readonly perSecond: number
  readonly burst: number
}

export interface IpLimitOptions {
  /** Requests per IP on the routes without an API key. */
  readonly perIp: Limit
  /** Unknown API keys per IP before its keyed requests are refused unread. */
  readonly unknownKeys: Limit
  /** Proxies in front that append to X-Forwarded-For (0: the header is ignored). */
  readonly trustedProxies: number
}

export const DEFAULT_IP_LIMITS: IpLimitOptions = {
  perIp: { perSecond: 20, burst: 100 },
  // ten unknown keys at once, then one every ten seconds
  unknownKeys: { perSecond: 0.1, burst: 10 },
  trustedProxies: 0
}

/** IPs currently refused for unknown keys, kept in-process so the refusal costs no round trip. */
const MAX_BLOCKED = 10_000

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
  const entry = forwarded[Math.max(0, forwarded.length - trustedProxies)]
  return entry !== undefined && isIP(entry) !== 0 ? normalise(entry) : peer
}

/** A refusal of the gateway's keyed path: the error and the `Retry-After` it carries. */
export class Limited {
  readonly _tag = "Limited"
  readonly error: Errors.RateLimited
  readonly headers: Record<string, string>
  constructor(retryAfterSeconds: number) {
    this.error = new Errors.RateLimited({ message: `Too many requests from this address; retry after ${retryAfterSeconds}s` })
    this.headers = { "retry-after": String(retryAfterSeconds) }
  }
}

const CLIENT_PREFIX = "/v1/client/"

/** Paths a program calls (it reads the envelope); everything else public is a browser's page or asset. */
const isApiShaped = (path: string) => path.startsWith("/v1/") || /^\/providers\/[^/]+\/notifications\/?$/.test(path)

const refusalPage = (retryAfterSeconds: number) =>
  HttpServerResponse.text(
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Too many requests</title></head>" +
      `<body><h1>Too many requests</h1><p>Please wait ${retryAfterSeconds} seconds and try again.</p></body></html>`,
    {
      status: 429,
      contentType: "text/html; charset=utf-8",
      headers: {
        "retry-after": String(retryAfterSeconds),
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
    const ipOf = (request: HttpServerRequest.HttpServerRequest) => clientIp(request, options.trustedProxies)

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
        path.startsWith(CLIENT_PREFIX)
          ? route
          : Effect.flatMap(limiter.consume(`ip:${ipOf(request)}`, options.perIp), (taken) => {
            if (taken.allowed) return route
            if (!isApiShaped(path)) return Effect.succeed(refusalPage(taken.retryAfterSeconds))
            const refused = new Limited(taken.retryAfterSeconds)
            return Effect.succeed(HttpServerResponse.jsonUnsafe(ApiError.envelope(refused.error, requestId), {
              status: ApiError.statusOf(refused.error.code),
              headers: refused.headers
            }))
          }),

      /**
       * Looks a key up unless its IP is refused for unknown keys; an unknown key spends from the IP's
       * allowance, and the one that finds it empty is answered 429 (as is every keyed request from
       * the IP until the bucket would allow one again).
       */
      guardKey: <A, E extends { readonly _tag: string }, R>(
        request: HttpServerRequest.HttpServerRequest,
        authenticate: Effect.Effect<A, E, R>
      ): Effect.Effect<A, E | Limited, R> =>
        Effect.gen(function*() {
          const ip = ipOf(request)
          const now = yield* Clock.currentTimeMillis
          const until = blockedUntil.get(ip)
          if (until !== undefined && until > now) return yield* Effect.fail(new Limited(Math.max(1, Math.ceil((until - now) / 1000))))
          const refused = (error: E): Effect.Effect<never, E | Limited> =>
            error._tag !== "InvalidApiKey"
              ? Effect.fail(error)
              : Effect.flatMap(limiter.consume(`unknown-key:ip:${ip}`, options.unknownKeys), (taken): Effect.Effect<never, E | Limited> => {
                if (taken.allowed) return Effect.fail(error)
                blockedUntil.set(ip, now + taken.retryAfterSeconds * 1000)
                return Effect.fail(new Limited(taken.retryAfterSeconds))
              })
          return yield* Effect.catch(authenticate, refused)
        })
    }
  })
