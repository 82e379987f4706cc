/**
 * contract.md, Routing rules: `tender accounts routing set ID --file F [--profile C]` → {version},
 * `routing show ID [--profile C] [--json]`, `routing test ID --payment F [--profile C] --json` (a
 * dry run), and `channels list` showing each channel's breaker — as an operator runs them against
 * the database a running `serve` owns. The server's Stripe and Adyen channels point at the wire-level
 * fakes in this process (TENDER_STRIPE_API_URL, …); Stripe refusing connections makes its channel
 * unavailable: the breaker the server opens is seen by a fresh CLI process (ChannelHealth over
 * PostgreSQL).
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Fakes from "@tender/adapters/providers/fake/Fakes"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHome, merchantClient, type Served } from "./support/Tender.ts"

const home = makeHome("tender-routing-cli-")
const tender = home.run
const tenderJson = home.runJson
const tenderJsonError = home.runJsonError
let served: Served
let fakes: Fakes.Fakes

let shop: { account_id: string; secret_key: string; signing_secret: string }
let live = ""
let fast = ""
let slow = ""
let spare = ""
let disabled = ""
let liveChannel = ""
const client = merchantClient(() => shop)

/** Writes `content` (JSON unless a string) into the data dir and returns its path. */
const file = (name: string, content: unknown) => {
  const path = join(home.dataDir, name)
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content))
  return path
}

const addChannel = async (account: string, provider: "stripe" | "adyen", priority: number) =>
  (await tenderJson(
    "accounts", "channels", "add", account, "--provider", provider, "--mode", "test",
    "--credentials-file", file(`${provider}.json`, fakes[provider].credentials("test")), "--priority", String(priority)
  )).channel_id as string

beforeAll(async () => {
  fakes = await Fakes.start()
  served = await home.serve({ ...fakes.env, TENDER_RATE_LIMIT_PER_SECOND: "10000", TENDER_RATE_LIMIT_BURST: "10000", TENDER_PROVIDER_TIMEOUT_MS: "5000" })
  shop = await tenderJson("accounts", "create", "--name", "Routed shop")
  fast = await addChannel(shop.account_id, "stripe", 10)
  slow = await addChannel(shop.account_id, "stripe", 5)
  spare = await addChannel(shop.account_id, "adyen", 0)
  disabled = await addChannel(shop.account_id, "stripe", 0)
  expect((await tender("accounts", "channels", "disable", shop.account_id, disabled)).code).toBe(0)
  expect((await tender("accounts", "profiles", "add", shop.account_id, "--code", "eu")).code).toBe(0)
  live = (await tenderJson("accounts", "create", "--name", "Live shop", "--mode", "live")).account_id
  liveChannel = (await tenderJson(
    "accounts", "channels", "add", live, "--provider", "stripe", "--mode", "live",
    "--credentials-file", file("stripe-live.json", { secret_key: "sk_live_51RoutingCli", webhook_secret: "whsec_RoutingCli" })
  )).channel_id
}, 180_000)

afterAll(async () => {
  if (served !== undefined) await served.stop()
  await fakes?.close()
  await home.cleanup()
}, 120_000)

/** The rules file (a function: the channel ids are known once the channels are added). */
const rules = () => ({
  strategy: "ordered",
  rules: [
    { id: "usd-to-slow", when: { currency: ["USD"] }, then: { channels: [slow, fast] } },
    { id: "visa-debit", when: { card_brand: ["visa"], card_funding: ["debit"] }, then: { channels: [spare] } },
    { id: "half", when: { country: ["FR"] }, then: { split: [{ channel: fast, percent: 50 }, { channel: slow, percent: 50 }] } }
  ],
  default: { channels: [fast, spare] }
})

const PAYMENT = {
  amount: "10.00",
  currency: "EUR",
  country: "NL",
  merchant_reference: "dry-run",
  payment_method: { code: "card", details: { card_token: "tok_dryrun0000000000000000" } }
}

