/**
 * The spec's error vocabulary. Every expected failure is a tagged error carrying the spec's stable
 * `code`; the HTTP status for each code lives only in packages/http (one table). They are
 * `Data.TaggedError`s (not schema classes): they never cross a wire as they are, the HTTP layer and
 * the CLI render them into the spec's envelope.
 */
import { type Cause, Data } from "effect"
import { FieldError } from "@tender/api/ApiError"

/** One offending field of a `validation_failed` error: the API's error envelope's (@tender/api/ApiError). */
export { FieldError }

export interface ErrorProps {
  readonly message: string
  readonly errors?: ReadonlyArray<FieldError> | undefined
}

/**
 * Builds a tagged error class whose instances carry the spec's `code` (also readable statically,
 * for the HTTP status table and the docs).
 */
export type CodedError<Tag extends string, Code extends string> =
  & Cause.YieldableError
  & ErrorProps
  & { readonly _tag: Tag; readonly code: Code }

export interface CodedErrorClass<Tag extends string, Code extends string> {
  new(props: ErrorProps): CodedError<Tag, Code>
  readonly code: Code
}

const coded = <const Tag extends string, const Code extends string>(
  tag: Tag,
  code: Code
): CodedErrorClass<Tag, Code> =>
  class extends Data.TaggedError(tag)<ErrorProps> {
    static readonly code: Code = code
    readonly code: Code = code
  }

// Transport and authentication
export class MalformedRequest extends coded("MalformedRequest", "malformed_request") {}
export class InvalidRequest extends coded("InvalidRequest", "invalid_request") {}
export class ValidationFailed extends coded("ValidationFailed", "validation_failed") {}
export class InvalidApiKey extends coded("InvalidApiKey", "invalid_api_key") {}
export class PublishableApiKeyNotAllowed
  extends coded("PublishableApiKeyNotAllowed", "publishable_api_key_not_allowed")
{}
export class InvalidSignature extends coded("InvalidSignature", "invalid_signature") {}
/** The browser SDK's client secret: unknown, of another account, or naming nothing the route serves. */
export class ClientSecretInvalid extends coded("ClientSecretInvalid", "client_secret_invalid") {}
/** The client secret existed and its 15 minutes are over (or the sandbox's expire helper ended it). */
export class ClientSecretExpired extends coded("ClientSecretExpired", "CLIENT_SECRET_EXPIRED") {}
export class MalformedSignatureHeader extends coded("MalformedSignatureHeader", "malformed_signature_header") {}
export class Forbidden extends coded("Forbidden", "forbidden") {}
export class ClientIpNotAllowlisted extends coded("ClientIpNotAllowlisted", "client_ip_not_allowlisted") {}
export class MerchantOperationNotAllowedStatus
  extends coded("MerchantOperationNotAllowedStatus", "merchant_operation_not_allowed_status")
{}
export class VaultNotEnabled extends coded("VaultNotEnabled", "vault_not_enabled") {}
export class Conflict extends coded("Conflict", "conflict") {}
export class MethodNotAllowed extends coded("MethodNotAllowed", "method_not_allowed") {}
export class UnsupportedMediaType extends coded("UnsupportedMediaType", "unsupported_media_type") {}
export class MissingRequestParameter extends coded("MissingRequestParameter", "missing_request_parameter") {}
export class MissingRequestHeader extends coded("MissingRequestHeader", "missing_request_header") {}
export class InvalidParameter extends coded("InvalidParameter", "invalid_parameter") {}
export class InternalError extends coded("InternalError", "internal_error") {}
export class GeneralError extends coded("GeneralError", "general_error") {}
export class DownstreamError extends coded("DownstreamError", "downstream_error") {}
// Not in the spec's tables, fixed by contract.md (rate limit, unknown route, body cap).
export class RateLimited extends coded("RateLimited", "rate_limited") {}
export class NotFound extends coded("NotFound", "not_found") {}
export class PayloadTooLarge extends coded("PayloadTooLarge", "payload_too_large") {}
/**
 * A verified provider notification whose amount or currency disagrees with our transaction (the
 * spec's 422, which names no code of its own: docs/decisions.md, "Provider notifications").
 */
export class NotificationMismatch extends coded("NotificationMismatch", "validation_error") {}
/** Operator-side (CLI) lookups of an account by id. */
export class AccountNotFound extends coded("AccountNotFound", "account_not_found") {}

