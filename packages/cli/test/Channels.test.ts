/**
 * contract.md, Providers: `tender accounts channels add ID --provider stripe|adyen --mode test|live
 * --credentials-file F [--methods …] [--priority N]` → `{channel_id}`, `channels list ID`,
 * `channels disable ID CHANNEL`, as an operator runs them against the database a running `serve`
 * owns. Credentials are checked per provider, stored sealed, and never printed.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHome, type Served } from "./support/Tender.ts"

const home = makeHome("tender-channels-cli-")
const tender = home.run
const tenderJson = home.runJson
const tenderJsonError = home.runJsonError
let served: Served
let live = ""
let test = ""

const STRIPE_LIVE = { secret_key: "sk_live_51ChannelsSecretKeyXYZ", webhook_secret: "whsec_ChannelsWebhookSecret" }
const ADYEN_LIVE = {
  api_key: "AQEyhmfxChannelsApiKey0123",
  merchant_account: "AcmeShopECOM",
  hmac_key: "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056",
  live_url_prefix: "1797a841fbb37ca7-AcmeShop"
}
const SECRETS = [STRIPE_LIVE.secret_key, STRIPE_LIVE.webhook_secret, ADYEN_LIVE.api_key, ADYEN_LIVE.hmac_key]

/** Writes `content` (JSON unless a string) into the data dir and returns its path. */
const file = (name: string, content: unknown) => {
  const path = join(home.dataDir, name)
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content))
  return path
}

const expectNoSecret = (...outputs: ReadonlyArray<string>) => {
  for (const output of outputs) for (const secret of SECRETS) expect(output).not.toContain(secret)
}

beforeAll(async () => {
  served = await home.serve()
  live = (await home.runJson("accounts", "create", "--name", "Live shop", "--mode", "live")).account_id
  test = (await home.runJson("accounts", "create", "--name", "Test shop")).account_id
}, 120_000)

afterAll(async () => {
  if (served !== undefined) await served.stop()
  await home.cleanup()
}, 120_000)

