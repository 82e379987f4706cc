/**
 * Adyen's refusal reasons (`refusalReasonCode`, else the `refusalReason` text) → Tender's
 * normalized `decline_code` (the vocabulary the sandbox and the Stripe adapter use).
 * docs/providers.md ("Adyen") carries the same table. Fraud and blocked-card refusals become the plain
 * `card_declined`: the payer is not told a card is flagged.
 */
const BY_CODE: Readonly<Record<string, string>> = {
  "2": "card_declined", // Refused
  "3": "card_declined", // Referral
  "4": "processing_error", // Acquirer Error
  "5": "card_declined", // Blocked Card
  "6": "expired_card", // Expired Card
  "7": "card_declined", // Invalid Amount
  "8": "invalid_number", // Invalid Card Number
  "9": "processing_error", // Issuer Unavailable
  "10": "card_not_supported", // Not supported
  "11": "authentication_failed", // 3D Not Authenticated
  "12": "insufficient_funds", // Not enough balance
  "14": "card_declined", // Acquirer Fraud
  "15": "card_declined", // Cancelled
  "16": "card_declined", // Shopper Cancelled
  "20": "card_declined", // FRAUD
  "22": "card_declined", // FRAUD-CANCELLED
  "23": "card_not_supported", // Transaction Not Permitted
  "24": "incorrect_cvc", // CVC Declined
  "25": "card_declined", // Restricted Card
  "26": "card_declined", // Revocation Of Auth
  "27": "do_not_honor", // Declined Non Generic
  "28": "card_velocity_exceeded", // Withdrawal amount exceeded
  "29": "card_velocity_exceeded", // Withdrawal count exceeded
  "31": "card_declined", // Issuer Suspected Fraud
  "38": "authentication_failed", // Authentication required
  "42": "authentication_failed" // 3DS Authentication Error
}

/** The same reasons by their text, for answers that carry no code. */
const BY_REASON: Readonly<Record<string, string>> = {
  "refused": "card_declined",
  "expired card": "expired_card",
  "invalid card number": "invalid_number",
  "not enough balance": "insufficient_funds",
  "cvc declined": "incorrect_cvc",
  "3d not authenticated": "authentication_failed",
  "declined non generic": "do_not_honor",
  "issuer unavailable": "processing_error",
  "acquirer error": "processing_error"
}

/** The normalized code of an Adyen refusal; an unlisted one is a plain `card_declined`. */
export const normalize = (refusal: { readonly refusalReasonCode?: string | null | undefined; readonly refusalReason?: string | null | undefined }): string =>
  BY_CODE[refusal.refusalReasonCode ?? ""] ?? BY_REASON[(refusal.refusalReason ?? "").toLowerCase()] ?? "card_declined"

/** Synchronous validation errors of a payment request (`errorCode`) that are the card's fault. */
export const fromValidation = (errorCode: string): string | undefined =>
  errorCode === "101" ? "invalid_number" : errorCode === "129" ? "invalid_expiry" : errorCode === "103" ? "incorrect_cvc" : undefined
