/**
 * @tender/api: the merchant API's definition, on `effect` alone. The server implements it
 * (packages/http), clients derive from it (@tender/client, or `HttpApiClient.make(Api)` directly).
 */
export { Api, requireSignature } from "./Api.ts"
export * as ApiError from "./ApiError.ts"
export * as Ids from "./Ids.ts"
export * as Limits from "./Limits.ts"
export * as Middleware from "./Middleware.ts"
export * as PaymentFields from "./PaymentFields.ts"
export * as Signature from "./Signature.ts"
export * as Statuses from "./Statuses.ts"
export * as Views from "./Views.ts"