describe("tender accounts channels", () => {
  let stripe = ""
  let adyen = ""

  it("add prints exactly {channel_id}; list shows the channels in creation order, their settings and no credential", async () => {
    const added = await tenderJson(
      "accounts", "channels", "add", live, "--provider", "stripe", "--mode", "live",
      "--credentials-file", file("stripe.json", STRIPE_LIVE), "--methods", "card", "--priority", "10"
    )
    expect(Object.keys(added)).toEqual(["channel_id"])
    expect(added.channel_id).toMatch(/^ch_[A-Za-z0-9]+$/)
    stripe = added.channel_id

    const text = await tender(
      "accounts", "channels", "add", live, "--provider", "adyen", "--mode", "live",
      "--credentials-file", file("adyen.json", ADYEN_LIVE), "--currencies", "eur,USD", "--countries", "NL"
    )
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toMatch(/^Added live-mode adyen channel ch_/)
    expect(text.stdout).toMatch(/priority\s+0/)
    expectNoSecret(text.stdout, text.stderr)
    adyen = /channel (ch_[A-Za-z0-9]+)/.exec(text.stdout)![1]

    const listed = await tenderJson("accounts", "channels", "list", live)
    expect(listed.data).toEqual([
      expect.objectContaining({
        id: stripe, account_id: live, provider: "stripe", mode: "live", methods: ["card"], currencies: null,
        countries: null, priority: 10, status: "enabled"
      }),
      expect.objectContaining({
        id: adyen, provider: "adyen", methods: null, currencies: ["EUR", "USD"], countries: ["NL"], priority: 0, status: "enabled"
      })
    ])
    const table = await tender("accounts", "channels", "list", live)
    expect(table.code).toBe(0)
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+PROVIDER\s+MODE\s+STATUS\s+PRIORITY\s+METHODS/)
    expect(table.stdout).toMatch(new RegExp(`${stripe}\\s+stripe\\s+live\\s+enabled\\s+10\\s+card\\s`))
    expectNoSecret(JSON.stringify(listed), table.stdout)
    // Another account sees none of them.
    expect(await tenderJson("accounts", "channels", "list", test)).toEqual({ data: [] })
    expect((await tender("accounts", "channels", "list", test)).stdout.trim()).toBe(`No channels on ${test}.`)
  })

  it("stores the credentials sealed: the row holds neither secret, in any column", async () => {
    const pool = home.database()
    try {
      const { rows } = await pool.query<{ row: string }>(
        "SELECT row_to_json(c)::text AS row FROM channels c WHERE id = ANY($1)",
        [[stripe, adyen]]
      )
      expect(rows).toHaveLength(2)
      for (const { row } of rows) {
        expectNoSecret(row, Buffer.from(row).toString("hex"))
        expect(row).not.toContain(ADYEN_LIVE.merchant_account)
      }
    } finally {
      await pool.end()
    }
  })

  it("an unknown provider or mode is refused by the parser, as every CLI validation error", async () => {
    const credentials = file("stripe.json", STRIPE_LIVE)
    expect(await tenderJsonError("accounts", "channels", "add", live, "--provider", "paypal", "--mode", "live", "--credentials-file", credentials))
      .toMatchObject({ code: "validation_failed", errors: [{ field: "provider" }] })
    expect(await tenderJsonError("accounts", "channels", "add", live, "--provider", "stripe", "--mode", "sandbox", "--credentials-file", credentials))
      .toMatchObject({ code: "validation_failed", errors: [{ field: "mode" }] })
    const plain = await tender("accounts", "channels", "add", live, "--provider", "paypal", "--mode", "live", "--credentials-file", credentials)
    expect(plain.code).not.toBe(0)
    expect(plain.stdout).toBe("")
    expect(plain.stderr).toMatch(/^error: .*--provider.*"paypal"/)
  })

  it("checks the credentials per provider and mode, naming each bad field and never echoing a value", async () => {
    const testKey = await tenderJsonError(
      "accounts", "channels", "add", live, "--provider", "stripe", "--mode", "live",
      "--credentials-file", file("stripe-test-key.json", { secret_key: "sk_test_51ChannelsSecretKeyXYZ", webhook_secret: STRIPE_LIVE.webhook_secret })
    )
    expect(testKey).toMatchObject({ code: "validation_failed", errors: [{ field: "credentials.secret_key" }] })

    const { live_url_prefix: _, ...noPrefix } = ADYEN_LIVE
    const adyenRun = await tender(
      "accounts", "channels", "add", live, "--provider", "adyen", "--mode", "live",
      "--credentials-file", file("adyen-no-prefix.json", { ...noPrefix, hmacKey: ADYEN_LIVE.hmac_key }), "--json"
    )
    expect(adyenRun.code).not.toBe(0)
    expect(JSON.parse(adyenRun.stderr).errors.map((e: { field: string }) => e.field))
      .toEqual(["credentials.live_url_prefix", "credentials.hmacKey"])
    expectNoSecret(adyenRun.stdout, adyenRun.stderr)

    const notJson = await tender(
      "accounts", "channels", "add", live, "--provider", "stripe", "--mode", "live",
      "--credentials-file", file("broken.json", `{"secret_key": ${STRIPE_LIVE.secret_key}}`)
    )
    expect(notJson.code).not.toBe(0)
    expect(notJson.stderr).toMatch(/credentials-file is not valid JSON/)
    expectNoSecret(notJson.stdout, notJson.stderr)

    expect(await tenderJsonError(
      "accounts", "channels", "add", live, "--provider", "stripe", "--mode", "live", "--credentials-file", join(home.dataDir, "missing.json")
    )).toMatchObject({ code: "validation_failed", errors: [{ field: "credentials-file" }] })
    // None of the refused ones was stored.
    expect((await tenderJson("accounts", "channels", "list", live)).data).toHaveLength(2)
  })

  it("refuses a channel of the other mode than the account's, methods the provider does not offer, and a bad priority", async () => {
    const stripeTest = file("stripe-test.json", { secret_key: "sk_test_51ChannelsTest", webhook_secret: "whsec_ChannelsTest" })
    expect(await tenderJsonError("accounts", "channels", "add", live, "--provider", "stripe", "--mode", "test", "--credentials-file", stripeTest))
      .toMatchObject({ code: "validation_failed", errors: [{ field: "mode" }] })
    const refused = await tenderJsonError(
      "accounts", "channels", "add", test, "--provider", "stripe", "--mode", "test", "--credentials-file", stripeTest,
      "--methods", "card,crypto", "--priority", "5000"
    )
    expect(refused).toMatchObject({ code: "validation_failed" })
    expect(refused.errors.map((e: { field: string }) => e.field)).toEqual(["methods", "priority"])
    expect(await tenderJsonError("accounts", "channels", "add", "acct_unknown0000000000", "--provider", "stripe", "--mode", "test", "--credentials-file", stripeTest))
      .toMatchObject({ code: "account_not_found" })
    // A test account takes a test channel.
    expect(await tenderJson("accounts", "channels", "add", test, "--provider", "stripe", "--mode", "test", "--credentials-file", stripeTest))
      .toMatchObject({ channel_id: expect.stringMatching(/^ch_/) })
  })

  it("disable takes a channel out of routing and keeps it listed; again is a conflict; an unknown channel is named", async () => {
    const disabled = await tenderJson("accounts", "channels", "disable", live, stripe)
    expect(disabled).toMatchObject({ id: stripe, status: "disabled" })
    expectNoSecret(JSON.stringify(disabled))
    const again = await tender("accounts", "channels", "disable", live, stripe)
    expect(again.code).not.toBe(0)
    expect(again.stderr.trim()).toBe(`error: Channel ${stripe} is already disabled`)
    // Another account cannot reach it.
    expect(await tenderJsonError("accounts", "channels", "disable", test, adyen))
      .toMatchObject({ code: "validation_failed", errors: [{ field: "channel" }] })
    expect((await tenderJson("accounts", "channels", "list", live)).data.map((c: { id: string; status: string }) => [c.id, c.status]))
      .toEqual([[stripe, "disabled"], [adyen, "enabled"]])
  })

  it("pin routes a processing profile over chosen channels only; no channel unpins it; disabled or foreign channels are refused", async () => {
    expect((await tender("accounts", "profiles", "add", live, "--code", "eu")).code).toBe(0)
    expect(await tenderJson("accounts", "channels", "pin", live, "--profile", "eu", adyen))
      .toEqual({ account_id: live, processing_profile: expect.objectContaining({ code: "eu", status: "active", channels: [adyen] }) })
    const text = await tender("accounts", "channels", "pin", live, "--profile", "eu", adyen)
    expect(text.stdout.trim()).toBe(`Processing profile eu of ${live} routes only over ${adyen}.`)
    // stripe was disabled above; the test account's channels are not this account's.
    const refused = await tenderJsonError("accounts", "channels", "pin", live, "--profile", "eu", stripe, "ch_unknown")
    expect(refused).toMatchObject({ code: "validation_failed" })
    expect(refused.errors.map((e: { message: string }) => e.message)).toEqual([`channel ${stripe} is disabled`, `no channel ch_unknown on account ${live}`])
    expect((await tenderJson("accounts", "channels", "pin", live, "--profile", "eu")).processing_profile).not.toHaveProperty("channels")
    expect(await tenderJsonError("accounts", "channels", "pin", live, "--profile", "nope"))
      .toMatchObject({ code: "validation_failed", errors: [{ field: "profile" }] })
  })
})
