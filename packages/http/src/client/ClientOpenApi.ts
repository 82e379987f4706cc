/**
 * The browser SDK's routes in the OpenAPI document (contract.md: the `/v1/client/…` routes are
 * "listed in the OpenAPI document"). They are not in the HttpApi value (ClientRoutes.ts says why),
 * so the document's transform (Api.ts) adds their path items here, generated from the same route
 * table and Schemas the routes decode and encode with: nothing is written twice.
 *
 * They get their own security scheme (the publishable key; the client secret travels in the body,
 * which OpenAPI cannot express as a scheme, so the scheme says so) and their own tag.
 */
import { JsonSchema, Schema } from "effect"
import { CLIENT_OPERATIONS, ClientErrorBody } from "./ClientRoutes.ts"

export const CLIENT_TAG = "browserSdk"
export const PUBLISHABLE_KEY_SCHEME = "publishableKey"

const TAG_DESCRIPTION = "The routes tender.js calls from the customer's browser, on the merchant's origin: a publishable key " +
  "and a payment's client secret instead of the secret key and signature (responses are not signed), CORS for any " +
  "origin (preflight included) but on `card_tokens`, which only the secure fields' origin may call, and the SDK's error object `{error: {type, code, message, correlationId}}`. " +
  "Merchants do not call them from their server."

const SCHEME_DESCRIPTION = "The account's publishable key: `Authorization: Bearer pk_test_…` or `pk_live_…` (a secret key is refused). " +
  "Every request also carries the payment's `client_secret` in its JSON body: the key names the account, the secret the one " +
  "payment (or card transfer) of it, for 15 minutes."

/** Why a route can refuse, with the SDK's error object as the body. */
const REFUSALS: ReadonlyArray<readonly [status: string, description: string]> = [
  ["400", "The body does not fit (`validation_error` for card data or `return_url`, else `api_error`)"],
  ["401", "The publishable key or the client secret is refused (`authentication_error`; `CLIENT_SECRET_EXPIRED` after 15 minutes)"],
  ["409", "The payment no longer awaits this (already paid, or the account may not take payments)"],
  ["413", "The body is too large"],
  ["415", "The body is not `application/json`"],
  ["429", "Rate limited per client IP or per account (`Retry-After` says when to try again), or, on `card_tokens`, the secret's 5 calls are spent"]
]

/** A fields-only route's extra refusal: a browser on another origin. */
const FOREIGN_ORIGIN = ["403", "Sent from an origin other than the secure fields' (`authentication_error`, `origin_not_allowed`)"] as const

/**
 * `schema` as an OpenAPI 3.1 schema; named parts (an `identifier`) go to `components`, where an
 * identifier already used for another shape is a bug, not something to overwrite.
 */
const schemaOf = (schema: Schema.Top, components: Record<string, unknown>): unknown => {
  const document = Schema.toJsonSchemaDocument(schema)
  const openApi = JsonSchema.toMultiDocumentOpenApi3_1({ dialect: document.dialect, schemas: [document.schema], definitions: document.definitions })
  for (const [name, definition] of Object.entries(openApi.definitions)) {
    if (name in components && JSON.stringify(components[name]) !== JSON.stringify(definition)) {
      throw new Error(`OpenAPI component ${name} is already another schema`)
    }
    components[name] = definition
  }
  return openApi.schemas[0]
}

const json = (schema: unknown) => ({ "application/json": { schema } })

/** Adds the `/v1/client/…` path items, their scheme and their tag to a generated document. */
export const addClientRoutes = (spec: Record<string, any>): Record<string, any> => {
  const components: Record<string, unknown> = (spec.components.schemas ??= {})
  spec.components.securitySchemes[PUBLISHABLE_KEY_SCHEME] = { type: "http", scheme: "Bearer", description: SCHEME_DESCRIPTION }
  spec.tags = [...(spec.tags ?? []), { name: CLIENT_TAG, description: TAG_DESCRIPTION }]
  const refused = schemaOf(ClientErrorBody, components)
  for (const route of CLIENT_OPERATIONS) {
    spec.paths[route.path] = {
      post: {
        tags: [CLIENT_TAG],
        operationId: route.operationId,
        summary: route.summary,
        description: route.description,
        security: [{ [PUBLISHABLE_KEY_SCHEME]: [] }],
        requestBody: { required: true, content: json(schemaOf(route.body, components)) },
        responses: {
          [String(route.status)]: { description: "Success", content: json(schemaOf(route.response, components)) },
          ...Object.fromEntries([...REFUSALS, ...(route.fieldsOnly === true ? [FOREIGN_ORIGIN] : [])]
            .map(([status, description]) => [status, { description, content: json(refused) }]))
        }
      }
    }
  }
  return spec
}
