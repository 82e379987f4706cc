/**
 * The browser SDK's routes (`/v1/client/…`, contract.md "Browser SDK"), served beside the merchant
 * API rather than in its HttpApi value: they are called from a customer's browser on the merchant's
 * origin, so they take a publishable key and a client secret instead of a secret key and an HMAC
 * signature, answer CORS (preflight included), and render the SDK's error object
 * `{error: {type, code, message, correlationId}}` instead of the merchant envelope. The gateway
 * passes them through without its key and signature checks (Routes.requiresKey); this file applies
 * their own, in this order:
 *
 *   rate limit per client IP (429) → publishable key (401) → rate limit per account (429)
 *   → content type (415) and body (400, 413) → client secret (401) → the use case.
 *
 * Nothing here logs a request body: it carries card numbers and CVCs.
 */
import { Cause, Effect, Option, Schema, SchemaIssue } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Accounts, ClientReturnUrl, ClientSecrets, type ClientGrant, Errors, RateLimiter } from "@tender/domain"
import * as ApiError from "../ApiError.ts"
import { CurrentRequest } from "../RequestContext.ts"

export const CLIENT_PREFIX = "/v1/client/"

export interface ClientRoutesOptions {
  /** The token bucket per account without its own limit, and per client IP. */
  readonly defaultRateLimit: { readonly perSecond: number; readonly burst: number }
  readonly maxBodyBytes: number
}

type ErrorType = "authentication_error" | "api_error" | "validation_error"

/** A refusal on these routes: the SDK's error object, its status, any headers (`Retry-After`). */
class ClientFailure {
  readonly _tag = "ClientFailure"
  readonly error: Errors.DomainError
  readonly type: ErrorType
  readonly code: string
  readonly headers: Record<string, string>
  constructor(error: Errors.DomainError, type: ErrorType, code: string, headers: Record<string, string> = {}) {
    this.error = error
    this.type = type
    this.code = code
    this.headers = headers
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

const classify = (error: Errors.DomainError, headers?: Record<string, string>): ClientFailure => {
  if (AUTHENTICATION_CODES.has(error.code)) return new ClientFailure(error, "authentication_error", error.code, headers)
  if (error.code === Errors.ValidationFailed.code) {
    const fields = new Set((error.errors ?? []).map((e) => e.field))
    const field = FIELD_CODES.find(([name]) => fields.has(name))
    if (field !== undefined) return new ClientFailure(error, "validation_error", field[1], headers)
  }
  return new ClientFailure(error, "api_error", error.code, headers)
}

const fail = (error: Errors.DomainError, headers?: Record<string, string>) => Effect.fail(classify(error, headers))

const BEARER = /^Bearer +(\S+)\s*$/

const corsHeaders = (request: HttpServerRequest.HttpServerRequest): Record<string, string> => {
  const origin = request.headers["origin"]
  return {
    ...(origin !== undefined ? { "access-control-allow-origin": origin } : {}),
    "access-control-allow-methods": "POST, OPTIONS",
    "access-control-allow-headers": "authorization, content-type",
    "access-control-expose-headers": "x-request-id, retry-after",
    vary: "Origin"
  }
}

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const SecretBody = Schema.Struct({ client_secret: Schema.String })
const CardTokenBody = Schema.Struct({
  client_secret: Schema.String,
  number: Schema.optional(Schema.String),
  exp_month: Schema.optional(Schema.Int),
  exp_year: Schema.optional(Schema.Int),
  cvc: Schema.String,
  holder_name: Schema.optional(Schema.String)
})
const PayBody = Schema.Struct({
  client_secret: Schema.String,
  token: Schema.String,
  return_url: Schema.optional(ClientReturnUrl)
})

/** Each route: its body and what it does with a checked grant; `status` is the success status. */
interface ClientRoute<A> {
  readonly path: `/v1/client/${string}`
  readonly body: Schema.Codec<A, unknown>
  readonly status: number
  readonly act: (secrets: ClientSecrets["Service"], grant: ClientGrant, body: A) => Effect.Effect<unknown, Errors.DomainError>
}

const route = <A>(r: ClientRoute<A>) => r as unknown as ClientRoute<unknown>

const ROUTES: ReadonlyArray<ClientRoute<unknown>> = [
  route({
    path: "/v1/client/session",
    body: SecretBody as Schema.Codec<typeof SecretBody.Type, unknown>,
    status: 200,
    act: (secrets, grant) => secrets.session(grant)
  }),
  route({
    path: "/v1/client/card_tokens",
    body: CardTokenBody as Schema.Codec<typeof CardTokenBody.Type, unknown>,
    status: 201,
    act: (secrets, grant, body) => secrets.cardToken(grant, body)
  }),
  route({
    path: "/v1/client/pay",
    body: PayBody as Schema.Codec<typeof PayBody.Type, unknown>,
    status: 200,
    act: (secrets, grant, body) => secrets.pay(grant, body.token, body.return_url)
  }),
  route({
    path: "/v1/client/payment_status",
    body: SecretBody as Schema.Codec<typeof SecretBody.Type, unknown>,
    status: 200,
    act: (secrets, grant) => secrets.status(grant)
  })
]

/** Method and path of every client route, for the gateway's route table (404 vs 405). */
export const CLIENT_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: string }> = ROUTES.flatMap((r) => [
  { method: "POST", path: r.path },
  { method: "OPTIONS", path: r.path }
])

const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType.trim())

