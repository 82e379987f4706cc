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
/** What every error of the vocabulary is built with: its message and, for `validation_failed`, the offending fields. */
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
/** The class `coded` returns: constructs a `CodedError` and carries its `code` statically too. */
export interface CodedErrorClass<Tag extends string, Code extends string> {
  new(props: ErrorProps): CodedError<Tag, Code>
  readonly code: Code
}
const BRAND = Symbol.for("@tender/domain/DomainError") // shared by every copy of this module, as `instanceof` is not
const coded = <const Tag extends string, const Code extends string>(
  tag: Tag,
  code: Code
): CodedErrorClass<Tag, Code> =>
  class extends Data.TaggedError(tag)<ErrorProps> {
    static readonly code: Code = code
    readonly code: Code = code
    readonly [BRAND] = true
  }

/** The request could not be read (its body is not the JSON it claims to be). */
export class MalformedRequest extends coded("MalformedRequest", "malformed_request") {}
/** The request is well-formed but not acceptable as a whole. */
export class InvalidRequest extends coded("InvalidRequest", "invalid_request") {}
/** One or more fields are invalid; `errors` names each. */
export class ValidationFailed extends coded("ValidationFailed", "validation_failed") {}
/** The API key is missing, unknown or revoked. */
export class InvalidApiKey extends coded("InvalidApiKey", "invalid_api_key") {}
/** A publishable key was sent to a route that needs the secret key. */
export class PublishableApiKeyNotAllowed
  extends coded("PublishableApiKeyNotAllowed", "publishable_api_key_not_allowed")
{}
/** A signed request's signature does not verify. */
export class InvalidSignature extends coded("InvalidSignature", "invalid_signature") {}
/** The browser SDK's client secret: unknown, of another account, or naming nothing the route serves. */
export class ClientSecretInvalid extends coded("ClientSecretInvalid", "client_secret_invalid") {}
/** The client secret existed and its 15 minutes are over (or the sandbox's expire helper ended it). */
export class ClientSecretExpired extends coded("ClientSecretExpired", "CLIENT_SECRET_EXPIRED") {}
/** A signature header that cannot be parsed. */
export class MalformedSignatureHeader extends coded("MalformedSignatureHeader", "malformed_signature_header") {}
/** The caller is authenticated but may not do this. */
export class Forbidden extends coded("Forbidden", "forbidden") {}
/** The request's IP is outside the account's allowlist. */
export class ClientIpNotAllowlisted extends coded("ClientIpNotAllowlisted", "client_ip_not_allowlisted") {}
/** The account's status (suspended) forbids the operation. */
export class MerchantOperationNotAllowedStatus
  extends coded("MerchantOperationNotAllowedStatus", "merchant_operation_not_allowed_status")
{}
/** The account has no card vault access enabled. */
export class VaultNotEnabled extends coded("VaultNotEnabled", "vault_not_enabled") {}
/** The record changed under the request (a version check failed) or is already in the asked state. */
export class Conflict extends coded("Conflict", "conflict") {}
/** The route exists but not with this HTTP method. */
export class MethodNotAllowed extends coded("MethodNotAllowed", "method_not_allowed") {}
/** The body's content type is not JSON. */
export class UnsupportedMediaType extends coded("UnsupportedMediaType", "unsupported_media_type") {}
/** A required query or path parameter is absent. */
export class MissingRequestParameter extends coded("MissingRequestParameter", "missing_request_parameter") {}
/** A required request header is absent or invalid. */
export class MissingRequestHeader extends coded("MissingRequestHeader", "missing_request_header") {}
/** A query or path parameter has an invalid value. */
export class InvalidParameter extends coded("InvalidParameter", "invalid_parameter") {}
/** An unexpected failure on Tender's side (a defect, not the caller's fault). */
export class InternalError extends coded("InternalError", "internal_error") {}
/** A failure the spec names no more precise code for. */
export class GeneralError extends coded("GeneralError", "general_error") {}
/** A provider or other dependency failed in a way the caller cannot fix. */
export class DownstreamError extends coded("DownstreamError", "downstream_error") {}
/** The account sent more requests than its rate limit allows (contract.md; not in the spec's tables). */
export class RateLimited extends coded("RateLimited", "rate_limited") {}
/** No route (or resource) at this path (contract.md; not in the spec's tables). */
export class NotFound extends coded("NotFound", "not_found") {}
/** The body exceeds the server's size cap (contract.md; not in the spec's tables). */
export class PayloadTooLarge extends coded("PayloadTooLarge", "payload_too_large") {}
/**
 * A verified provider notification whose amount or currency disagrees with our transaction (the
 * spec's 422, which names no code of its own: docs/decisions.md, "Provider notifications").
 */