describe("tender accounts routing", () => {
  it("show before any set: version 0, no rules", async () => {
    expect(await tenderJson("accounts", "routing", "show", shop.account_id)).toEqual({ version: 0, rules: null })
    const text = await tender("accounts", "routing", "show", shop.account_id)
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toMatch(/No routing rules .*version 0/)
  })

  it("set prints exactly {version}; each set is the next version; show prints the file back with its version", async () => {
    const first = await tenderJson("accounts", "routing", "set", shop.account_id, "--file", file("rules.json", rules()))
    expect(first).toEqual({ version: 1 })
    const text = await tender("accounts", "routing", "set", shop.account_id, "--file", file("rules.json", rules()))
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout.trim()).toBe(`Set version 2 of the routing rules of account ${shop.account_id}.`)
    const shown = await tenderJson("accounts", "routing", "show", shop.account_id)
    expect(shown).toEqual({ version: 2, profile: null, rules: rules(), created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })
    const shownText = await tender("accounts", "routing", "show", shop.account_id)
    expect(shownText.stdout).toMatch(/version\s+2/)
    expect(shownText.stdout).toContain('"usd-to-slow"')
    // A profile's rules are its own: none yet, then their own versions.
    expect(await tenderJson("accounts", "routing", "show", shop.account_id, "--profile", "eu")).toEqual({ version: 0, rules: null })
    expect(await tenderJson("accounts", "routing", "set", shop.account_id, "--profile", "eu", "--file", file("eu.json", { rules: [], default: { channels: [spare] } })))
      .toEqual({ version: 1 })
    expect(await tenderJson("accounts", "routing", "show", shop.account_id, "--profile", "eu")).toMatchObject({ version: 1, profile: "eu" })
    expect((await tenderJson("accounts", "routing", "show", shop.account_id)).version).toBe(2)
  })

  it("test is a dry run of the decision: rule, version, candidates, channel, reason; card facts from the file; no provider called", async () => {
    const before = fakes.stripe.paymentIntents().length + fakes.adyen.payments().length
    expect(await tenderJson("accounts", "routing", "test", shop.account_id, "--payment", file("usd.json", { ...PAYMENT, currency: "USD", country: "US" })))
      .toEqual({ rule: "usd-to-slow", version: 2, candidates: [slow, fast], channel: slow, reason: "rule" })
    expect(await tenderJson("accounts", "routing", "test", shop.account_id, "--payment",
      file("debit.json", { ...PAYMENT, card: { bin: "400005", brand: "visa", funding: "debit", issuer_country: "US" } })))
      .toEqual({ rule: "visa-debit", version: 2, candidates: [spare], channel: spare, reason: "rule" })
    // Card conditions need card facts: without them the rule does not hold.
    expect(await tenderJson("accounts", "routing", "test", shop.account_id, "--payment", file("plain.json", PAYMENT)))
      .toEqual({ rule: null, version: 2, candidates: [fast, spare], channel: fast, reason: "default" })
    const split = await tenderJson("accounts", "routing", "test", shop.account_id, "--payment", file("fr.json", { ...PAYMENT, country: "FR" }))
    expect(split).toMatchObject({ rule: "half", version: 2, reason: "split" })
    expect([fast, slow]).toContain(split.channel)
    expect(await tenderJson("accounts", "routing", "test", shop.account_id, "--profile", "eu", "--payment", file("eu-pay.json", PAYMENT)))
      .toEqual({ rule: null, version: 1, candidates: [spare], channel: spare, reason: "default" })
    const text = await tender("accounts", "routing", "test", shop.account_id, "--payment", file("usd.json", { ...PAYMENT, currency: "USD", country: "US" }))
    expect(text.stdout).toMatch(new RegExp(`channel\\s+${slow}`))
    expect(text.stdout).toMatch(/reason\s+rule/)
    expect(fakes.stripe.paymentIntents().length + fakes.adyen.payments().length).toBe(before)
  })

  it("a payment file that is not a payment is refused naming the field; an unreadable or non-JSON file, naming the flag", async () => {
    expect(await tenderJsonError("accounts", "routing", "test", shop.account_id, "--payment", file("bad-pay.json", { ...PAYMENT, currency: "EURO" })))
      .toMatchObject({ code: "validation_failed", errors: [expect.objectContaining({ field: expect.stringContaining("currency") })] })
    expect(await tenderJsonError("accounts", "routing", "test", shop.account_id, "--payment", join(home.dataDir, "missing.json")))
      .toMatchObject({ code: "validation_failed", errors: [{ field: "payment" }] })
    const notJson = await tender("accounts", "routing", "set", shop.account_id, "--file", file("broken.json", "{\"rules\": [}"))
    expect(notJson.code).toBe(1)
    expect(notJson.stderr).toMatch(/file is not valid JSON/)
    expect(await tenderJsonError("accounts", "routing", "set", shop.account_id, "--file", join(home.dataDir, "nowhere.json")))
      .toMatchObject({ code: "validation_failed", errors: [{ field: "file" }] })
    expect(await tenderJsonError("accounts", "routing", "set", "acct_unknown0000000000", "--file", file("rules.json", rules())))
      .toMatchObject({ code: "account_not_found" })
    expect(await tenderJsonError("accounts", "routing", "set", shop.account_id, "--profile", "nope", "--file", file("rules.json", rules())))
      .toMatchObject({ code: "validation_failed" })
  })

  it.each([
    ["an unknown channel", { rules: [{ id: "r-unknown", when: {}, then: { channels: ["ch_nosuchchannel000000"] } }] }, "r-unknown"],
    ["a disabled channel", () => ({ rules: [{ id: "r-disabled", when: {}, then: { channels: [disabled] } }] }), "r-disabled"],
    ["a channel of the other mode", () => ({ rules: [{ id: "r-live", when: {}, then: { channels: [liveChannel] } }] }), "r-live"],
    ["splits not adding to 100", () => ({ rules: [{ id: "r-split", when: {}, then: { split: [{ channel: fast, percent: 60 }, { channel: slow, percent: 30 }] } }] }), "r-split"],
    ["a duplicate rule id", () => ({ rules: [{ id: "twice", when: {}, then: { channels: [fast] } }, { id: "twice", when: {}, then: { channels: [slow] } }] }), "twice"],
    ["an unknown condition", () => ({ rules: [{ id: "r-weekday", when: { weekday: ["monday"] }, then: { channels: [fast] } }] }), "r-weekday"]
  ] as const)("a file with %s is refused whole: exit 1, the message naming the rule, the version unchanged", async (_, rules, ruleId) => {
    const content = typeof rules === "function" ? rules() : rules
    const before = (await tenderJson("accounts", "routing", "show", shop.account_id)).version
    const refused = await tender("accounts", "routing", "set", shop.account_id, "--file", file("bad.json", content))
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe("")
    expect(refused.stderr).toContain(`Rule "${ruleId}"`)
    const json = await tenderJsonError("accounts", "routing", "set", shop.account_id, "--file", file("bad.json", content))
    expect(json).toMatchObject({ code: "validation_failed", message: expect.stringContaining(`Rule "${ruleId}"`) })
    expect((await tenderJson("accounts", "routing", "show", shop.account_id)).version).toBe(before)
  })
})

