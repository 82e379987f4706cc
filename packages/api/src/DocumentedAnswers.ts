/**
 * The answers every operation can get from the edge of the server, whatever its own schemas say
 * (issue 25, item 4; docs/decisions.md, "OpenAPI document and the OWASP rules"): the gateway's
 * refusals (405 wrong method, 413 body too large, 415 not JSON, 429 rate limited, 500), the
 * rate-limit headers, and the body a bodiless POST may still carry. They are written into the
 * generated document by walking every operation it holds, so an endpoint added later (or a route
 * added to the document beside the HttpApi value, as the browser SDK's are) gets them without a
 * line of its own. An operation's own declaration of a status wins; only missing ones are added.
 */
import { JsonSchema, Schema } from "effect"
import { envelopeFields } from "./ApiError.ts"

/** The three rate-limit headers the server sends (IETF draft-ietf-httpapi-ratelimit-headers), by name. */
export const RATE_LIMIT_HEADERS = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"] as const

/** A header's value as a count or a number of seconds: JSON's safe integers, as every integer of the API. */
const count = (description: string) => ({
  description,
  schema: { type: "integer", format: "int64", minimum: 0, maximum: Number.MAX_SAFE_INTEGER }
})

const HEADERS: Record<string, object> = {
  "RateLimit-Limit": count("How many requests the caller's bucket holds when full (its burst). Sent on every answer the rate limiter counted."),
  "RateLimit-Remaining": count("How many requests the bucket holds now. Sent on every answer the rate limiter counted."),
  "RateLimit-Reset": count("Seconds until the bucket is full again. Sent on every answer the rate limiter counted."),
  "Retry-After": count("Seconds to wait before the bucket has room for this request again."),
  Allow: {
    description: "The methods this path takes, comma-separated.",
    schema: { type: "string", maxLength: 64, example: "GET, POST" }
  }
}

const header = (name: string) => ({ $ref: `#/components/headers/${name}` })

/** Methods whose requests the gateway reads a body of: the content type (415) and size (413) are checked. */
const WITH_BODY = new Set(["post", "put", "patch", "delete"])
const METHODS = ["get", "head", "post", "put", "patch", "delete", "options", "trace"] as const

/** The error envelope `{code, message, request_id, errors?}` as a component of its own, for the router's 405. */
const ENVELOPE = "ErrorEnvelope"
const envelopeSchema = (): unknown => {
  const document = Schema.toJsonSchemaDocument(Schema.Struct(envelopeFields))
  return JsonSchema.toMultiDocumentOpenApi3_1({ dialect: document.dialect, schemas: [document.schema], definitions: document.definitions }).schemas[0]
}

/**
 * The refusals added where missing, with the condition under which the gateway can answer them.
 * `router`: answered by the router in the envelope, before any route (the browser SDK's routes
 * included) reads the request; the others in the operation's own error object.
 */
const REFUSALS: ReadonlyArray<{
  readonly status: string
  readonly description: string
  readonly applies: (method: string) => boolean
  readonly headers?: ReadonlyArray<string>
  readonly router?: true
}> = [
  {
    status: "405",
    description: "The path exists but does not take this method (`method_not_allowed`, in the error envelope on every route); `Allow` lists the methods it takes",
    applies: () => true,
    headers: ["Allow"],
    router: true
  },
  { status: "413", description: "The request body is larger than the server takes (`payload_too_large`; 1 MiB by default)", applies: (m) => WITH_BODY.has(m) },
  { status: "415", description: "The request body is not `application/json` (`unsupported_media_type`)", applies: (m) => WITH_BODY.has(m) },
  { status: "429", description: "Rate limited (`rate_limited`): `Retry-After` says when to try again", applies: () => true },
  { status: "500", description: "An error of the server's own (`internal_error`); safe to retry", applies: () => true }
]

/**
 * A POST that declares no body still passes the gateway's checks on one, and the route reads
 * nothing of it: clients (and their generated code) send `{}`.
 */
const EMPTY_BODY = {
  required: false,
  description: "Nothing is read from the body: send `{}` or no body at all.",
  content: { "application/json": { schema: { type: "object", additionalProperties: false, maxProperties: 0 } } }
}

/** The content of an operation's own error answers (the envelope, or the SDK's error object on its routes). */
const errorContentOf = (responses: Record<string, any>): object | undefined =>
  Object.entries(responses).find(([status, response]) => /^4\d\d$/.test(status) && response?.content !== undefined)?.[1].content

/** Adds the edge's answers and headers to every operation of `spec` (an OpenAPI 3.1 document); returns it. */
export const documentAnswers = (spec: Record<string, any>): Record<string, any> => {
  spec.components ??= {}
  spec.components.headers = { ...spec.components.headers, ...HEADERS }
  spec.components.schemas = { ...spec.components.schemas, [ENVELOPE]: envelopeSchema() }
  const envelope = { "application/json": { schema: { $ref: `#/components/schemas/${ENVELOPE}` } } }
  for (const item of Object.values<Record<string, any>>(spec.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method]
      if (operation === undefined) continue
      const responses: Record<string, any> = (operation.responses ??= {})
      const content = errorContentOf(responses)
      for (const refusal of REFUSALS) {
        if (responses[refusal.status] !== undefined || !refusal.applies(method) || content === undefined) continue
        responses[refusal.status] = {
          description: refusal.description,
          ...(refusal.headers === undefined ? {} : { headers: Object.fromEntries(refusal.headers.map((h) => [h, header(h)])) }),
          content: refusal.router === true ? envelope : content
        }
      }
      for (const [status, response] of Object.entries(responses)) {
        if (!/^[24]/.test(status)) continue
        response.headers = {
          ...response.headers,
          ...Object.fromEntries(RATE_LIMIT_HEADERS.map((h) => [h, header(h)])),
          ...(status === "429" ? { "Retry-After": header("Retry-After") } : {})
        }
      }
      if (method === "post" && operation.requestBody === undefined) operation.requestBody = EMPTY_BODY
    }
  }
  return spec
}