export class NotificationMismatch extends coded("NotificationMismatch", "validation_error") {}
/** Operator-side (CLI) lookups of an account by id. */
export class AccountNotFound extends coded("AccountNotFound", "account_not_found") {}
/** No order of the account with this id (or merchant reference). */
export class OrderNotFound extends coded("OrderNotFound", "order_not_found") {}
/** The order's status table has no such move from its current status. */
export class InvalidOrderStatusTransition
  extends coded("InvalidOrderStatusTransition", "invalid_order_status_transition")
{}
/** The request must name a merchant reference and did not. */
export class MerchantReferenceRequired extends coded("MerchantReferenceRequired", "merchant_reference_required") {}
/** The account already has a payment with this merchant reference. */
export class DuplicateMerchantReferenceId
  extends coded("DuplicateMerchantReferenceId", "duplicate_merchant_reference_id")
{}
/** No transaction of the account with this id. */
export class TransactionNotFound extends coded("TransactionNotFound", "transaction_not_found") {}
/** The transaction's status does not allow the operation. */
export class InvalidTransactionStatus extends coded("InvalidTransactionStatus", "invalid_transaction_status") {}
/** No checkout session of the account with this id. */
export class CheckoutSessionNotFound extends coded("CheckoutSessionNotFound", "checkout_session_not_found") {}
/** The checkout session's status does not allow the operation. */
export class InvalidSessionState extends coded("InvalidSessionState", "invalid_session_state") {}
/** The payment method needs a country and none was given. */
export class CountryRequired extends coded("CountryRequired", "country_required") {}
/** The payment method is not offered in this country. */
export class CountryNotAvailable extends coded("CountryNotAvailable", "country_not_available") {}
/** A payment method code the catalog does not know. */
export class UnknownPaymentMethod extends coded("UnknownPaymentMethod", "unknown_payment_method") {}
/** No stored payment method (instrument) with this id. */
export class PaymentMethodNotFound extends coded("PaymentMethodNotFound", "payment_method_not_found") {}
/** The routed provider does not carry this payment method. */
export class PaymentMethodNotSupportedByProvider
  extends coded("PaymentMethodNotSupportedByProvider", "payment_method_not_supported_by_provider")
{}
/** No channel of the account (in its mode) can carry the payment. */
export class PaymentUnroutable extends coded("PaymentUnroutable", "payment_unroutable") {}
/** A follow-up (capture, refund, void) matches more than one transaction: name one. */
export class AmbiguousOriginalTransactionTarget
  extends coded("AmbiguousOriginalTransactionTarget", "ambiguous_original_transaction_target")
{}
/** The transaction a follow-up names does not exist on the order. */
export class OriginalTransactionNotFound
  extends coded("OriginalTransactionNotFound", "original_transaction_not_found")
{}
/** The transaction a follow-up names cannot take it (wrong kind or status). */
export class OriginalTransactionNotEligible
  extends coded("OriginalTransactionNotEligible", "original_transaction_not_eligible")
{}
/** A refund amount that is not a positive amount of the currency. */
export class RefundAmountInvalid extends coded("RefundAmountInvalid", "refund_amount_invalid") {}
/** The refund is more than what remains refundable. */
export class RefundAmountExceedsRefundable
  extends coded("RefundAmountExceedsRefundable", "refund_amount_exceeds_refundable")
{}
/** Nothing remains to refund. */
export class RefundAlreadyFullyRefunded
  extends coded("RefundAlreadyFullyRefunded", "refund_already_fully_refunded")
{}
/** Another refund of the payment is still being processed. */
export class RefundInProgress extends coded("RefundInProgress", "refund_in_progress") {}
/** The order has several captures: the refund must name its transaction. */
export class RefundRequiresTransactionTarget
  extends coded("RefundRequiresTransactionTarget", "refund_requires_transaction_target")
{}
/** A merchant reference that matches more than one payment: name it by id instead. */
export class MerchantReferenceAmbiguous extends coded("MerchantReferenceAmbiguous", "merchant_reference_ambiguous") {}
/** The transaction is held by another channel than the one the request names. */
export class TransactionProviderMismatch
  extends coded("TransactionProviderMismatch", "transaction_provider_mismatch")
{}
/** No customer of the account with this id. */
export class CustomerNotFound extends coded("CustomerNotFound", "customer_not_found") {}
/** The payment method cannot receive a payout or transfer. */
export class PaymentMethodNotSupportedAsDestination
  extends coded("PaymentMethodNotSupportedAsDestination", "payment_method_not_supported_as_destination")
{}
/** The payment already holds a different card-storage consent. */
export class ConsentConflict extends coded("ConsentConflict", "consent_conflict") {}
/** The amount-mismatch decision was already taken differently. */
export class AmountMismatchDecisionConflict
  extends coded("AmountMismatchDecisionConflict", "amount_mismatch_decision_conflict")
{}
/** An amount-mismatch decision is still being applied. */
export class AmountMismatchDecisionInProgress
  extends coded("AmountMismatchDecisionInProgress", "amount_mismatch_decision_in_progress")
{}
/** The amount-mismatch decision is not acceptable as given (e.g. a decline without a refund destination). */
export class AmountMismatchDecisionInvalid
  extends coded("AmountMismatchDecisionInvalid", "amount_mismatch_decision_invalid")
{}
/** The order's status does not take a card payment now. */
export class CardPaymentInvalidOrderState
  extends coded("CardPaymentInvalidOrderState", "card_payment_invalid_order_state")
{}
/** A card payment of the order is already being processed. */
export class CardPaymentInProgress extends coded("CardPaymentInProgress", "card_payment_in_progress") {}
/** The payment is in a state the operation did not expect (retry or read it again). */
export class PaymentUnexpectedState extends coded("PaymentUnexpectedState", "payment_unexpected_state") {}
/** The capture is more than the authorized amount. */
export class CaptureAmountExceedsAuthorized
  extends coded("CaptureAmountExceedsAuthorized", "capture_amount_exceeds_authorized")
{}
/** The capture is more than what remains capturable on the authorization. */
export class CaptureAmountExceedsRemaining
  extends coded("CaptureAmountExceedsRemaining", "capture_amount_exceeds_remaining")
{}
/** `card_api_unavailable` reaches the merchant as `provider_unavailable` (spec, Card payments). */
export class ProviderUnavailable extends coded("ProviderUnavailable", "provider_unavailable") {}
/** No payout of the account with this id. */
export class PayoutNotFound extends coded("PayoutNotFound", "payout_not_found") {}
/** Another payout of the payment is still in progress (or its answer was lost): retry once it has ended. */
export class PayoutInProgress extends coded("PayoutInProgress", "payout_in_progress") {}
/** No transfer of the account with this id. */
export class TransferNotFound extends coded("TransferNotFound", "transfer_not_found") {}
/** The routed provider does not pay transfers out. */
export class TransferNotSupportedByProvider
  extends coded("TransferNotSupportedByProvider", "transfer_not_supported_by_provider")
{}
/** The transfer's destination is invalid. */
export class TransferDestinationInvalid extends coded("TransferDestinationInvalid", "transfer_destination_invalid") {}
/** The destination is not registered with the provider. */
export class TransferDestinationNotRegistered
  extends coded("TransferDestinationNotRegistered", "transfer_destination_not_registered")
{}
/** No channel of the account (in its mode) can pay the transfer. */
export class TransferUnroutable extends coded("TransferUnroutable", "transfer_unroutable") {}
/** The provider is not enabled for the account. */
export class ProviderNotEnabledForMerchant
  extends coded("ProviderNotEnabledForMerchant", "provider_not_enabled_for_merchant")
{}
/** The destination's country cannot be determined. */
export class TransferDestinationCountryUnknown
  extends coded("TransferDestinationCountryUnknown", "transfer_destination_country_unknown")
{}
/** A card transfer must name a card token. */
export class TransferCardTokenRequired extends coded("TransferCardTokenRequired", "transfer_card_token_required") {}
/** The order's status does not take a transfer now. */
export class TransferInvalidOrderState extends coded("TransferInvalidOrderState", "transfer_invalid_order_state") {}
/** A transfer of the order is already being processed. */
export class TransferInProgress extends coded("TransferInProgress", "transfer_in_progress") {}
/** The recipient is not verified yet by the provider. */
export class RecipientPendingVerification
  extends coded("RecipientPendingVerification", "recipient_pending_verification")
{}
/** No webhook endpoint of the account with this id. */
export class WebhookNotFound extends coded("WebhookNotFound", "webhook_not_found") {}
/** The account has as many webhook endpoints as it may. */
export class WebhookLimitExceeded extends coded("WebhookLimitExceeded", "webhook_limit_exceeded") {}
/** No webhook delivery of the account with this id. */
export class WebhookDeliveryNotFound extends coded("WebhookDeliveryNotFound", "webhook_delivery_not_found") {}
/** The delivery's status does not allow a manual retry. */
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

/** Built by a vocabulary class (of this copy of the module or another), not a lookalike: its `code` is one of the vocabulary's. */
export const isDomainError = (u: unknown): u is DomainError =>
  typeof u === "object" && u !== null && BRAND in u && "code" in u && typeof u.code === "string" && CODES.has(u.code)

/** The same error (its class, so its code and status) saying `message` instead. */
export const withMessage = <E extends DomainError>(error: E, message: string): E =>
  // Every vocabulary class takes the same props; the constructor's static type is just Function.
  new (error.constructor as new(props: ErrorProps) => E)({ message })

/** Shorthand for a `validation_failed` naming one field. */
export const invalidField = (field: string, message: string) =>
  new ValidationFailed({ message: `Invalid request: ${field} ${message}`, errors: [{ field, message }] })
