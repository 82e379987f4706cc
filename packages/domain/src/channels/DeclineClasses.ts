/**
 * What a provider's answer says about the channel that gave it (issue 27). Two lists, one home:
 * the decline codes a smart retry may try again on another channel, and the declines that say
 * nothing about the channel (the card's or the customer's doing), which health does not count
 * against it. Every other decline counts against the channel and is never retried.
 */
import type { HealthOutcome } from "./RoutingModel.ts"

/**
 * Declines another channel may well approve (the issuer or the provider was unavailable, a soft
 * `do_not_honor`): a customer-initiated card create retries these once on the next channel.
 * Never `card_declined` (it carries fraud, lost and stolen), nor the channel-neutral codes below.
 */
export const RETRYABLE: ReadonlySet<string> = new Set(["do_not_honor", "processing_error", "issuer_unavailable", "try_again_later"])

/**
 * Declines that say nothing about the channel: the same card would be refused anywhere (no funds,
 * expired, mistyped, the customer failed authentication). They neither lower its success rate nor
 * touch its breaker.
 */
export const CHANNEL_NEUTRAL: ReadonlySet<string> = new Set([
  "insufficient_funds",
  "expired_card",
  "invalid_number",
  "incorrect_cvc",
  "invalid_expiry",
  "card_velocity_exceeded",
  "authentication_failed"
])

/** Whether a decline with this code may be retried once on the next channel (RETRYABLE). */
export const isRetryable = (code: string | null | undefined): boolean => code != null && RETRYABLE.has(code)

/**
 * A provider call's answer, as health reads it: an authorization's or a local payment's result, a
 * call in doubt (`Unknown`: a timeout), or `ProviderUnavailable` (definitely not reached).
 */
export type ProviderAnswer =
  | { readonly _tag: "Approved" }
  | { readonly _tag: "Declined"; readonly decline_code: string }
  | { readonly _tag: "ChallengeRequired" }
  | { readonly _tag: "Started" }
  | { readonly _tag: "Unknown" }
  | { readonly _tag: "ProviderUnavailable" }

/** What one answer says of its channel (RoutingModel.HealthOutcome). */
export const healthOf = (answer: ProviderAnswer): HealthOutcome => {
  switch (answer._tag) {
    case "Approved":
      return "approved"
    case "Declined":
      return CHANNEL_NEUTRAL.has(answer.decline_code) ? "neutral" : "declined"
    case "ChallengeRequired":
    case "Started":
      // It answered, but the outcome is the customer's to give: reachable, nothing to rate.
      return "reachable"
    case "Unknown":
    case "ProviderUnavailable":
      return "unavailable"
  }
}
