/**
 * Operation: `pay`, the card form submitted: the payment's own authorization (operations/ClientPay.ts,
 * through the Payments use case) with the token `card_tokens` answered for this very secret.
 */
import { Clock, Effect, Option } from "effect"
import type { ThreeDsDisplayMode } from "../../accounts/Account.ts"
import { invalidField, InvalidRequest, type ValidationFailed } from "../../kernel/Errors.ts"
import { isoOf } from "../../kernel/Time.ts"
import { ClientSecretRepo } from "../ClientSecretPorts.ts"
import { liveReturnUrlError } from "../ClientSecretRequest.ts"
import { type ClientPaymentStatus, type ClientPayResult, statusOf } from "../ClientSecretViews.ts"
import { Payments } from "../Payments.ts"
import { type ClientGrant, writable } from "./Grant.ts"

/** Pure: why this secret may not pay with this return_url, if it may not. */
export const payRefusal = (grant: ClientGrant, returnUrl: string | undefined): InvalidRequest | ValidationFailed | undefined => {
  if (grant.secret.kind === "transfer") {
    return new InvalidRequest({ message: "A card transfer is executed by the merchant's server (POST /v1/transfers/{order_id}/execute), not paid" })
  }
  const insecure = returnUrl !== undefined && grant.account.mode === "live" ? liveReturnUrlError(returnUrl) : undefined
  return insecure === undefined ? undefined : invalidField("return_url", insecure)
}

/** Pure: `pay`'s answer: with a challenge, how tender.js shows it. */
export const payAnswer = (status: ClientPaymentStatus, mode: ThreeDsDisplayMode): ClientPayResult =>
  status.status === "requires_action" && status.challenge_url !== undefined ? { ...status, display_mode: mode } : status

/** `returnUrl`: a ClientReturnUrl, kept for a challenge only in the account's `redirect` display mode. */
export const pay = Effect.fn("ClientSecrets.pay")(function*(grant: ClientGrant, token: string, returnUrl?: string) {
  const refused = payRefusal(grant, returnUrl)
  if (refused !== undefined) return yield* Effect.fail(refused)
  yield* writable(grant)
  const repo = yield* ClientSecretRepo
  // A new card must be the one card_tokens vaulted for this very secret (the latest, if the
  // customer corrected it), read now rather than from the grant, which may predate that call;
  // a saved card's token is checked against the order by clientPay.
  if (grant.secret.collect === "card") {
    const minted = Option.flatMap(yield* repo.find(grant.secret.hash), (r) => Option.fromNullishOr(r.card_token))
    if (!Option.contains(minted, token)) {
      return yield* invalidField("token", "must be the token card_tokens answered for this client secret")
    }
  }
  // Only the redirect mode takes the customer's whole page to the challenge, so only it needs a
  // way back; inline and popup challenges keep the order's success_url / cancel_url inside
  // their frame or window, as before. The mode is read once, here, as the answer's display_mode.
  const mode = grant.account.three_ds_display_mode
  const paid = yield* (yield* Payments).clientPay(grant.account, grant.secret.order_id, token, mode === "redirect" ? returnUrl : undefined)
  yield* repo.markUsed(grant.secret.hash, isoOf(yield* Clock.currentTimeMillis))
  return payAnswer(statusOf(paid.order, paid.txn), mode)
})
