/**
 * Each provider module's credential fields, as the domain checks a credentials file with them
 * (ProviderCatalog.parseCredentials): the formats of Stripe's and Adyen's dashboards, per mode.
 */
import { Errors, ProviderCatalog } from "@tender/domain"
import { describe, expect, it } from "vitest"
import { catalog } from "../src/providers/Providers.ts"

const parse = (provider: string, mode: "test" | "live", input: unknown) =>
  ProviderCatalog.parseCredentials(ProviderCatalog.descriptorOf(catalog, provider)!, mode, input)

const STRIPE_TEST = { secret_key: "sk_test_51Habc", webhook_secret: "whsec_abc123" }
const ADYEN_LIVE = {
  api_key: "AQEyhmfxK4PJbhZGw0m/n3Q5qf3VaY9UCJ1+XWZe9W27jmlZiv4PD4jhfNMofnLr2K5i8/0QwV1bDb7kfNy1WIxIIkxgBw==-abc",
  merchant_account: "AcmeShopECOM",
  hmac_key: "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056",
  live_url_prefix: "1797a841fbb37ca7-AcmeShop"
}

const fieldsOf = (result: unknown) =>
  result instanceof Errors.ValidationFailed ? (result.errors ?? []).map((e) => e.field) : "accepted"

describe("the providers' credential fields (ProviderCatalog.parseCredentials over each module's descriptor)", () => {
  it("accepts each provider's credentials as their dashboards name them, tagged with the provider", () => {
    expect(parse("stripe", "test", STRIPE_TEST)).toEqual({ provider: "stripe", ...STRIPE_TEST })
    expect(parse("stripe", "live", { ...STRIPE_TEST, secret_key: "rk_live_51Habc" }))
      .toMatchObject({ secret_key: "rk_live_51Habc" })
    expect(parse("adyen", "live", ADYEN_LIVE)).toEqual({ provider: "adyen", ...ADYEN_LIVE })
    const { live_url_prefix: _, ...adyenTest } = ADYEN_LIVE
    expect(parse("adyen", "test", adyenTest)).toEqual({ provider: "adyen", ...adyenTest, live_url_prefix: null })
  })

  it("refuses a key of the other mode: a live channel never carries a test key, nor a test channel a live one", () => {
    expect(fieldsOf(parse("stripe", "live", STRIPE_TEST))).toEqual(["credentials.secret_key"])
    expect(fieldsOf(parse("stripe", "test", { ...STRIPE_TEST, secret_key: "sk_live_1" })))
      .toEqual(["credentials.secret_key"])
  })

  it("refuses what is not a Stripe key or signing secret (a publishable key, say)", () => {
    expect(fieldsOf(parse("stripe", "test", { secret_key: "pk_test_1", webhook_secret: "secret" })))
      .toEqual(["credentials.secret_key", "credentials.webhook_secret"])
  })

  it("reports every missing field, every misspelt one, and never echoes a value", () => {
    const result = parse("stripe", "test", { secretKey: "sk_test_supersecret" })
    expect(fieldsOf(result)).toEqual(["credentials.secret_key", "credentials.webhook_secret", "credentials.secretKey"])
    expect(JSON.stringify((result as Errors.ValidationFailed).errors) + (result as Errors.ValidationFailed).message).not.toContain("supersecret")
  })

  it("Adyen: the live URL prefix is required live and refused in test; the HMAC key must be hex", () => {
    const { live_url_prefix: _, ...noPrefix } = ADYEN_LIVE
    expect(fieldsOf(parse("adyen", "live", noPrefix))).toEqual(["credentials.live_url_prefix"])
    expect(fieldsOf(parse("adyen", "test", ADYEN_LIVE))).toEqual(["credentials.live_url_prefix"])
    expect(fieldsOf(parse("adyen", "live", { ...ADYEN_LIVE, hmac_key: "not-hex" }))).toEqual(["credentials.hmac_key"])
    expect(fieldsOf(parse("adyen", "live", { ...ADYEN_LIVE, merchant_account: 7 }))).toEqual(["credentials.merchant_account"])
  })

  it("refuses a file that is not a JSON object", () => {
    for (const input of [null, "sk_test_1", [STRIPE_TEST], 42]) {
      expect(fieldsOf(parse("stripe", "test", input))).toEqual(["credentials"])
    }
  })
})

