/**
 * The spec's error envelope `{code, message, request_id, errors?}` as the API declares it: one
 * schema class per HTTP status, so the OpenAPI document lists the envelope under each status an
 * endpoint can answer with, HttpApi encodes the right status from the error value, and a client
 * decodes an error answer into the class of its status. Which code has which status is the server's
 * table (packages/http/src/ApiError.ts), not part of the definition.
 */
import { Schema } from "effect"
import { Code, Id, list, Message, Text } from "./api/Bounded.ts"
import * as Limits from "./Limits.ts"

/** One offending field of a `validation_failed` error (the envelope's `errors[]`). */
export const FieldError = Schema.Struct({ field: Text, message: Message })
export type FieldError = typeof FieldError.Type

/**
 * The envelope's fields: `code`, `message`, `request_id` and, for `validation_failed`, `errors` (at
 * most MAX_LIST: the body walk names at most that many, and the server cuts a longer list of schema
 * problems there; the rest are reported once the first are fixed).
 */
export const envelopeFields = {
  code: Code,
  message: Message,
  request_id: Id,
  errors: Schema.optional(list(FieldError, Limits.MAX_LIST))
}

/** The error envelope as decoded. */
export type Envelope = Schema.Struct.Type<typeof envelopeFields>

/** An error answered with 400. */
export class BadRequest extends Schema.Error<BadRequest>("BadRequest")(envelopeFields, { httpApiStatus: 400 }) {}
/** An error answered with 401. */
export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")(envelopeFields, { httpApiStatus: 401 }) {}
/** An error answered with 403. */
export class Forbidden extends Schema.Error<Forbidden>("Forbidden")(envelopeFields, { httpApiStatus: 403 }) {}
/** An error answered with 404. */
export class NotFound extends Schema.Error<NotFound>("NotFound")(envelopeFields, { httpApiStatus: 404 }) {}
/** An error answered with 409. */
export class Conflict extends Schema.Error<Conflict>("Conflict")(envelopeFields, { httpApiStatus: 409 }) {}
/** An error answered with 429. */
export class TooManyRequests
  extends Schema.Error<TooManyRequests>("TooManyRequests")(envelopeFields, { httpApiStatus: 429 })
{}
/** An error answered with 502. */
export class BadGateway extends Schema.Error<BadGateway>("BadGateway")(envelopeFields, { httpApiStatus: 502 }) {}
/** An error answered with 500. */
export class ServerError extends Schema.Error<ServerError>("ServerError")(envelopeFields, { httpApiStatus: 500 }) {}

/** The errors every authenticated endpoint can answer with (declared once, on the middleware). */
export const ApiErrors = [BadRequest, Unauthorized, Forbidden, NotFound, Conflict, TooManyRequests, BadGateway, ServerError] as const
/** Any declared error answer. */
export type ApiError = InstanceType<(typeof ApiErrors)[number]>

/** Whether a value is one of the declared error answers (as a client decodes them). */
export const isApiError = (u: unknown): u is ApiError => ApiErrors.some((declared) => u instanceof declared)

/** The HTTP status a declared error answer is sent with: its class's `httpApiStatus`. */
export const statusOfApiError = (error: ApiError): number => {
  const declared = ApiErrors.find((c) => error instanceof c) ?? ServerError
  return declared.ast.annotations?.httpApiStatus as number
}
