/**
 * Stripe as a provider module (ProviderModule.ts): cards over PaymentIntents, webhooks signed with
 * the endpoint's secret (`Stripe-Signature`), any 2xx taken as delivered. The SDK is loaded with
 * the channel adapter (StripeChannel.ts), the wire-level fake with `fake.start`.
 */
import { ProviderCatalog } from "@tender/domain"
import type { ProviderModule } from "../ProviderModule.ts"
import type { StripeFake } from "./StripeFake.ts"

export interface StripeFakeStart {
  readonly notifyUrl?: string | undefined
  /** The one secret key the fake accepts (a live channel's `sk_live_…`); unset: any `sk_test_…`. */
  readonly apiKey?: string | undefined
  /** The webhook endpoint's signing secret the fake signs with; default `whsec_fake`. */
  readonly webhookSecret?: string | undefined
}

export const module: ProviderModule<"stripe", StripeFakeStart, StripeFake & ReturnType<typeof running>> = {
  descriptor: {
    name: "stripe",
    // Stripe offers more (iDEAL, …); a method joins when the adapter carries it.
    methods: ["card"],
    // Stripe's transfers are Connect's, another product than the card API a channel holds keys for.
    transfers: false,
    credentials: [
      {
        name: "secret_key",
        about: "the secret (sk_…) or restricted (rk_…) API key of the account's mode",
        required: ProviderCatalog.always,
        check: (value, mode) =>
          /^(sk|rk)_(test|live)_[A-Za-z0-9]+$/.test(value)
            ? value.startsWith(`sk_${mode}_`) || value.startsWith(`rk_${mode}_`)
              ? undefined
              : `must be a ${mode}-mode key (sk_${mode}_… or rk_${mode}_…) for a ${mode}-mode channel`
            : "must be a Stripe secret or restricted key (sk_test_…, sk_live_…, rk_test_…, rk_live_…)"
      },
      {
        name: "webhook_secret",
        about: "the signing secret (whsec_…) of the webhook endpoint Stripe notifies",
        required: ProviderCatalog.always,
        check: (value) => /^whsec_[A-Za-z0-9]+$/.test(value) ? undefined : "must be a Stripe webhook signing secret (whsec_…)"
      }
    ]
  },
  acknowledgement: { contentType: "application/json", body: JSON.stringify({ received: true }) },
  load: () => import("./StripeChannel.ts").then((adapter) => adapter.build),
  fake: {
    start: async (options = {}) => {
      const { start } = await import("./StripeFake.ts")
      const secret = options.webhookSecret ?? "whsec_fake"
      const fake = await start({
        apiKey: options.apiKey,
        webhook: options.notifyUrl === undefined ? undefined : { url: options.notifyUrl, secret }
      })
      return Object.assign(fake, running(fake.url, options.apiKey, secret))
    }
  }
}

const running = (url: string, apiKey: string | undefined, webhookSecret: string) => ({
  target: { apiUrl: url },
  credentials: (mode: "test" | "live") => ({ secret_key: apiKey ?? `sk_${mode}_fake`, webhook_secret: webhookSecret })
})
