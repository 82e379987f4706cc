/**
 * An Adyen channel's client (AdyenModule's `load`): the PaymentProvider over the official library
 * under the channel's merchant account, and its notifications verified with the channel's HMAC key.
 */
import { NotificationUnverified } from "@tender/domain"
import { Effect, Schema } from "effect"
import type { BuildContext, ChannelClient } from "../ProviderModule.ts"
import * as AdyenNotifications from "./AdyenNotifications.ts"
import { makeAdyenProvider } from "./AdyenProvider.ts"

const Credentials = Schema.Struct({
  api_key: Schema.String,
  merchant_account: Schema.String,
  hmac_key: Schema.String,
  live_url_prefix: Schema.NullOr(Schema.String)
})

export const build = (context: BuildContext): ChannelClient => {
  // What was sealed was checked by the descriptor's fields: a mismatch here is corruption, a defect.
  const credentials = Schema.decodeUnknownSync(Credentials)(context.credentials)
  const { channel } = context
  const provider = makeAdyenProvider({
    apiKey: credentials.api_key,
    merchantAccount: credentials.merchant_account,
    environment: channel.mode,
    liveEndpointUrlPrefix: credentials.live_url_prefix ?? undefined,
    endpoint: context.endpoint.apiUrl,
    caCertificate: context.endpoint.caCertificate,
    mode: channel.mode,
    returnUrl: context.returnUrl,
    timeoutMs: context.timeoutMs,
    // Shared by every process on this storage: a lookup after a crash knows what was sent.
    journal: context.journal,
    journalScope: `${credentials.merchant_account}/${channel.id}`
  })
  return {
    provider,
    notifications: (delivery) =>
      Effect.gen(function*() {
        const items = yield* AdyenNotifications.verify(Buffer.from(delivery.rawBody).toString("utf8"), credentials.hmac_key).pipe(
          Effect.mapError((error) => new NotificationUnverified({ message: error.message }))
        )
        // A company-level webhook may carry other merchant accounts' payments: not this channel's.
        const ours = items.filter((item) => item.merchant_account === credentials.merchant_account)
        // The adapter keeps capture and refund outcomes for `settlement` (Adyen has no API to ask).
        return { notices: ours.flatMap(AdyenNotifications.noticesOf), accept: Effect.forEach(ours, (item) => provider.observe(item), { discard: true }) }
      })
  }
}
