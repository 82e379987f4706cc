/**
 * The browser SDK's routes (`/v1/client/…`, contract.md "Browser SDK"), served beside the merchant
 * API rather than in its HttpApi value: they are called from a customer's browser on the merchant's
 * origin, so they take a publishable key and a client secret instead of a secret key and an HMAC
 * signature, answer CORS (preflight included), and render the SDK's error object
 * `{error: {type, code, message, correlationId}}` instead of the merchant envelope. The gateway
 * passes them through without its key and signature checks (Routes.requiresKey); this file applies
 * their own, in this order:
 *
 *   (card_tokens: Origin, 403) → rate limit per client IP (429) → publishable key (401) → rate limit per account (429)
 *   → content type (415) and body (400, 413; JsonBody.ts) → client secret (401) → the use case.
 *
 * Nothing here logs a request body: it carries card numbers and CVCs.
 *
 * CORS: every route answers the caller's origin (the merchant's page calls them through tender.js),
 * except `card_tokens`: only the secure fields frame sends card data, so only the fields origin
 * (TENDER_FIELDS_URL, default the public URL) is allowed, and a POST from any other Origin is
 * refused before its body is read. A request without Origin (a server) is not a browser's to refuse.
 */
import { Cause, Effect, Option, Schema, SchemaIssue } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import {
  Accounts,
  ClientCardToken,
  type ClientGrant,
  ClientPaymentStatus,
  ClientPayResult,
  ClientReturnUrl,
  ClientSecrets,
  ClientSession,
  Errors,
  PublicUrl,
  RateLimiter,
  type RateLimitDecision
} from "@tender/domain"
import * as ApiError from "../ApiError.ts"
import * as JsonBody from "../JsonBody.ts"
import { Code, Id, Int, Message, Name, Reference } from "@tender/api/api/Bounded"
import { clip, MAX_MESSAGE } from "@tender/api/Limits"
import * as RateLimitHeaders from "../RateLimitHeaders.ts"
import { clientBucket } from "../IpLimits.ts"
import { belowApi, CurrentRequest } from "../RequestContext.ts"

export const CLIENT_PREFIX = "/v1/client/"

export interface ClientRoutesOptions {
  /** The token bucket per account without its own limit, and per client IP. */
  readonly defaultRateLimit: { readonly perSecond: number; readonly burst: number }
  readonly maxBodyBytes: number
  /** TENDER_FIELDS_URL: the host of the secure fields frame (default the public URL), card_tokens' only origin. */
  readonly fieldsUrl?: string | undefined
  /** Proxies in front whose X-Forwarded-For names the client IP (IpLimits.clientIp); default 0. */
  readonly trustedProxies?: number | undefined
}

/**
 * The SDK's error object (spec, SDK errors), as these routes send it; the OpenAPI document shows it
 * for every refusal. `network_error` and `integration_error` are tender.js's own, never the server's.
 */
export const ClientErrorBody = Schema.Struct({
  error: Schema.Struct({
    type: Schema.Literals(["validation_error", "authentication_error", "api_error"]),
    code: Code.annotate({ description: "Stable: `CLIENT_SECRET_EXPIRED`, `client_secret_invalid`, `invalid_number`, … or the API's own code." }),
    message: Message,
    correlationId: Id.annotate({ description: "The request's id, also in `X-Request-Id`." })
  })
}).annotate({ identifier: "ClientError", description: "A refusal on a `/v1/client/…` route." })

type ErrorType = typeof ClientErrorBody.Type["error"]["type"]

/** A refusal on these routes: the SDK's error object and its status (the rate-limit headers are the route's, see serve). */
class ClientFailure {
  readonly _tag = "ClientFailure"
  readonly error: Errors.DomainError
  readonly type: ErrorType
  readonly code: string
  constructor(error: Errors.DomainError, type: ErrorType, code: string) {
    this.error = error
    this.type = type
    this.code = code
  }
}

const AUTHENTICATION_CODES = new Set<string>([
  Errors.InvalidApiKey.code,
  Errors.ClientSecretInvalid.code,
  Errors.ClientSecretExpired.code
])

/**
 * Fields refused by the server's own checks: the SDK's field codes (spec, SDK errors), card data
 * first; a bad `return_url` is the integration's input, refused before anything is paid.
 */
const FIELD_CODES: ReadonlyArray<readonly [string, string]> = [
  ["number", "invalid_number"],
  ["exp_month", "invalid_expiry"],
  ["exp_year", "invalid_expiry"],
  ["cvc", "invalid_cvc"],
  ["return_url", "invalid_return_url"]
]

