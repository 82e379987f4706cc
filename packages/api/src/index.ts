/**
 * @tender/api: the merchant API's definition, on `effect` alone. The server implements it
 * (packages/http), clients derive from it (@tender/client, or `HttpApiClient.make(Api)` directly).
 *
 * @module @tender/api
 */
export { Api, finishDocument, requireSignature } from "./Api.ts"
/** The error envelope: one schema class per HTTP status the API answers errors with. */
export * as ApiError from "./ApiError.ts"
/** Identifiers on the wire: the prefixed, branded id schemas. */
export * as Ids from "./Ids.ts"
/** Input bounds shared by the request schemas and the server's validation. */
export * as Limits from "./Limits.ts"
/** The API's middleware keys (bearer auth, error envelope); the server implements them. */
export * as Middleware from "./Middleware.ts"
/** The value objects of the payment views: capture method, kinds, addresses, instruments, next actions. */
export * as PaymentFields from "./PaymentFields.ts"
/** Tender's HMAC signature scheme for requests, responses and webhooks. */
export * as Signature from "./Signature.ts"
/** The status words of each resource, as the view schemas' enums. */
export * as Statuses from "./Statuses.ts"
/** The JSON shapes the API answers with: its view schemas. */
export * as Views from "./Views.ts"