describe("tender accounts channels list: health", () => {
  it("every channel's breaker, closed to start; one the server saw unavailable five times in a row is open, seen by a fresh CLI process", async () => {
    const listed = await tenderJson("accounts", "channels", "list", shop.account_id)
    for (const channel of listed.data) expect(channel.health).toEqual({ breaker: "closed", failures: 0, open_until: null })

    // The default rule puts `fast` (Stripe) first; Stripe refuses connections, so each payment cascades to `spare` (Adyen).
    const token = (await client.post(served, "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
    await fakes.stripe.refuse()
    try {
      for (let i = 0; i < 5; i++) {
        const paid = await client.post(served, "/v1/payments", {
          amount: "10.00", currency: "EUR", country: "NL", merchant_reference: `breaker-${i}`, capture_method: "manual",
          payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
        })
        expect(paid.json, JSON.stringify(paid.json)).toMatchObject({ status: "authorized" })
      }
    } finally {
      await fakes.stripe.accept()
    }
    const health = (await tenderJson("accounts", "channels", "list", shop.account_id)).data
      .map((c: { id: string; health: unknown }) => [c.id, c.health])
    expect(health).toContainEqual([fast, { breaker: "open", failures: 5, open_until: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }])
    expect(health).toContainEqual([spare, { breaker: "closed", failures: 0, open_until: null }])
    const table = await tender("accounts", "channels", "list", shop.account_id)
    expect(table.stdout.split("\n")[0]).toMatch(/\sHEALTH$/)
    expect(table.stdout).toMatch(new RegExp(`${fast}\\s.*open until \\d{4}-`))

    // The dry run skips it too, and says why.
    expect(await tenderJson("accounts", "routing", "test", shop.account_id, "--payment", file("plain.json", PAYMENT)))
      .toEqual({ rule: null, version: 2, candidates: [fast, spare], channel: spare, reason: "breaker" })

    // `tender payments get` shows where each try of a payment went and why.
    const skipped = await client.post(served, "/v1/payments", {
      amount: "10.00", currency: "EUR", country: "NL", merchant_reference: "breaker-skipped", capture_method: "manual",
      payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
    })
    const got = await tenderJson("payments", "get", skipped.json.order_id)
    expect(got.routing).toEqual([{
      transaction_id: skipped.json.transaction_id, rule: null, version: 2, candidates: [fast, spare], channel: spare, reason: "breaker", attempt: 1
    }])
    const text = await tender("payments", "get", skipped.json.order_id)
    expect(text.stdout).toMatch(new RegExp(`routing\\s+${skipped.json.transaction_id}: ${spare} \\(breaker; no rule v2; try 1`))
  })
})
