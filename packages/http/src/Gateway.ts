/**
 * The gateway: one global middleware in front of the router that applies every cross-cutting rule
 * of the spec's Conventions and Authentication, in the spec's order, and renders every error in the
 * envelope:
 *
 *   API key (401) → IP allowlist (403) → rate limit (429) → content type (415) → body cap (413)
 *   → request signature (401) → replay cache (401 / 409) → body on a bodiless method (400)
 *   → account status on writes (409) → JSON well-formedness, text and depth (400) → route (404 / 405) → handler.
 *
 * Every response carries `X-Request-Id`, and `X-Signature` whenever the request named an account
 * (its signing secrets are the keys; a request with no valid key has no secret to sign with), and
 * the `RateLimit-*` headers of the bucket it spent from (RateLimitHeaders.ts).
 *
 * Replay defence (issue 12; docs/decisions.md): a response is signed like a request, so the
 * signatures of responses a request could be made to match enter the replay cache, and a request
 * presenting one is 401 `invalid_signature`; every accepted write's signature is claimed there too,
 * so the same signed write arriving again (same path, body and second) is 409 `conflict`.
 */
import { Cause, Clock, Effect, Option } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { HttpServerError } from "effect/http"
import { Account, Accounts, Cidr, Errors, Ids, RateLimiter } from "@tender/domain"
import { ALREADY_ACCEPTED, contentDigest, SIGNATURE_HEADER, signatureHeader, verify } from "@tender/api/Signature"
import { expiresAt, ReplayCache } from "@tender/adapters/replay/ReplayCache"
import * as ApiError from "./ApiError.ts"
import * as IpLimits from "./IpLimits.ts"
import * as JsonBody from "./JsonBody.ts"
import * as Metrics from "./Metrics.ts"
import * as RateLimitHeaders from "./RateLimitHeaders.ts"
import { belowApi, CurrentRequest, type RequestState } from "./RequestContext.ts"
import { routedPath, type RouteTable } from "./Routes.ts"

export interface GatewayOptions {
  readonly maxBodyBytes: number
  readonly defaultRateLimit: { readonly perSecond: number; readonly burst: number }
  readonly routes: RouteTable
  /** Per client IP: routes without a key, and unknown keys (IpLimits.ts); default DEFAULT_IP_LIMITS. */
  readonly ipLimits?: IpLimits.IpLimitOptions | undefined
}

/** A refusal decided by the gateway, with any headers it must carry (`Retry-After`, `RateLimit-*`). */
class Rejection {
  readonly _tag = "Rejection"
  readonly error: Errors.DomainError
  readonly headers: Record<string, string>
  constructor(error: Errors.DomainError, headers: Record<string, string> = {}) {
    this.error = error
    this.headers = headers
  }
}

const reject = (error: Errors.DomainError, headers?: Record<string, string>) => Effect.fail(new Rejection(error, headers))

/** A port the gateway asks itself (rate limiter, replay cache): its defects are `general_error` (belowApi). */
const askPort = <A, R>(effect: Effect.Effect<A, never, R>) => Effect.mapError(belowApi(effect), (error) => new Rejection(error))

const BEARER = /^Bearer +(\S+)\s*$/

const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType.trim())

const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** Searches are POSTs that read; every other non-GET is a write (create, capture, void, cancel…). */
const isWrite = (method: string, path: string) => method !== "GET" && method !== "HEAD" && !path.endsWith("/search")

/**
 * Methods that take no body: no route of the spec defines one for them (DELETE included), so a body
 * sent with one is refused rather than ignored — it could only be a response replayed as a request.
 */
const BODILESS_METHODS = new Set(["GET", "HEAD", "DELETE"])

/** What the gateway learned of a request's signature, for signing and caching its response. */
interface SignatureState {
  /** The request's own signature verified and was not a replay. */
  verified: boolean
  /** The path takes a write (so its request and response signatures are claimed); known once verified. */
  writePath: boolean
}

const EMPTY = new Uint8Array(0)

