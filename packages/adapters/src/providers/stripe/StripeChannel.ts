/**
 * A Stripe channel's client (StripeModule's `load`): the PaymentProvider over the official SDK with
 * the channel's secret key, and its webhooks verified with the endpoint's signing secret.
 */
import { NotificationUnverified } from "@tender/domain"
import { Clock, Effect, Schema } from "effect"
import type { BuildContext, ChannelClient } from "../ProviderModule.ts"
import * as StripeNotifications from "./StripeNotifications.ts"
import { makeStripeProvider } from "./StripeProvider.ts"

const Credentials = Schema.Struct({ secret_key: Schema.String, webhook_secret: Schema.String })

/** The SDK's host options for an endpoint URL (a fake's `http://127.0.0.1:12111`). */
const endpointOf = (url: string | undefined) => {
  if (url === undefined) return {}
  const parsed = new URL(url)
  const protocol = parsed.protocol === "http:" ? "http" as const : "https" as const
  return { host: parsed.hostname, port: Number(parsed.port || (protocol === "http" ? 80 : 443)), protocol }
}

export const build = (context: BuildContext): ChannelClient => {
  // What was sealed was checked by the descriptor's fields: a mismatch here is corruption, a defect.
  const credentials = Schema.decodeUnknownSync(Credentials)(context.credentials)
  return {
    provider: makeStripeProvider({
      secretKey: credentials.secret_key,
      mode: context.channel.mode,
      returnUrl: context.returnUrl,
      timeoutMs: context.timeoutMs,
      ...endpointOf(context.endpoint.apiUrl)
    }),
    notifications: (delivery) =>
      Effect.gen(function*() {
        const event = yield* StripeNotifications.verify(
          Buffer.from(delivery.rawBody),
          delivery.headers["stripe-signature"],
          credentials.webhook_secret,
          yield* Clock.currentTimeMillis
        ).pipe(Effect.mapError((error) => new NotificationUnverified({ message: error.message })))
        return { notices: StripeNotifications.noticesOf(event), accept: Effect.void }
      })
  }
}