const serve = (r: ClientRoute<unknown>, options: ClientRoutesOptions) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const state = yield* CurrentRequest
    const cors = corsHeaders(request)
    const exit = yield* Effect.exit(Effect.gen(function*() {
      const accounts = yield* Accounts
      const limiter = yield* RateLimiter
      const secrets = yield* ClientSecrets
      const consume = Effect.fnUntraced(function*(key: string, limit: { readonly perSecond: number; readonly burst: number }) {
        const taken = yield* limiter.consume(key, limit)
        if (!taken.allowed) {
          return yield* fail(
            new Errors.RateLimited({ message: `Rate limit exceeded; retry after ${taken.retryAfterSeconds}s` }),
            { "retry-after": String(taken.retryAfterSeconds) }
          )
        }
      })

      yield* consume(`client:ip:${Option.getOrElse(request.remoteAddress, () => "unknown")}`, options.defaultRateLimit)
      const key = BEARER.exec(request.headers["authorization"] ?? "")?.[1]
      if (key === undefined) {
        return yield* fail(new Errors.InvalidApiKey({ message: "Missing publishable key: send Authorization: Bearer pk_…" }))
      }
      const account = yield* Effect.mapError(accounts.authenticatePublishable(key), (e) => classify(e))
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
      const clientSecret = typeof json === "object" && json !== null ? (json as { client_secret?: unknown }).client_secret : undefined
      if (typeof clientSecret !== "string" || clientSecret.length === 0) {
        return yield* fail(new Errors.ClientSecretInvalid({ message: "Missing client_secret in the request body" }))
      }
      const grant = yield* Effect.mapError(secrets.authorize(key, clientSecret), (e) => classify(e))
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
      const result = yield* Effect.mapError(r.act(secrets, grant, body), (e) => classify(e))
      return HttpServerResponse.jsonUnsafe(result, { status: r.status, headers: cors })
    }))
    if (exit._tag === "Success") return exit.value
    if (Cause.hasInterruptsOnly(exit.cause)) return yield* exit
    const failure = Cause.findErrorOption(exit.cause)
    const known = Option.isSome(failure) && failure.value instanceof ClientFailure ? failure.value : undefined
    if (known === undefined) yield* Effect.logError("Unhandled failure on a client route", exit.cause).pipe(Effect.annotateLogs({ request_id: state.requestId, path: r.path }))
    const refusal = known ?? classify(new Errors.InternalError({ message: "Internal error; safe to retry" }))
    return HttpServerResponse.jsonUnsafe(
      { error: { type: refusal.type, code: refusal.code, message: refusal.error.message, correlationId: state.requestId } },
      { status: ApiError.statusOf(refusal.error.code), headers: { ...cors, ...refusal.headers } }
    )
  })

/** CORS preflight: answered for any origin (the key and secret are checked on the POST itself). */
const preflight = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
  HttpServerResponse.empty({ status: 204, headers: { ...corsHeaders(request), "access-control-max-age": "600" } }))

export const layer = (options: ClientRoutesOptions) =>
  HttpRouter.addAll(ROUTES.flatMap((r) => [
    HttpRouter.route("POST", r.path, serve(r, options)),
    HttpRouter.route("OPTIONS", r.path, preflight)
  ]))