const responseBytes = (response: HttpServerResponse.HttpServerResponse): Uint8Array | undefined => {
  const body = response.body
  switch (body._tag) {
    case "Empty":
      return EMPTY
    case "Uint8Array":
      return body.body
    case "Raw":
      return typeof body.body === "string" ? Buffer.from(body.body) : undefined
    default:
      return undefined
  }
}

const envelopeResponse = (
  error: Errors.DomainError,
  requestId: string,
  headers: Record<string, string> = {}
) => HttpServerResponse.jsonUnsafe(ApiError.envelope(error, requestId), { status: ApiError.statusOf(error.code), headers })

export const layer = (options: GatewayOptions) =>
  HttpRouter.middleware(
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const limiter = yield* RateLimiter
      const ids = yield* Ids
      const replays = yield* ReplayCache
      const maxBody = ByteSize.bytes(options.maxBodyBytes)
      const ipLimits = yield* IpLimits.make(options.ipLimits ?? IpLimits.DEFAULT_IP_LIMITS)

      /** Everything before routing; resolves once the request may proceed. */
      const admit = Effect.fnUntraced(function*(
        request: HttpServerRequest.HttpServerRequest,
        state: RequestState,
        path: string,
        signing: SignatureState,
        rate: { headers?: Record<string, string> }
      ) {
        const key = BEARER.exec(request.headers["authorization"] ?? "")?.[1]
        if (key === undefined) {
          return yield* reject(new Errors.InvalidApiKey({ message: "Missing API key: send Authorization: Bearer sk_…" }))
        }
        // An IP spending unknown keys is refused before its keys are hashed and looked up (IpLimits.ts).
        const account = yield* Effect.mapError(
          ipLimits.guardKey(request, key, belowApi(accounts.authenticate(key))),
          (e) => e instanceof IpLimits.Limited ? new Rejection(e.error, e.headers) : new Rejection(e)
        )
        state.account = account

        const ip = ipLimits.clientIp(request)
        if (!Cidr.allowlistPermits(account.ip_allowlist, ip)) {
          return yield* reject(new Errors.ClientIpNotAllowlisted({ message: `Requests from ${ip} are not allowlisted for this account` }))
        }

        const limit = account.rate_limit === null
          ? options.defaultRateLimit
          : { perSecond: account.rate_limit.per_second, burst: account.rate_limit.burst }
        const taken = yield* askPort(limiter.consume(account.id, limit))
        // Whatever answers the request from here on (a refusal included) says the account's bucket.
        rate.headers = RateLimitHeaders.of(limit, taken)
        if (!taken.allowed) {
          return yield* reject(
            new Errors.RateLimited({ message: `Rate limit exceeded; retry after ${taken.retryAfterSeconds}s` }),
            rate.headers
          )
        }

        let body = EMPTY
        const declaredLength = Number(request.headers["content-length"] ?? "0")
        const sendsBody = declaredLength > 0 || request.headers["transfer-encoding"] !== undefined
        if (METHODS_WITH_BODY.has(request.method)) {
          const contentType = request.headers["content-type"]
          if ((sendsBody || contentType !== undefined) && !isJson(contentType)) {
            return yield* reject(new Errors.UnsupportedMediaType({
              message: `Content-Type must be application/json, got ${contentType ?? "none"}`
            }))
          }
          if (declaredLength > options.maxBodyBytes) {
            return yield* reject(tooLarge(options.maxBodyBytes))
          }
          if (sendsBody) {
            // The body is read once here; the Node request caches these bytes, so the signature
            // below and HttpApi's JSON decoding see exactly the same bytes.
            body = new Uint8Array(
              yield* request.arrayBuffer.pipe(
                Effect.provideService(HttpIncomingMessage.MaxBodySize, maxBody),
                Effect.mapError(() => new Rejection(tooLarge(options.maxBodyBytes)))
              )
            )
          }
        }

        const nowMs = yield* Clock.currentTimeMillis
        const verification = verify(
          Account.signingSecrets(account, nowMs),
          request.headers[SIGNATURE_HEADER],
          request.url,
          body,
          Math.floor(nowMs / 1000)
        )
        if (verification.verdict === "malformed") {
          return yield* reject(new Errors.MalformedSignatureHeader({
            message: "X-Signature must be of the form t=<unix seconds>, v1=<hex hmac-sha256>"
          }))
        }
        if (verification.verdict === "expired") {
          return yield* reject(new Errors.InvalidSignature({ message: "The signature timestamp is outside the 300 s window" }))
        }
        if (verification.verdict !== "valid") {
          return yield* reject(new Errors.InvalidSignature({ message: "The signature does not match the request" }))
        }

        // A write claims its signature (insert-if-absent, so of two racing copies one wins), and so
        // does a read of a path that takes writes: the signature covers no method, so a read's could
        // otherwise be sent again as a bodiless write there (GET → DELETE). Other reads only look:
        // a signature the cache holds as a response's never authorises anything.
        const write = isWrite(request.method, path)
        signing.writePath = write || acceptsWrite(path)
        const held = yield* askPort(
          signing.writePath
            ? replays.claim(account.id, verification.digest, { kind: "request", requestId: state.requestId }, expiresAt(verification.timestamp))
            : replays.find(account.id, verification.digest)
        )
        if (Option.isSome(held) && held.value.kind === "response") {
          return yield* reject(new Errors.InvalidSignature({ message: "The signature does not match the request" }))
        }
        if (Option.isSome(held) && write) {
          return yield* reject(new Errors.Conflict({
            message: `${ALREADY_ACCEPTED} as ${held.value.requestId}; ` +
              "to repeat a write on purpose, sign it again in a later second"
          }))
        }
        signing.verified = true

        if (BODILESS_METHODS.has(request.method) && sendsBody) {
          return yield* reject(new Errors.InvalidRequest({ message: `A ${request.method} request takes no body` }))
        }

        if (account.status !== "active" && write) {
          return yield* reject(new Errors.MerchantOperationNotAllowedStatus({
            message: `Account is ${account.status}: writes are not allowed`
          }))
        }

        if (body.length > 0) {
          let parsed: unknown
          try {
            parsed = JSON.parse(Buffer.from(body).toString("utf8"))
          } catch {
            return yield* reject(new Errors.MalformedRequest({ message: "The request body is not valid JSON" }))
          }
          if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
            return yield* reject(new Errors.InvalidRequest({ message: "The request body must be a JSON object" }))
          }
          // Lone surrogates, NUL, nesting past the bound: refused before any route reads the body (JsonBody.ts).
          const refused = JsonBody.check(parsed)
          if (refused !== undefined) return yield* reject(refused)
        }
        if (safeDecode(request.url.split("?")[0]).includes("\u0000")) {
          return yield* reject(new Errors.InvalidParameter({ message: "The path must not contain the NUL character" }))
        }
      })

      const acceptsWrite = (path: string) => options.routes.methodsFor(path).some((method) => isWrite(method, path))

      /** A failure of the route or the gateway, as the envelope response. */
      const render = (cause: Cause.Cause<unknown>, request: HttpServerRequest.HttpServerRequest, path: string, requestId: string) => {
        const failure = Cause.findErrorOption(cause)
        if (Option.isSome(failure)) {
          const error = failure.value
          if (error instanceof Rejection) return Effect.succeed(envelopeResponse(error.error, requestId, error.headers))
          if (Errors.isDomainError(error)) return Effect.succeed(envelopeResponse(error, requestId))
          const reason = (error as HttpServerError.HttpServerError)?.reason
          if (reason?._tag === "RouteNotFound") {
            const allowed = options.routes.methodsFor(path)
            // The route takes this method, but the router would not match this spelling of it (a
            // path parameter past its maximum length, an encoded slash in one): no object is at that
            // address, so 404 — a 405 would tell the client to use the method it used.
            const takesMethod = allowed.includes(request.method) || (request.method === "HEAD" && allowed.includes("GET"))
            return Effect.succeed(
              allowed.length > 0 && !takesMethod
                ? envelopeResponse(
                  new Errors.MethodNotAllowed({ message: `${request.method} is not supported on ${path}; use ${allowed.join(", ")}` }),
                  requestId,
                  { allow: allowed.join(", ") }
                )
                : envelopeResponse(new Errors.NotFound({ message: `No route ${request.method} ${path}` }), requestId)
            )
          }
          if (reason?._tag === "RequestParseError") {
            return Effect.succeed(envelopeResponse(
              reason.reason === "BodyTooLarge" ? tooLarge(options.maxBodyBytes) : new Errors.MalformedRequest({ message: "The request body could not be read" }),
              requestId
            ))
          }
        }
        return Effect.as(
          Effect.logError("Unhandled failure", cause).pipe(Effect.annotateLogs({ request_id: requestId, path })),
          envelopeResponse(new Errors.InternalError({ message: "Internal error; safe to retry idempotently" }), requestId)
        )
      }

      return (httpEffect) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const started = performance.now()
          const state: RequestState = { requestId: yield* ids.make("request"), account: undefined }
          yield* Metrics.annotateSpan(state.requestId)
          const signing: SignatureState = { verified: false, writePath: false }
          const rate: { headers?: Record<string, string> } = {}
          // The path the router will match, not the raw one: the checks below must see its route.
          const path = routedPath(request.url)
          const needsKey = options.routes.requiresKey(path)
          const exit = yield* Effect.exit(
            (needsKey
              ? Effect.andThen(admit(request, state, path, signing, rate), httpEffect)
              : ipLimits.guardPublic(request, path, state.requestId, httpEffect)).pipe(
              Effect.provideService(CurrentRequest, state),
              // Every line logged while serving the request names it (JSON logs: `request_id`).
              Effect.annotateLogs("request_id", state.requestId)
            )
          )
          if (exit._tag === "Failure" && Cause.hasInterruptsOnly(exit.cause)) return yield* exit
          let response = exit._tag === "Success" ? exit.value : yield* render(exit.cause, request, path, state.requestId)
          response = RateLimitHeaders.set(HttpServerResponse.setHeader(response, "x-request-id", state.requestId), rate.headers)
          const bytes = state.account !== undefined ? responseBytes(response) : undefined
          if (state.account !== undefined && bytes !== undefined) {
            const nowMs = yield* Clock.currentTimeMillis
            const now = Math.floor(nowMs / 1000)
            const secrets = Account.signingSecrets(state.account, nowMs)
            // A response signature is exactly the request signature of a request on this path whose
            // body is this response's, under every secret: one digest of the payload covers them all.
            // Cached before the response leaves: for a request that did not verify (its caller may
            // lack the secret and be fishing for a signature), and for every path that accepts a
            // write (a read's or a write's answer replayed as a write).
            if (!signing.verified || signing.writePath) {
              const claimed = yield* Effect.exit(
                replays.claim(state.account.id, contentDigest(now, request.url, bytes), { kind: "response", requestId: state.requestId }, expiresAt(now))
              )
              // The answer still goes out, signed: the request (a write, perhaps) has been carried
              // out, and a missing entry is the smaller risk than the client never learning that.
              if (claimed._tag === "Failure") {
                if (Cause.hasInterruptsOnly(claimed.cause)) return yield* Effect.failCause(claimed.cause)
                yield* Effect.logError("Replay cache: the response could not be recorded", claimed.cause).pipe(
                  Effect.annotateLogs({ request_id: state.requestId, path })
                )
              }
            }
            response = HttpServerResponse.setHeader(response, SIGNATURE_HEADER, signatureHeader(secrets, now, request.url, bytes))
          }
          // Route timing, in one place: by the route's template, never the raw path (ids in labels).
          yield* Metrics.observeRequest(request.method, options.routes.templateOf(request.method, path), response.status, (performance.now() - started) / 1000)
          return response
        })
    }),
    { global: true }
  )

const safeDecode = (path: string) => {
  try {
    return decodeURIComponent(path)
  } catch {
    return path
  }
}

const tooLarge = (max: number) =>
  new Errors.PayloadTooLarge({ message: `The request body exceeds ${max} bytes` })