const classify = (error: Errors.DomainError): ClientFailure => {
  if (AUTHENTICATION_CODES.has(error.code)) return new ClientFailure(error, "authentication_error", error.code)
  if (error.code === Errors.ValidationFailed.code) {
    const fields = new Set((error.errors ?? []).map((e) => e.field))
    const field = FIELD_CODES.find(([name]) => fields.has(name))
    if (field !== undefined) return new ClientFailure(error, "validation_error", field[1])
  }
  return new ClientFailure(error, "api_error", error.code)
}

const fail = (error: Errors.DomainError) => Effect.fail(classify(error))

const BEARER = /^Bearer +(\S+)\s*$/

/**
 * The origin a route answers CORS for: the caller's, or for a fields-only route the fields origin
 * alone (undefined: none, so a browser on another origin cannot read the answer).
 */
const allowedOrigin = (request: HttpServerRequest.HttpServerRequest, fieldsOrigin: string | undefined) => {
  const origin = request.headers["origin"]
  return fieldsOrigin === undefined || origin === fieldsOrigin ? origin : undefined
}

/** The fields frame's origin (scheme, host, port) for a fields-only route; undefined for the others. */
const fieldsOriginOf = (r: ClientRoute<unknown, unknown>, options: ClientRoutesOptions) =>
  r.fieldsOnly === true
    ? Effect.map(PublicUrl, (publicUrl) => new URL(options.fieldsUrl ?? publicUrl).origin)
    : Effect.succeed(undefined)

const corsHeaders = (request: HttpServerRequest.HttpServerRequest, fieldsOrigin: string | undefined): Record<string, string> => {
  const origin = allowedOrigin(request, fieldsOrigin)
  return {
    ...(origin !== undefined ? { "access-control-allow-origin": origin } : {}),
    "access-control-allow-methods": "POST, OPTIONS",
    "access-control-allow-headers": "authorization, content-type",
    "access-control-expose-headers": "x-request-id, retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset",
    vary: "Origin"
  }
}

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

// Bounded like the merchant API's fields (Bounded.ts, Limits.ts).
const ClientSecretField = Reference.annotate({
  description: "The payment's (or card transfer's) client secret, from its `next_action.client_secret`; together with the publishable key it is the browser's credential."
})
const SecretBody = Schema.Struct({ client_secret: ClientSecretField })
const CardTokenBody = Schema.Struct({
  client_secret: ClientSecretField,
  number: Schema.optionalKey(Code.annotate({ description: "Required when the secret collects a card; absent when it collects a saved card's CVC." })),
  exp_month: Schema.optionalKey(Int),
  exp_year: Schema.optionalKey(Int),
  cvc: Code,
  holder_name: Schema.optionalKey(Name)
})
const PayBody = Schema.Struct({
  client_secret: ClientSecretField,
  token: Reference.annotate({ description: "The token `card_tokens` last answered for this client secret (collect card), or the payment's saved card's token (collect CVC); any other is refused." }),
  return_url: Schema.optionalKey(ClientReturnUrl)
})

/**
 * Each route: its body and answer (the Schemas it decodes and encodes with, and the OpenAPI document
 * shows), what it does with a checked grant, and how the document names it. `status` is the success status.
 */
interface ClientRoute<A, R> {
  readonly path: `/v1/client/${string}`
  readonly operationId: string
  readonly summary: string
  readonly description: string
  readonly body: Schema.Codec<A, unknown>
  readonly status: number
  readonly response: Schema.Codec<R, unknown>
  readonly act: (secrets: ClientSecrets["Service"], grant: ClientGrant, body: A) => Effect.Effect<R, Errors.DomainError>
  /** Called only by the secure fields frame: CORS and the POST are for the fields origin alone. */
  readonly fieldsOnly?: true
}

const route = <A, R>(r: ClientRoute<A, R>) => r as unknown as ClientRoute<unknown, unknown>
/** The Schemas here have no decoding or encoding services: their encoded side is plain JSON. */
const codec = <S extends Schema.Top>(schema: S) => schema as unknown as Schema.Codec<S["Type"], unknown>

