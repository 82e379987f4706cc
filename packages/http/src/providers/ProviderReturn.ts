/**
 * Where a channel's provider (Stripe, Adyen) sends the customer back after its 3-D Secure page:
 * `/providers/{channel_id}/return?tender_reference=<transaction>&…` (the URL the adapters send,
 * shared/ChallengeReturn.ts). The provider's redirect is a GET carrying the customer's answer (Stripe's
 * `payment_intent`, Adyen's `redirectResult`), and contract.md says "Reading a page (GET) never
 * authorizes": a link scanner, a prefetch or a reload must not complete a payment. So the GET only
 * answers a small page whose form posts the same URL back (its script submits it at once; without
 * scripts, the customer presses Continue), and only a POST completes: the payments use case hands the
 * provider what came back, completes the authorization and says where the customer goes next (the
 * SDK's return URL, the order's success or cancel URL, a session's hosted page): 303 there. Adyen
 * may also POST its answer as a form straight away.
 *
 * Public and unsigned like any provider return: the transaction must be the channel's and await a
 * challenge, and the provider checks its own part. Whatever is wrong answers a page saying so, in
 * the place the challenge was shown (the inline frame too), never a 500 and with nothing changed.
 */
import { referenceOf } from "@tender/adapters/providers/shared/ChallengeReturn"
import { Errors, Payments, PublicUrl } from "@tender/domain"
import { Effect, Redacted, Result } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { formBody, html, page, response } from "../hosted/Html.ts"

export const RETURN_PATH = "/providers/:channel_id/return"

/** Adyen's posted fields (redirectResult, or a 3-D Secure 1 MD and PaRes) stay well under this. */
const MAX_FORM_BYTES = ByteSize.kibibytes(64)

const notice = (status: number, title: string, text: string) =>
  response(page({ title, body: html`<div class="card"><h1>${title}</h1><p>${text}</p></div>` }), status, { frameable: true })

const unknownReturn = () =>
  notice(404, "Payment not found", "This link does not belong to a payment awaiting verification. Go back to the merchant's site and check your order there.")

/** The URL posted to, with the form's fields added to its query (one place for the adapters to read). */
const returnedTo = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const url = new URL(request.url, yield* PublicUrl)
  for (const [name, value] of yield* formBody(request, MAX_FORM_BYTES)) url.searchParams.append(name, typeof value === "string" ? value : Redacted.value(value))
  return url
})

const complete = Effect.gen(function*() {
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

/** Submits the return page's form: the page itself runs no inline script (its policy allows none). */
export const RETURN_SCRIPT_PATH = "/hosted/v1/return.js"

const script = HttpServerResponse.text(`document.querySelector("form[data-provider-return]").submit();\n`, {
  contentType: "text/javascript; charset=utf-8",
  headers: { "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff" }
})

/**
 * The GET: reads nothing and changes nothing; the page's form posts what the provider's redirect
 * carried back to the same route (no `action`: the page's own URL, its query included, behind any
 * proxy's prefix). Framed like the challenge was.
 */
const confirm = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const url = new URL(request.url, yield* PublicUrl)
  if (referenceOf(url) === null) return unknownReturn()
  const body = html`<form class="card" method="post" data-provider-return>
<h1>Finishing verification</h1><p>Taking you back to the merchant…</p>
<div class="actions"><button class="primary" type="submit">Continue</button></div></form>`
  return response(page({ title: "Finishing verification", body, scripts: [RETURN_SCRIPT_PATH] }), 200, {
    frameable: true,
    scripts: { scripts: ["'self'"], frames: ["'none'"], connect: ["'none'"] }
  })
})

/** Method and path of the return route, for the gateway's route table (404 vs 405). */
export const PROVIDER_RETURN_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: string }> = [
  { method: "GET", path: RETURN_PATH },
  { method: "POST", path: RETURN_PATH },
  { method: "GET", path: RETURN_SCRIPT_PATH }
]

/** The routes, to merge beside the API; they need the `Payments` use case. */
export const layer = HttpRouter.addAll([
  HttpRouter.route("GET", RETURN_PATH, confirm),
  HttpRouter.route("POST", RETURN_PATH, complete),
  HttpRouter.route("GET", RETURN_SCRIPT_PATH, Effect.succeed(script))
])
