/**
 * Stripe's decline codes (`decline_code`, else the error `code`) → Tender's normalized
 * `decline_code` (the vocabulary the sandbox uses). docs/providers.md carries the same table.
 * Codes that say a card is flagged (lost, stolen, fraud) become the plain `card_declined`: Stripe
 * itself advises never telling the payer why such a card was declined.
 */
const TABLE: Readonly<Record<string, string>> = {
  generic_decline: "card_declined",
  card_declined: "card_declined",
  lost_card: "card_declined",
  stolen_card: "card_declined",
  pickup_card: "card_declined",
  fraudulent: "card_declined",
  merchant_blacklist: "card_declined",
  restricted_card: "card_declined",
  security_violation: "card_declined",
  insufficient_funds: "insufficient_funds",
  expired_card: "expired_card",
  incorrect_number: "invalid_number",
  invalid_number: "invalid_number",
  incorrect_cvc: "incorrect_cvc",
  invalid_cvc: "incorrect_cvc",
  invalid_expiry_month: "invalid_expiry",
  invalid_expiry_year: "invalid_expiry",
  do_not_honor: "do_not_honor",
  processing_error: "processing_error",
  try_again_later: "processing_error",
  issuer_not_available: "processing_error",
  card_velocity_exceeded: "card_velocity_exceeded",
  withdrawal_count_limit_exceeded: "card_velocity_exceeded",
  card_not_supported: "card_not_supported",
  currency_not_supported: "card_not_supported",
  authentication_required: "authentication_failed",
  payment_intent_authentication_failure: "authentication_failed"
}

/** The normalized code of a Stripe decline; an unlisted code is a plain `card_declined`. */
export const normalize = (error: { readonly decline_code?: string | null | undefined; readonly code?: string | null | undefined } | null | undefined): string =>
  TABLE[error?.decline_code ?? ""] ?? TABLE[error?.code ?? ""] ?? "card_declined"