const ROUTES: ReadonlyArray<ClientRoute<unknown, unknown>> = [
  route({
    path: "/v1/client/session",
    operationId: "client.session",
    summary: "Read what a client secret is for",
    description: "The payment or card transfer the secret names: what to collect (`card`, or `cvv` for the saved card shown by brand and last four), the amount, the mode and when the secret ends.",
    body: codec(SecretBody),
    status: 200,
    response: codec(ClientSession),
    act: (secrets, grant) => secrets.session(grant)
  }),
  route({
    path: "/v1/client/card_tokens",
    operationId: "client.cardTokens",
    summary: "Vault the customer's card for the secret's payment",
    description: "Called only by the secure fields frame: the card (or, for a saved card, its CVC alone) goes to the vault and the answer is its token, never the number. The CVC is kept for the payment's one authorization. " +
      "Only the fields origin may call it (another `Origin` is refused: 403 `origin_not_allowed`); a later call with the same secret replaces the token `pay` accepts; a secret makes at most 5 calls (then 429 `rate_limited`).",
    body: codec(CardTokenBody),
    status: 201,
    response: codec(ClientCardToken),
    act: (secrets, grant, body: typeof CardTokenBody.Type) => secrets.cardToken(grant, body),
    fieldsOnly: true
  }),
  route({
    path: "/v1/client/pay",
    operationId: "client.pay",
    summary: "Pay the secret's payment with a card token",
    description: "The payment's one authorization. With a 3-D Secure challenge the answer is `requires_action` with `challenge_url` and the account's `display_mode`; in the `redirect` mode the challenge sends the customer back to `return_url` with `tender_payment_id` appended.",
    body: codec(PayBody),
    status: 200,
    response: codec(ClientPayResult),
    act: (secrets, grant, body: typeof PayBody.Type) => secrets.pay(grant, body.token, body.return_url)
  }),
  route({
    path: "/v1/client/payment_status",
    operationId: "client.paymentStatus",
    summary: "Read the payment's status as the browser sees it",
    description: "What tender.js polls while a challenge is open: `requires_action` (with `challenge_url` while the challenge waits), then `succeeded` or `failed`.",
    body: codec(SecretBody),
    status: 200,
    response: codec(ClientPaymentStatus),
    act: (secrets, grant) => secrets.status(grant)
  })
]

/** What the OpenAPI document shows of each route (ClientOpenApi.ts). */
export const CLIENT_OPERATIONS: ReadonlyArray<
  Pick<ClientRoute<unknown, unknown>, "path" | "operationId" | "summary" | "description" | "body" | "status" | "response" | "fieldsOnly">
> = ROUTES

/** Method and path of every client route, for the gateway's route table (404 vs 405). */
export const CLIENT_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: string }> = ROUTES.flatMap((r) => [
  { method: "POST", path: r.path },
  { method: "OPTIONS", path: r.path }
])

const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType.trim())

