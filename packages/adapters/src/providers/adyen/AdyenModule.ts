/**
 * Adyen as a provider module (ProviderModule.ts): cards over the Checkout API, standard
 * notifications signed per item (HMAC, key in hex), acknowledged with the body `[accepted]`. The
 * Adyen library (about a second to import) is loaded with the channel adapter (AdyenChannel.ts),
 * the wire-level fake with `fake.start`.
 */
import { ProviderCatalog } from "@tender/domain"
import type { ProviderModule } from "../ProviderModule.ts"
import type { AdyenFake } from "./AdyenFake.ts"

export interface AdyenFakeStart {
  readonly notifyUrl?: string | undefined
  readonly apiKey?: string | undefined
  readonly merchantAccount?: string | undefined
  /** The HMAC key (hex) the fake signs notifications with; default 32 zero bytes. */
  readonly hmacKey?: string | undefined
  /** The merchant account's "multiple partial captures" setting; default on. */
  readonly multipleCaptures?: boolean | undefined
}

export const module: ProviderModule<"adyen", AdyenFakeStart, AdyenFake & ReturnType<typeof running>> = {
  descriptor: {
    name: "adyen",
    // Adyen offers more (iDEAL, Pix, …); a method joins when the adapter carries it.
    methods: ["card"],
    // Adyen's payouts are the Balance Platform's, another product than the Checkout API.
    transfers: false,
    credentials: [
      { name: "api_key", about: "the API key (X-API-Key)", required: ProviderCatalog.always, check: ProviderCatalog.noBlanks },
      { name: "merchant_account", about: "the merchant account payments are made under", required: ProviderCatalog.always, check: ProviderCatalog.noBlanks },
      {
        name: "hmac_key",
        about: "the notification webhook's HMAC key (hex)",
        required: ProviderCatalog.always,
        check: (value) =>
          /^(?:[0-9A-Fa-f]{2}){16,}$/.test(value) ? undefined : "must be the notification HMAC key as Adyen shows it (hexadecimal)"
      },
      {
        name: "live_url_prefix",
        about: "live only: the company's live URL prefix (Customer Area, Developers → API URLs)",
        // Adyen's live endpoints are per company (`{prefix}-checkout-live.adyenpayments.com`); test has one.
        required: (mode) => mode === "live",
        check: (value, mode) =>
          mode === "test"
            ? "is for live mode only (the test endpoints have no prefix)"
            : /^[A-Za-z0-9-]+$/.test(value)
            ? undefined
            : "must be the live URL prefix from the Customer Area (letters, digits and '-')"
      }
    ]
  },
  acknowledgement: { contentType: "text/plain", body: "[accepted]" },
  load: () => import("./AdyenChannel.ts").then((adapter) => adapter.build),
  fake: {
    start: async (options = {}) => {
      const { start } = await import("./AdyenFake.ts")
      const hmacKey = options.hmacKey ?? "00".repeat(32)
      const fake = await start({
        apiKey: options.apiKey,
        merchantAccount: options.merchantAccount,
        multipleCaptures: options.multipleCaptures,
        notifications: options.notifyUrl === undefined ? undefined : { url: options.notifyUrl, hmacKey }
      })
      return Object.assign(fake, running(fake, hmacKey))
    }
  }
}

const running = (fake: { readonly endpoint: string; readonly caCertificate: string; readonly apiKey: string; readonly merchantAccount: string }, hmacKey: string) => ({
  target: { apiUrl: fake.endpoint, caCertificate: fake.caCertificate },
  credentials: (mode: "test" | "live") => ({
    api_key: fake.apiKey,
    merchant_account: fake.merchantAccount,
    hmac_key: hmacKey,
    ...(mode === "live" ? { live_url_prefix: "1797a841fbb37ca7-TenderFake" } : {})
  })
})
