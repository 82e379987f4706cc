import { describe, expect, it } from "vitest"
import * as Channel from "../src/channels/Channel.ts"
import { Conflict, ValidationFailed } from "../src/kernel/Errors.ts"
import type { AccountId, ChannelId } from "../src/kernel/Ids.ts"

const STRIPE_TEST = { secret_key: "sk_test_51Habc", webhook_secret: "whsec_abc123" }
const ADYEN_LIVE = {
  api_key: "AQEyhmfxK4PJbhZGw0m/n3Q5qf3VaY9UCJ1+XWZe9W27jmlZiv4PD4jhfNMofnLr2K5i8/0QwV1bDb7kfNy1WIxIIkxgBw==-abc",
  merchant_account: "AcmeShopECOM",
  hmac_key: "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056",
  live_url_prefix: "1797a841fbb37ca7-AcmeShop"
}

const fieldsOf = (result: unknown) =>
  result instanceof ValidationFailed ? (result.errors ?? []).map((e) => e.field) : "accepted"

describe("Channel.parseCredentials", () => {
  it("accepts each provider's credentials as their dashboards name them, tagged with the provider", () => {
    expect(Channel.parseCredentials("stripe", "test", STRIPE_TEST)).toEqual({ provider: "stripe", ...STRIPE_TEST })
    expect(Channel.parseCredentials("stripe", "live", { ...STRIPE_TEST, secret_key: "rk_live_51Habc" }))
      .toMatchObject({ secret_key: "rk_live_51Habc" })
    expect(Channel.parseCredentials("adyen", "live", ADYEN_LIVE)).toEqual({ provider: "adyen", ...ADYEN_LIVE })
    const { live_url_prefix: _, ...adyenTest } = ADYEN_LIVE
    expect(Channel.parseCredentials("adyen", "test", adyenTest)).toEqual({ provider: "adyen", ...adyenTest, live_url_prefix: null })
  })

  it("refuses a key of the other mode: a live channel never carries a test key, nor a test channel a live one", () => {
    expect(fieldsOf(Channel.parseCredentials("stripe", "live", STRIPE_TEST))).toEqual(["credentials.secret_key"])
    expect(fieldsOf(Channel.parseCredentials("stripe", "test", { ...STRIPE_TEST, secret_key: "sk_live_1" })))
      .toEqual(["credentials.secret_key"])
  })

  it("refuses what is not a Stripe key or signing secret (a publishable key, say)", () => {
    expect(fieldsOf(Channel.parseCredentials("stripe", "test", { secret_key: "pk_test_1", webhook_secret: "secret" })))
      .toEqual(["credentials.secret_key", "credentials.webhook_secret"])
  })

  it("reports every missing field, every misspelt one, and never echoes a value", () => {
    const result = Channel.parseCredentials("stripe", "test", { secretKey: "sk_test_supersecret" })
    expect(fieldsOf(result)).toEqual(["credentials.secret_key", "credentials.webhook_secret", "credentials.secretKey"])
    expect(JSON.stringify((result as ValidationFailed).errors) + (result as ValidationFailed).message).not.toContain("supersecret")
  })

  it("Adyen: the live URL prefix is required live and refused in test; the HMAC key must be hex", () => {
    const { live_url_prefix: _, ...noPrefix } = ADYEN_LIVE
    expect(fieldsOf(Channel.parseCredentials("adyen", "live", noPrefix))).toEqual(["credentials.live_url_prefix"])
    expect(fieldsOf(Channel.parseCredentials("adyen", "test", ADYEN_LIVE))).toEqual(["credentials.live_url_prefix"])
    expect(fieldsOf(Channel.parseCredentials("adyen", "live", { ...ADYEN_LIVE, hmac_key: "not-hex" }))).toEqual(["credentials.hmac_key"])
    expect(fieldsOf(Channel.parseCredentials("adyen", "live", { ...ADYEN_LIVE, merchant_account: 7 }))).toEqual(["credentials.merchant_account"])
  })

  it("refuses a file that is not a JSON object", () => {
    for (const input of [null, "sk_test_1", [STRIPE_TEST], 42]) {
      expect(fieldsOf(Channel.parseCredentials("stripe", "test", input))).toEqual(["credentials"])
    }
  })
})

describe("Channel.make", () => {
  const account = { id: "acct_channels000000000" as AccountId, mode: "live" as const }
  const id = "ch_make00000000000000" as ChannelId
  const NOW = "2025-05-01T10:00:00.000Z"
  const settings: Channel.ChannelSettings = { provider: "stripe", mode: "live", methods: null, currencies: null, countries: null, priority: null }

  it("makes an enabled channel of priority 0 taking everything the provider offers by default", () => {
    expect(Channel.make(account, id, settings, NOW)).toEqual({
      id,
      account_id: account.id,
      provider: "stripe",
      mode: "live",
      methods: null,
      currencies: null,
      countries: null,
      priority: 0,
      status: "enabled",
      created_at: NOW,
      updated_at: NOW
    })
  })

  it("normalises the lists: trimmed, case-folded, deduplicated in order", () => {
    const made = Channel.make(account, id, {
      ...settings,
      methods: [" Card", "CARD", "card"],
      currencies: ["eur", "USD"],
      countries: ["nl"],
      priority: 7
    }, NOW)
    expect(made).toMatchObject({ methods: ["card"], currencies: ["EUR", "USD"], countries: ["NL"], priority: 7 })
  })

  it("refuses a mode other than the account's, unknown or unoffered methods, bad codes and priorities, all at once", () => {
    const made = Channel.make(account, id, {
      ...settings,
      mode: "test",
      methods: ["card", "crypto", "bitcoin"],
      currencies: ["EURO"],
      countries: ["XX"],
      priority: 1001
    }, NOW)
    expect(fieldsOf(made)).toEqual(["mode", "methods", "methods", "currencies", "countries", "priority"])
    expect((made as ValidationFailed).errors?.[1].message).toBe("stripe does not offer crypto (it offers card)")
    expect((made as ValidationFailed).errors?.[2].message).toBe("bitcoin is not a payment method")
  })

  it("refuses an empty list (omitting the option is how to allow all)", () => {
    expect(fieldsOf(Channel.make(account, id, { ...settings, methods: [" "] }, NOW))).toEqual(["methods"])
  })
})

describe("Channel.disable", () => {
  it("disables an enabled channel once; again is a conflict", () => {
    const channel = Channel.make(
      { id: "acct_channels000000000" as AccountId, mode: "test" },
      "ch_disable00000000000" as ChannelId,
      { provider: "adyen", mode: "test", methods: null, currencies: null, countries: null, priority: 1 },
      "2025-05-01T10:00:00.000Z"
    ) as Channel.Channel
    const disabled = Channel.disable(channel, "2025-05-02T10:00:00.000Z")
    expect(disabled).toEqual({ ...channel, status: "disabled", updated_at: "2025-05-02T10:00:00.000Z" })
    expect(Channel.disable(disabled as Channel.Channel, "2025-05-03T10:00:00.000Z")).toBeInstanceOf(Conflict)
  })
})