const serve = (r: ClientRoute<unknown, unknown>, options: ClientRoutesOptions) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const state = yield* CurrentRequest
    const fieldsOrigin = yield* fieldsOriginOf(r, options)
    const cors = corsHeaders(request, fieldsOrigin)
    // The bucket nearest to refusing (per IP, per account), said on every answer after the first take.
    let spent: { readonly limit: RateLimitHeaders.Limit; readonly decision: RateLimitDecision } | undefined
    const exit = yield* Effect.exit(Effect.gen(function*() {
      const origin = request.headers["origin"]
      if (fieldsOrigin !== undefined && origin !== undefined && origin !== fieldsOrigin) {
        return yield* Effect.fail(new ClientFailure(
          new Errors.Forbidden({ message: "Card data is accepted from the secure card fields only" }),
          "authentication_error",
          "origin_not_allowed"
        ))
      }
      const accounts = yield* Accounts
      const limiter = yield* RateLimiter
      const secrets = yield* ClientSecrets
      const consume = Effect.fnUntraced(function*(key: string, limit: { readonly perSecond: number; readonly burst: number }) {
        const taken = yield* Effect.mapError(belowApi(limiter.consume(key, limit)), (e) => classify(e))
        const bucket = { limit, decision: taken }
        spent = spent === undefined || !taken.allowed ? bucket : RateLimitHeaders.tightest(spent, bucket)
        if (!taken.allowed) {
          return yield* fail(new Errors.RateLimited({ message: `Rate limit exceeded; retry after ${taken.retryAfterSeconds}s` }))
        }
      })

      yield* consume(`client:ip:${clientBucket(request, options.trustedProxies ?? 0)}`, options.defaultRateLimit)
      const key = BEARER.exec(request.headers["authorization"] ?? "")?.[1]
      if (key === undefined) {
        return yield* fail(new Errors.InvalidApiKey({ message: "Missing publishable key: send Authorization: Bearer pk_…" }))
      }
      const account = yield* Effect.mapError(belowApi(accounts.authenticatePublishable(key)), (e) => classify(e))
      yield* consume(
        `client:acct:${account.id}`,
        account.rate_limit === null ? options.defaultRateLimit : { perSecond: account.rate_limit.per_second, burst: account.rate_limit.burst }
      )

      if (!isJson(request.headers["content-type"])) {
        return yield* fail(new Errors.UnsupportedMediaType({ message: `Content-Type must be application/json, got ${request.headers["content-type"] ?? "none"}` }))
      }
      const text = yield* request.text.pipe(
        Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(options.maxBodyBytes)),
        Effect.mapError(() => classify(new Errors.PayloadTooLarge({ message: `The request body exceeds ${options.maxBodyBytes} bytes` })))
      )
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        return yield* fail(new Errors.MalformedRequest({ message: "The request body is not valid JSON" }))
      }
      // The merchant API's rules for every body (JsonBody.ts); the secret is read from a checked body only.
      const refused = JsonBody.check(json)
      if (refused !== undefined) return yield* fail(refused)
      const clientSecret = typeof json === "object" && json !== null ? (json as { client_secret?: unknown }).client_secret : undefined
      if (typeof clientSecret !== "string" || clientSecret.length === 0) {
        return yield* fail(new Errors.ClientSecretInvalid({ message: "Missing client_secret in the request body" }))
      }
      const grant = yield* Effect.mapError(belowApi(secrets.authorize(key, clientSecret)), (e) => classify(e))
      const body = yield* Schema.decodeUnknownEffect(r.body)(json, { errors: "all" }).pipe(
        Effect.mapError((error) =>
          classify(
            new Errors.ValidationFailed({
              message: "Invalid request body",
              errors: formatIssues(error.issue).issues.map((issue) => ({
                field: (issue.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join("."),
                message: issue.message === "Missing key" ? "is required" : issue.message
              }))
            })
          )
        )
      )
      const result = yield* Effect.mapError(belowApi(r.act(secrets, grant, body)), (e) => classify(e))
      // The answer is what the document says it is: a use case answering otherwise is a defect (500).
      const encoded = yield* Effect.orDie(Schema.encodeUnknownEffect(r.response)(result))
      return HttpServerResponse.jsonUnsafe(encoded, { status: r.status, headers: cors })
    }))
    const rateHeaders = spent === undefined ? undefined : RateLimitHeaders.of(spent.limit, spent.decision)
    if (exit._tag === "Success") return RateLimitHeaders.set(exit.value, rateHeaders)
    if (Cause.hasInterruptsOnly(exit.cause)) return yield* exit
    const failure = Cause.findErrorOption(exit.cause)
    const known = Option.isSome(failure) && failure.value instanceof ClientFailure ? failure.value : undefined
    if (known === undefined) yield* Effect.logError("Unhandled failure on a client route", exit.cause).pipe(Effect.annotateLogs({ request_id: state.requestId, path: r.path }))
    const refusal = known ?? classify(new Errors.InternalError({ message: "Internal error; safe to retry" }))
    const body: typeof ClientErrorBody.Type = {
      error: { type: refusal.type, code: refusal.code, message: clip(refusal.error.message, MAX_MESSAGE), correlationId: state.requestId }
    }
    return HttpServerResponse.jsonUnsafe(
      body,
      { status: ApiError.statusOf(refusal.error.code), headers: { ...cors, ...rateHeaders } }
    )
  })

/**
 * CORS preflight: answered for any origin (the key and secret are checked on the POST itself), but
 * a fields-only route's grants the fields origin alone (another gets no allow-origin: the browser stops).
 */
const preflight = (r: ClientRoute<unknown, unknown>, options: ClientRoutesOptions) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const cors = corsHeaders(request, yield* fieldsOriginOf(r, options))
    return HttpServerResponse.empty({ status: 204, headers: { ...cors, "access-control-max-age": "600" } })
  })

export const layer = (options: ClientRoutesOptions) =>
  HttpRouter.addAll(ROUTES.flatMap((r) => [
    HttpRouter.route("POST", r.path, serve(r, options)),
    HttpRouter.route("OPTIONS", r.path, preflight(r, options))
  ]))
