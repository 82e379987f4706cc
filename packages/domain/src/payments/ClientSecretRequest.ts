/** What the browser SDK sends with a client secret: a card (or a saved card's CVC), `pay`'s return_url. */
import { Schema } from "effect"
import { MAX_URL } from "../kernel/Limits.ts"
import { urlProblem } from "./RequestChecks.ts"

/** A card as the browser SDK's card fields send it, before validation. */
export interface ClientCardInput {
  readonly number?: string | undefined
  readonly exp_month?: number | undefined
  readonly exp_year?: number | undefined
  readonly cvc: string
  readonly holder_name?: string | undefined
}

/** The longest `return_url` kept (Limits.ts MAX_URL). */
export const MAX_RETURN_URL = MAX_URL

/**
 * `pay`'s return_url: an absolute http(s) address, where the `redirect` display mode brings the
 * customer back (the route decodes with it, and the OpenAPI document shows it). Kept as written, so
 * it must be header-safe as written (the URL parser would quietly drop a newline, a header would not).
 */
export const ClientReturnUrl = Schema.String.annotate({
  format: "uri",
  description: "Where the `redirect` 3-D Secure display mode brings the customer back, with `tender_payment_id=<order_id>` appended " +
    "(tender.js sends the current page unless `pay` was given `returnUrl`). Absolute http(s), https for a live-mode account, at most 2048 characters."
}).check(
  Schema.isMaxLength(MAX_RETURN_URL),
  Schema.makeFilter((url: string) =>
    urlProblem(url) === undefined || "must be an absolute http or https URL in printable ASCII (percent-encode the rest)"
  )
)

/**
 * What a live account's return_url must be besides a ClientReturnUrl: https, since the redirect
 * carries the customer's payment back (test mode keeps http for a merchant's local development).
 */
export const liveReturnUrlError = (url: string): string | undefined =>
  url.toLowerCase().startsWith("https:") ? undefined : "must be an https URL for a live-mode account"

/**
 * `card_tokens` calls one secret may make, refused ones included: enough for a customer's typos,
 * too few to test card numbers or expiries through one payment's form.
 */
export const MAX_TOKEN_MINTS = 5
