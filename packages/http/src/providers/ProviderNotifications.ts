/**
 * `POST /providers/{channel_id}/notifications` (contract.md, Providers): where a channel's provider
 * (Stripe's webhook endpoint, Adyen's standard notification webhook) reports what became of
 * payments. Outside `/v1`: no API key, the provider's own signature is the authentication, checked
 * by the use case over the body's exact bytes, which are read here once and never re-serialized
 * (nor logged: they are the provider's, and name card details such as the last four digits).
 *
 * Answers: 401 `invalid_signature` (unverified, or no such channel), 422 `validation_error` (an
 * amount or currency that disagrees), otherwise what each provider expects to stop retrying:
 * its module's `acknowledgement` (Stripe any 2xx, Adyen the body `[accepted]`).
 */
import { moduleOf } from "@tender/adapters/providers/Providers"
import { Errors, Payments } from "@tender/domain"
import { Effect } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { belowApi } from "../RequestContext.ts"

export const NOTIFICATIONS_PATH = "/providers/:channel_id/notifications"

/** Method and path, for the gateway's route table (404 vs 405). */
export const NOTIFICATION_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: string }> = [
  { method: "POST", path: NOTIFICATIONS_PATH }
]

/** What each provider reads as "delivered, do not retry". */
const acknowledgement = (provider: string) => {
  // The channel's provider is one of the list's: it was added through its catalog.
  const { body, contentType } = moduleOf(provider)?.acknowledgement ?? { body: "", contentType: "text/plain" }
  return HttpServerResponse.text(body, { status: 200, contentType })
}

const receive = (maxBodyBytes: number) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { channel_id } = yield* HttpRouter.params
    if (Number(request.headers["content-length"] ?? "0") > maxBodyBytes) {
      return yield* new Errors.PayloadTooLarge({ message: `The request body exceeds ${maxBodyBytes} bytes` })
    }
    const rawBody = new Uint8Array(
      yield* request.arrayBuffer.pipe(
        Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBodyBytes)),
        Effect.mapError(() => new Errors.PayloadTooLarge({ message: `The request body exceeds ${maxBodyBytes} bytes` }))
      )
    )
    const payments = yield* Payments
    const { provider } = yield* belowApi(payments.notify(channel_id ?? "", { headers: request.headers, rawBody }))
    return acknowledgement(provider)
  })

/** The route, to merge beside the API; it needs the `Payments` use case. Errors render in the gateway's envelope. */
export const layer = (options: { readonly maxBodyBytes: number }) =>
  HttpRouter.addAll([HttpRouter.route("POST", NOTIFICATIONS_PATH, receive(options.maxBodyBytes))])
