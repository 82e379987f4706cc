/**
 * Where a channel's provider (Stripe, Adyen) sends the customer back after its 3-D Secure page:
 * `GET|POST /providers/{channel_id}/return?tender_reference=<transaction>&…` (the URL the adapters
 * send, shared/ChallengeReturn.ts; Adyen may POST its answer as a form). The payments use case
 * hands the provider what came back, completes the authorization and says where the customer goes
 * next (the SDK's return URL, the order's success or cancel URL, a session's hosted page): 303 there.
 *
 * Public and unsigned like any provider return: the transaction must be the channel's and await a
 * challenge, and the provider checks its own part. Whatever is wrong answers a page saying so, in
 * the place the challenge was shown (the inline frame too), never a 500 and with nothing changed.
 */
import { referenceOf } from "@tender/adapters/providers/shared/ChallengeReturn"
import { Errors, Payments, PublicUrl } from "@tender/domain"
import { Effect, Option, Redacted, Result } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse, UrlParams } from "effect/http"
import { html, page, response } from "../hosted/Html.ts"

export const RETURN_PATH = "/providers/:channel_id/return"

/** Adyen's posted fields (redirectResult, or a 3-D Secure 1 MD and PaRes) stay well under this. */
const MAX_FORM_BYTES = ByteSize.kibibytes(64)

const notice = (status: number, title: string, text: string) =>
  response(page({ title, body: html`<div class="card"><h1>${title}</h1><p>${text}</p></div>` }), status, { frameable: true })

const unknownReturn = () =>
  notice(404, "Payment not found", "This link does not belong to a payment awaiting verification. Go back to the merchant's site and check your order there.")

/** The URL the customer landed on, with a posted form's fields added to its query (one place for the adapters to read). */
const returnedTo = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const url = new URL(request.url, yield* PublicUrl)
  if (request.method === "POST") {
    const form = yield* request.urlParamsBody.pipe(Effect.provideService(HttpIncomingMessage.MaxBodySize, MAX_FORM_BYTES), Effect.option)
    for (const [name, value] of Option.getOrElse(form, () => UrlParams.empty)) url.searchParams.append(name, typeof value === "string" ? value : Redacted.value(value))
  }
  return url
})

const handle = Effect.gen(function*() {
  const { channel_id } = yield* HttpRouter.params
  const url = yield* returnedTo
  const reference = referenceOf(url)
  if (channel_id === undefined || reference === null) return unknownReturn()
  const answered = yield* Effect.result((yield* Payments).returnFromProvider(channel_id, reference, url.toString()))
  if (Result.isSuccess(answered)) {
    const next = answered.success.return_url
    return next !== null
      ? HttpServerResponse.redirect(next, { status: 303 })
      // A direct payment without success or cancel URL: the merchant reads the outcome.
      : notice(200, "Verification finished", "You can close this window; the merchant will confirm your payment.")
  }
  if (answered.failure.code === Errors.TransactionNotFound.code) return unknownReturn()
  // Suspended or closed: nothing is authorized; the same link completes it once the account is active.
  if (answered.failure.code === Errors.MerchantOperationNotAllowedStatus.code) {
    return notice(409, "Payments paused", "This merchant cannot accept payments right now. Go back to the merchant's site and check your order there.")
  }
  return notice(409, "Payment not verified", "This payment is not awaiting verification from this link. Go back to the merchant's site and check your order there.")
})

/** Method and path of the return route, for the gateway's route table (404 vs 405). */
export const PROVIDER_RETURN_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: string }> = [
  { method: "GET", path: RETURN_PATH },
  { method: "POST", path: RETURN_PATH }
]

/** The routes, to merge beside the API; they need the `Payments` use case. */
export const layer = HttpRouter.addAll([
  HttpRouter.route("GET", RETURN_PATH, handle),
  HttpRouter.route("POST", RETURN_PATH, handle)
])
