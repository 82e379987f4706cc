/**
 * The spec's error envelope `{code, message, request_id, errors?}` and the one table mapping each
 * domain error code to its HTTP status. Handlers and the gateway both render errors through here.
 */
import { Schema } from "effect"
import { Errors } from "@tender/domain"

const E = Errors

/** code → HTTP status, taken from the spec's error tables (and contract.md for the extra codes). */
const STATUS_BY_CODE: Record<string, number> = Object.fromEntries(
  ([
    [400, [
      E.MalformedRequest, E.InvalidRequest, E.ValidationFailed, E.MissingRequestParameter, E.MissingRequestHeader,
      E.InvalidParameter, E.MerchantReferenceRequired, E.InvalidTransactionStatus, E.CountryRequired,
      E.CountryNotAvailable, E.UnknownPaymentMethod, E.AmbiguousOriginalTransactionTarget, E.RefundAmountInvalid,
      E.RefundAmountExceedsRefundable, E.RefundRequiresTransactionTarget, E.TransactionProviderMismatch,
      E.PaymentMethodNotSupportedAsDestination, E.AmountMismatchDecisionInvalid, E.CaptureAmountExceedsAuthorized,
      E.CaptureAmountExceedsRemaining, E.TransferDestinationInvalid, E.TransferUnroutable,
      E.TransferDestinationCountryUnknown, E.TransferCardTokenRequired, E.WebhookLimitExceeded,
      E.WebhookDeliveryNotRetryable
    ]],
    [401, [
      E.InvalidApiKey, E.PublishableApiKeyNotAllowed, E.InvalidSignature, E.MalformedSignatureHeader, E.ClientSecretInvalid,
      E.ClientSecretExpired
    ]],
    [403, [E.Forbidden, E.ClientIpNotAllowlisted, E.VaultNotEnabled]],
    [404, [
      E.NotFound, E.AccountNotFound, E.OrderNotFound, E.TransactionNotFound, E.CheckoutSessionNotFound,
      E.PaymentMethodNotFound, E.PaymentUnroutable, E.OriginalTransactionNotFound, E.CustomerNotFound,
      E.PayoutNotFound, E.TransferNotFound, E.WebhookNotFound, E.WebhookDeliveryNotFound
    ]],
    [405, [E.MethodNotAllowed]],
    [409, [
      E.MerchantOperationNotAllowedStatus, E.Conflict, E.InvalidOrderStatusTransition, E.DuplicateMerchantReferenceId,
      E.InvalidSessionState, E.PaymentMethodNotSupportedByProvider, E.OriginalTransactionNotEligible,
      E.RefundAlreadyFullyRefunded, E.RefundInProgress, E.MerchantReferenceAmbiguous, E.ConsentConflict,
      E.AmountMismatchDecisionConflict, E.AmountMismatchDecisionInProgress, E.CardPaymentInvalidOrderState,
      E.CardPaymentInProgress, E.PaymentUnexpectedState, E.PayoutInProgress, E.TransferNotSupportedByProvider,
      E.TransferDestinationNotRegistered, E.ProviderNotEnabledForMerchant, E.TransferInvalidOrderState,
      E.TransferInProgress, E.RecipientPendingVerification
    ]],
    [413, [E.PayloadTooLarge]],
    [415, [E.UnsupportedMediaType]],
    [422, [E.NotificationMismatch]],
    [429, [E.RateLimited]],
    [500, [E.InternalError, E.GeneralError]],
    [502, [E.DownstreamError, E.ProviderUnavailable]]
  ] as const).flatMap(([status, classes]) => classes.map((c) => [c.code, status] as const))
)

export const statusOf = (code: string): number => STATUS_BY_CODE[code] ?? 500

const envelopeFields = {
  code: Schema.String,
  message: Schema.String,
  request_id: Schema.String,
  errors: Schema.optional(Schema.Array(Errors.FieldError))
}

export type Envelope = Schema.Struct.Type<typeof envelopeFields>

// One schema class per status, so the OpenAPI document lists the envelope under each status an
// endpoint can answer with, and HttpApi encodes the right status from the error value.
export class BadRequest extends Schema.Error<BadRequest>("BadRequest")(envelopeFields, { httpApiStatus: 400 }) {}
export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")(envelopeFields, { httpApiStatus: 401 }) {}
export class Forbidden extends Schema.Error<Forbidden>("Forbidden")(envelopeFields, { httpApiStatus: 403 }) {}
export class NotFound extends Schema.Error<NotFound>("NotFound")(envelopeFields, { httpApiStatus: 404 }) {}
export class Conflict extends Schema.Error<Conflict>("Conflict")(envelopeFields, { httpApiStatus: 409 }) {}
export class TooManyRequests
  extends Schema.Error<TooManyRequests>("TooManyRequests")(envelopeFields, { httpApiStatus: 429 })
{}
export class BadGateway extends Schema.Error<BadGateway>("BadGateway")(envelopeFields, { httpApiStatus: 502 }) {}
export class ServerError extends Schema.Error<ServerError>("ServerError")(envelopeFields, { httpApiStatus: 500 }) {}

/** The errors every authenticated endpoint can answer with (declared once, on the middleware). */
export const ApiErrors = [BadRequest, Unauthorized, Forbidden, NotFound, Conflict, TooManyRequests, BadGateway, ServerError] as const
export type ApiError = InstanceType<(typeof ApiErrors)[number]>

const CLASS_BY_STATUS: Record<number, (typeof ApiErrors)[number]> = {
  400: BadRequest,
  401: Unauthorized,
  403: Forbidden,
  404: NotFound,
  409: Conflict,
  429: TooManyRequests,
  502: BadGateway,
  500: ServerError
}

export const envelope = (error: Errors.DomainError, requestId: string): Envelope => ({
  code: error.code,
  message: error.message,
  request_id: requestId,
  ...(error.errors !== undefined && error.errors.length > 0 ? { errors: error.errors } : {})
})

/** A domain error as the HttpApi-declared error value for its status. */
export const fromDomain = (error: Errors.DomainError, requestId: string): ApiError =>
  new (CLASS_BY_STATUS[statusOf(error.code)] ?? ServerError)(envelope(error, requestId))