// Payments, orders and checkout sessions
export class OrderNotFound extends coded("OrderNotFound", "order_not_found") {}
export class InvalidOrderStatusTransition
  extends coded("InvalidOrderStatusTransition", "invalid_order_status_transition")
{}
export class MerchantReferenceRequired extends coded("MerchantReferenceRequired", "merchant_reference_required") {}
export class DuplicateMerchantReferenceId
  extends coded("DuplicateMerchantReferenceId", "duplicate_merchant_reference_id")
{}
export class TransactionNotFound extends coded("TransactionNotFound", "transaction_not_found") {}
export class InvalidTransactionStatus extends coded("InvalidTransactionStatus", "invalid_transaction_status") {}
export class CheckoutSessionNotFound extends coded("CheckoutSessionNotFound", "checkout_session_not_found") {}
export class InvalidSessionState extends coded("InvalidSessionState", "invalid_session_state") {}
export class CountryRequired extends coded("CountryRequired", "country_required") {}
export class CountryNotAvailable extends coded("CountryNotAvailable", "country_not_available") {}
export class UnknownPaymentMethod extends coded("UnknownPaymentMethod", "unknown_payment_method") {}
export class PaymentMethodNotFound extends coded("PaymentMethodNotFound", "payment_method_not_found") {}
export class PaymentMethodNotSupportedByProvider
  extends coded("PaymentMethodNotSupportedByProvider", "payment_method_not_supported_by_provider")
{}
export class PaymentUnroutable extends coded("PaymentUnroutable", "payment_unroutable") {}
export class AmbiguousOriginalTransactionTarget
  extends coded("AmbiguousOriginalTransactionTarget", "ambiguous_original_transaction_target")
{}
export class OriginalTransactionNotFound
  extends coded("OriginalTransactionNotFound", "original_transaction_not_found")
{}
export class OriginalTransactionNotEligible
  extends coded("OriginalTransactionNotEligible", "original_transaction_not_eligible")
{}
export class RefundAmountInvalid extends coded("RefundAmountInvalid", "refund_amount_invalid") {}
export class RefundAmountExceedsRefundable
  extends coded("RefundAmountExceedsRefundable", "refund_amount_exceeds_refundable")
{}
export class RefundAlreadyFullyRefunded
  extends coded("RefundAlreadyFullyRefunded", "refund_already_fully_refunded")
{}
export class RefundInProgress extends coded("RefundInProgress", "refund_in_progress") {}
export class RefundRequiresTransactionTarget
  extends coded("RefundRequiresTransactionTarget", "refund_requires_transaction_target")
{}
export class MerchantReferenceAmbiguous extends coded("MerchantReferenceAmbiguous", "merchant_reference_ambiguous") {}
export class TransactionProviderMismatch
  extends coded("TransactionProviderMismatch", "transaction_provider_mismatch")
{}
export class CustomerNotFound extends coded("CustomerNotFound", "customer_not_found") {}
export class PaymentMethodNotSupportedAsDestination
  extends coded("PaymentMethodNotSupportedAsDestination", "payment_method_not_supported_as_destination")
{}
export class ConsentConflict extends coded("ConsentConflict", "consent_conflict") {}
export class AmountMismatchDecisionConflict
  extends coded("AmountMismatchDecisionConflict", "amount_mismatch_decision_conflict")
{}
export class AmountMismatchDecisionInProgress
  extends coded("AmountMismatchDecisionInProgress", "amount_mismatch_decision_in_progress")
{}
export class AmountMismatchDecisionInvalid
  extends coded("AmountMismatchDecisionInvalid", "amount_mismatch_decision_invalid")
{}

// Card payments
export class CardPaymentInvalidOrderState
  extends coded("CardPaymentInvalidOrderState", "card_payment_invalid_order_state")
{}
export class CardPaymentInProgress extends coded("CardPaymentInProgress", "card_payment_in_progress") {}
export class PaymentUnexpectedState extends coded("PaymentUnexpectedState", "payment_unexpected_state") {}
export class CaptureAmountExceedsAuthorized
  extends coded("CaptureAmountExceedsAuthorized", "capture_amount_exceeds_authorized")
{}
export class CaptureAmountExceedsRemaining
  extends coded("CaptureAmountExceedsRemaining", "capture_amount_exceeds_remaining")
{}
/** `card_api_unavailable` reaches the merchant as `provider_unavailable` (spec, Card payments). */
export class ProviderUnavailable extends coded("ProviderUnavailable", "provider_unavailable") {}

// Payouts
export class PayoutNotFound extends coded("PayoutNotFound", "payout_not_found") {}
export class PayoutInProgress extends coded("PayoutInProgress", "payout_in_progress") {}

// Transfers
export class TransferNotFound extends coded("TransferNotFound", "transfer_not_found") {}
export class TransferNotSupportedByProvider
  extends coded("TransferNotSupportedByProvider", "transfer_not_supported_by_provider")
{}
export class TransferDestinationInvalid extends coded("TransferDestinationInvalid", "transfer_destination_invalid") {}
export class TransferDestinationNotRegistered
  extends coded("TransferDestinationNotRegistered", "transfer_destination_not_registered")
{}
export class TransferUnroutable extends coded("TransferUnroutable", "transfer_unroutable") {}
export class ProviderNotEnabledForMerchant
  extends coded("ProviderNotEnabledForMerchant", "provider_not_enabled_for_merchant")
{}
export class TransferDestinationCountryUnknown
  extends coded("TransferDestinationCountryUnknown", "transfer_destination_country_unknown")
{}
export class TransferCardTokenRequired extends coded("TransferCardTokenRequired", "transfer_card_token_required") {}
export class TransferInvalidOrderState extends coded("TransferInvalidOrderState", "transfer_invalid_order_state") {}
export class TransferInProgress extends coded("TransferInProgress", "transfer_in_progress") {}
export class RecipientPendingVerification
  extends coded("RecipientPendingVerification", "recipient_pending_verification")
{}

