/**
 * The one table mapping each domain error code to its HTTP status, and a domain error as the spec's
 * error envelope `{code, message, request_id, errors?}` of its status (the envelope's schema classes
 * are the API definition's, @tender/api/ApiError). Handlers and the gateway both render errors
 * through here.
 */
import { Errors } from "@tender/domain"
import {
  type ApiError,
  type ApiErrors,
  BadGateway,
  BadRequest,
  Conflict,
  type Envelope,
  Forbidden,
  NotFound,
  ServerError,
  TooManyRequests,
  Unauthorized
} from "@tender/api/ApiError"
import * as Limits from "@tender/api/Limits"

const E = Errors

/** The statuses the spec's error tables (and contract.md) answer errors with. */
export type Status = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 429 | 500 | 502

/** Rows of the table: a status and the error classes answered with it. */
type Rows = ReadonlyArray<readonly [Status, ReadonlyArray<{ readonly code: Errors.DomainErrorCode }>]>
/** The vocabulary's codes no row names. */
type Unlisted<R extends Rows> = Exclude<Errors.DomainErrorCode, R[number][1][number]["code"]>

/**
 * The code → status table from its rows. Total by construction: rows leaving a code of the vocabulary
 * out do not compile (the error names the codes under `unlisted`), so no domain error silently
 * becomes a 500 (test/ErrorTable.test.ts keeps this check biting).
 */
export const statusTable = <const R extends Rows>(
  rows: R & ([Unlisted<R>] extends [never] ? unknown : { readonly unlisted: Unlisted<R> })
): Readonly<Record<Errors.DomainErrorCode, Status>> =>
  // fromEntries forgets the keys; the signature above is what proves every code is one.
  Object.fromEntries(rows.flatMap(([status, classes]) => classes.map((c) => [c.code, status] as const))) as Record<Errors.DomainErrorCode, Status>

/** code → HTTP status, taken from the spec's error tables (and contract.md for the extra codes). */
export const STATUS_ROWS = [
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
] as const satisfies Rows

const STATUS_BY_CODE = statusTable(STATUS_ROWS)

export const statusOf = (code: Errors.DomainErrorCode): Status => STATUS_BY_CODE[code]

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

/**
 * The envelope held to its schema's bounds (@tender/api/ApiError): a message may quote what was sent
 * (a header, a key), and a body can hold more offending fields than the list names; the first
 * MAX_LIST are named, the rest once those are fixed.
 */
export const envelope = (error: Errors.DomainError, requestId: string): Envelope => ({
  code: error.code,
  message: Limits.clip(error.message, Limits.MAX_MESSAGE),
  request_id: requestId,
  ...(error.errors !== undefined && error.errors.length > 0
    ? {
      errors: error.errors.slice(0, Limits.MAX_LIST).map((e) => ({
        field: Limits.clip(e.field, Limits.MAX_TEXT),
        message: Limits.clip(e.message, Limits.MAX_MESSAGE)
      }))
    }
    : {})
})

/** A domain error as the HttpApi-declared error value for its status. */
export const fromDomain = (error: Errors.DomainError, requestId: string): ApiError =>
  new (CLASS_BY_STATUS[statusOf(error.code)] ?? ServerError)(envelope(error, requestId))
