/**
 * The API's middleware: the definition declares them (@tender/api/Middleware: the bearer scheme and
 * the error envelope of every endpoint, shown in the OpenAPI document); they are implemented here.
 * The gateway has already authenticated the request; these provide its account to handlers and
 * turn schema failures into the spec's errors.
 */
import { Effect, Layer, SchemaIssue } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import type { HttpApiError } from "effect/http-api"
import { Errors } from "@tender/domain"
import { ApiKeyAuth, RequestValidation } from "@tender/api/Middleware"
import { BadRequest, Unauthorized } from "@tender/api/ApiError"
import * as ApiError from "./ApiError.ts"
import { CurrentAccount, CurrentRequest } from "./RequestContext.ts"

export { ApiKeyAuth, RequestValidation }

/**
 * The server's own middleware (Api.ts adds it to the definition): it hands the account the gateway
 * verified to every handler, as `CurrentAccount`. The definition cannot declare it, since the
 * account is the domain's; it answers only the 401 the definition already declares.
 */
export class AccountContext extends HttpApiMiddleware.Service<AccountContext, { provides: CurrentAccount }>()(
  "@tender/http/AccountContext",
  { error: Unauthorized }
) {}

const missingKey = (requestId: string) =>
  new Unauthorized(ApiError.envelope(new Errors.InvalidApiKey({ message: "Missing API key" }), requestId))

export const AccountContextLive = Layer.succeed(
  AccountContext,
  AccountContext.of((httpEffect) =>
    Effect.gen(function*() {
      const request = yield* CurrentRequest
      if (request.account === undefined) return yield* Effect.fail(missingKey(request.requestId))
      return yield* Effect.provideService(httpEffect, CurrentAccount, request.account)
    }))
)

/** The gateway verified the key (and the allowlist, the signature) before routing; none is 401. */
export const ApiKeyAuthLive = Layer.succeed(
  ApiKeyAuth,
  ApiKeyAuth.of({
    bearer: (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* CurrentRequest
        if (request.account === undefined) return yield* Effect.fail(missingKey(request.requestId))
        return yield* httpEffect
      })
  })
)

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const fieldName = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined): string =>
  (path ?? []).reduce<string>((acc, segment) => {
    const key = typeof segment === "object" ? segment.key : segment
    return typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`
  }, "")

const friendly = (message: string): string =>
  message === "Missing key" ? "is required" : message.replace(/^Expected /, "must be ")

const ROOT_FIELD: Partial<Record<HttpApiError.HttpApiSchemaError["kind"], string>> = { Params: "path", Query: "query", Headers: "headers" }

/** Schema failures → `validation_failed` (body), `missing_request_parameter` / `validation_failed` (query), `invalid_parameter` (path). */
export const toDomainError = (error: HttpApiError.HttpApiSchemaError): Errors.DomainError => {
  const issues = formatIssues(error.cause.issue).issues.map((issue) => ({
    // A problem with the whole input (a body that is no object) still names a field: the input's own.
    field: fieldName(issue.path) || ROOT_FIELD[error.kind] || "body",
    message: friendly(issue.message)
  }))
  const fields = issues.map((i) => i.field).filter((f) => f !== "")
  switch (error.kind) {
    case "Params":
      return new Errors.InvalidParameter({ message: `Malformed path parameter: ${fields.join(", ")}`, errors: issues })
    case "Query":
      return issues.some((i) => i.message === "is required")
        ? new Errors.MissingRequestParameter({
          message: `Missing query parameter: ${issues.filter((i) => i.message === "is required").map((i) => i.field).join(", ")}`,
          errors: issues
        })
        : new Errors.ValidationFailed({ message: `Invalid query parameter: ${fields.join(", ")}`, errors: issues })
    case "Headers":
      return new Errors.MissingRequestHeader({ message: "Missing or invalid request header", errors: issues })
    default:
      return new Errors.ValidationFailed({
        message: fields.length > 0 ? `Invalid request: ${fields.join(", ")}` : "Invalid request body",
        errors: issues.length > 0 ? issues : [{ field: "body", message: "must be a JSON object" }]
      })
  }
}

export const RequestValidationLive = HttpApiMiddleware.layerSchemaErrorTransform(
  RequestValidation,
  (error) =>
    Effect.gen(function*() {
      // A response that fails to encode is our bug, not the client's: leave it a defect (500).
      if (error.kind === "Body" || error.kind === "ResponseHeaders") return yield* Effect.die(error)
      const request = yield* CurrentRequest
      return yield* Effect.fail(new BadRequest(ApiError.envelope(toDomainError(error), request.requestId)))
    })
)