// Webhooks
export class WebhookNotFound extends coded("WebhookNotFound", "webhook_not_found") {}
export class WebhookLimitExceeded extends coded("WebhookLimitExceeded", "webhook_limit_exceeded") {}
export class WebhookDeliveryNotFound extends coded("WebhookDeliveryNotFound", "webhook_delivery_not_found") {}
export class WebhookDeliveryNotRetryable
  extends coded("WebhookDeliveryNotRetryable", "webhook_delivery_not_retryable")
{}

/**
 * Every error class of the vocabulary, once. The domain's error type is their union, so a use case's
 * failures are closed (an `if`/`switch` on `code` is checked), and packages/http checks its status
 * table against the same list: a class added here without a status does not compile.
 */
export const DOMAIN_ERRORS = [
  MalformedRequest, InvalidRequest, ValidationFailed, InvalidApiKey, PublishableApiKeyNotAllowed,
  InvalidSignature, ClientSecretInvalid, ClientSecretExpired, MalformedSignatureHeader, Forbidden,
  ClientIpNotAllowlisted, MerchantOperationNotAllowedStatus, VaultNotEnabled, Conflict, MethodNotAllowed,
  UnsupportedMediaType, MissingRequestParameter, MissingRequestHeader, InvalidParameter, InternalError,
  GeneralError, DownstreamError, RateLimited, NotFound, PayloadTooLarge, NotificationMismatch, AccountNotFound,
  OrderNotFound, InvalidOrderStatusTransition, MerchantReferenceRequired, DuplicateMerchantReferenceId,
  TransactionNotFound, InvalidTransactionStatus, CheckoutSessionNotFound, InvalidSessionState, CountryRequired,
  CountryNotAvailable, UnknownPaymentMethod, PaymentMethodNotFound, PaymentMethodNotSupportedByProvider,
  PaymentUnroutable, AmbiguousOriginalTransactionTarget, OriginalTransactionNotFound,
  OriginalTransactionNotEligible, RefundAmountInvalid, RefundAmountExceedsRefundable,
  RefundAlreadyFullyRefunded, RefundInProgress, RefundRequiresTransactionTarget, MerchantReferenceAmbiguous,
  TransactionProviderMismatch, CustomerNotFound, PaymentMethodNotSupportedAsDestination, ConsentConflict,
  AmountMismatchDecisionConflict, AmountMismatchDecisionInProgress, AmountMismatchDecisionInvalid,
  CardPaymentInvalidOrderState, CardPaymentInProgress, PaymentUnexpectedState, CaptureAmountExceedsAuthorized,
  CaptureAmountExceedsRemaining, ProviderUnavailable, PayoutNotFound, PayoutInProgress, TransferNotFound,
  TransferNotSupportedByProvider, TransferDestinationInvalid, TransferDestinationNotRegistered,
  TransferUnroutable, ProviderNotEnabledForMerchant, TransferDestinationCountryUnknown,
  TransferCardTokenRequired, TransferInvalidOrderState, TransferInProgress, RecipientPendingVerification,
  WebhookNotFound, WebhookLimitExceeded, WebhookDeliveryNotFound, WebhookDeliveryNotRetryable
] as const

/** Any error of the vocabulary: what the HTTP layer turns into the spec's envelope. */
export type DomainError = InstanceType<(typeof DOMAIN_ERRORS)[number]>
/** The spec's stable codes, one per class (the HTTP status table is keyed by them). */
export type DomainErrorCode = DomainError["code"]

const CODES: ReadonlySet<string> = new Set(DOMAIN_ERRORS.map((c) => c.code))

/** A code off the wire (an envelope the client received) that the vocabulary knows. */
export const isDomainErrorCode = (code: string): code is DomainErrorCode => CODES.has(code)

// An instance of a vocabulary class, not a lookalike: the type then tells the truth about `code`.
export const isDomainError = (u: unknown): u is DomainError => DOMAIN_ERRORS.some((c) => u instanceof c)

/** The same error (its class, so its code and status) saying `message` instead. */
export const withMessage = <E extends DomainError>(error: E, message: string): E =>
  // Every vocabulary class takes the same props; the constructor's static type is just Function.
  new (error.constructor as new(props: ErrorProps) => E)({ message })

/** Shorthand for a `validation_failed` naming one field. */
export const invalidField = (field: string, message: string) =>
  new ValidationFailed({ message: `Invalid request: ${field} ${message}`, errors: [{ field, message }] })
