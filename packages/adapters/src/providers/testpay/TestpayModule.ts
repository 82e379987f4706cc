/**
 * Testpay as a provider module (ProviderModule.ts): a small card provider over JSON (TestpayWire.ts),
 * the third provider, added to show what one takes: this folder, a line in Providers.ts and a row
 * of the contract suite (docs/providers.md). It moves no real money: its credentials refuse live mode. Notifications signed with the channel's webhook secret;
 * any 2xx is taken as delivered.
 */
import { ProviderCatalog } from "@tender/domain"
import type { ProviderModule } from "../ProviderModule.ts"
import type { TestpayFake } from "./TestpayFake.ts"

export interface TestpayFakeStart {
  readonly notifyUrl?: string | undefined
  /** The one key the fake accepts; unset: any `tp_test_…`. */
  readonly apiKey?: string | undefined
  readonly webhookSecret?: string | undefined
}

export const module: ProviderModule<"testpay", TestpayFakeStart, TestpayFake & ReturnType<typeof running>> = {
  descriptor: {
    name: "testpay",
    methods: ["card"],
    transfers: false,
    credentials: [
      {
        name: "api_key",
        about: "the API key (tp_test_…: Testpay moves no real money, so it takes test-mode channels only)",
        required: ProviderCatalog.always,
        check: (value, mode) =>
          mode === "live"
            ? "Testpay has no live mode: it is a test provider"
            : /^tp_test_\w+$/.test(value) ? undefined : "must be a Testpay test key (tp_test_…)"
      },
      { name: "webhook_secret", about: "the secret notifications are signed with", required: ProviderCatalog.always, check: ProviderCatalog.noBlanks }
    ]
  },
  acknowledgement: { contentType: "application/json", body: JSON.stringify({ received: true }) },
  load: () => import("./TestpayChannel.ts").then((adapter) => adapter.build),
  fake: {
    start: async (options = {}) => {
      const { start } = await import("./TestpayFake.ts")
      const secret = options.webhookSecret ?? "tp_whsec_fake"
      const fake = await start({
        apiKey: options.apiKey,
        notifications: options.notifyUrl === undefined ? undefined : { url: options.notifyUrl, secret }
      })
      return Object.assign(fake, running(fake.url, options.apiKey, secret))
    }
  }
}

const running = (url: string, apiKey: string | undefined, webhookSecret: string) => ({
  target: { apiUrl: url },
  credentials: (_mode: "test" | "live") => ({ api_key: apiKey ?? "tp_test_fake", webhook_secret: webhookSecret })
})
