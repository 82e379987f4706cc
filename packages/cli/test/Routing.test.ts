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
import { configFromEnv } from "@tender/adapters/Config"
import * as Fakes from "@tender/adapters/providers/fake/Fakes"
import { Accounts, Channels } from "@tender/domain"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ErrorDocument } from "../src/Output.ts"
import { documentOf } from "../src/Report.ts"
import * as Services from "../src/Services.ts"
import { makeHome, merchantClient, type Served } from "./support/Tender.ts"

const home = makeHome("tender-routing-cli-")
const tender = home.run
const tenderJson = home.runJson
const tenderJsonError = home.runJsonError
let served: Served
let fakes: Fakes.Fakes

let shop: { account_id: string; secret_key: string; signing_secret: string }
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

/**
 * The use cases as the CLI wires them (Services.layer over this home's database, the one `serve`
 * owns), in this process: what a `tender` command would do, without a process's start-up for it.
 */
const asTheCli = <A, E>(effect: Effect.Effect<A, E, Services.Services>) =>
  Effect.runPromise(effect.pipe(Effect.provide(Services.layer(configFromEnv({ dataDir: home.dataDir }, {})))))

beforeAll(async () => {
  fakes = await Fakes.start()
  served = await home.serve({ ...fakes.env, TENDER_RATE_LIMIT_PER_SECOND: "10000", TENDER_RATE_LIMIT_BURST: "10000", TENDER_PROVIDER_TIMEOUT_MS: "5000" })
  // The accounts and channels the tests route among, through the use cases (`accounts create`,
  // `channels add|disable` and `profiles add` as commands are Channels.test.ts's and Cli.test.ts's).
  await asTheCli(Effect.gen(function*() {
    const accounts = yield* Accounts
    const channels = yield* Channels
    const add = (account: string, provider: "stripe" | "adyen", mode: "test" | "live", priority: number, credentials: unknown) =>
      Effect.map(channels.add(account, { provider, mode, credentials, methods: null, currencies: null, countries: null, priority }), (c) => c.id)
    shop = yield* accounts.create({ name: "Routed shop", mode: "test" })
    fast = yield* add(shop.account_id, "stripe", "test", 10, fakes.stripe.credentials("test"))
    slow = yield* add(shop.account_id, "stripe", "test", 5, fakes.stripe.credentials("test"))
    spare = yield* add(shop.account_id, "adyen", "test", 0, fakes.adyen.credentials("test"))
    disabled = yield* add(shop.account_id, "stripe", "test", 0, fakes.stripe.credentials("test"))
    yield* channels.disable(shop.account_id, disabled)
    yield* accounts.addProfile(shop.account_id, "eu", null)
    const live = yield* accounts.create({ name: "Live shop", mode: "live" })
    liveChannel = yield* add(live.account_id, "stripe", "live", 0, { secret_key: "sk_live_51RoutingCli", webhook_secret: "whsec_RoutingCli" })
  }))
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

  it("on the built-in sandbox (a test account without channels): the dry run answers the sandbox, and its payments record no routing", async () => {
    const sandboxShop = await asTheCli(Effect.gen(function*() {
      return yield* (yield* Accounts).create({ name: "Sandbox shop", mode: "test" })
    }))
    expect(await tenderJson("accounts", "routing", "test", sandboxShop.account_id, "--payment", file("sandbox-pay.json", PAYMENT)))
      .toEqual({ rule: null, version: 0, candidates: [], channel: "sandbox", reason: "default" })
    const sandbox = merchantClient(() => sandboxShop)
    const token = (await sandbox.post(served, "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
    const paid = await sandbox.post(served, "/v1/payments", {
      ...PAYMENT,
      merchant_reference: "sandbox-routing",
      payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
    })
    expect(paid.json.status).toBe("completed")
    const txn = await sandbox.get(served, `/v1/transactions/${paid.json.transaction_id}`)
    expect(txn.json.provider).toBe("sandbox")
    expect(txn.json).not.toHaveProperty("routing")
    const shown = await tenderJson("payments", "get", paid.json.order_id)
    expect(JSON.stringify(shown.routing ?? [])).toBe("[]")
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
  })

  it("a file that cannot be applied is refused whole by the CLI: exit 1, nothing on stdout, stderr naming the rule (text and --json); nothing stored", async () => {
    const unknown = await tender("accounts", "routing", "set", shop.account_id, "--file",
      file("bad-unknown.json", { rules: [{ id: "r-unknown", when: {}, then: { channels: ["ch_nosuchchannel000000"] } }] }))
    expect(unknown).toMatchObject({ code: 1, stdout: "" })
    expect(unknown.stderr).toContain(`Rule "r-unknown"`)
    const split = await tender("accounts", "routing", "set", shop.account_id, "--file",
      file("bad-split.json", { rules: [{ id: "r-split", when: {}, then: { split: [{ channel: fast, percent: 60 }, { channel: slow, percent: 30 }] } }] }), "--json")
    expect(split).toMatchObject({ code: 1, stdout: "" })
    expect(JSON.parse(split.stderr)).toMatchObject({
      code: "validation_failed",
      message: expect.stringContaining(`Rule "r-split"`),
      errors: [{ field: "rules[r-split].then.split", message: expect.any(String) }]
    })
    // Still the version set above.
    expect((await tenderJson("accounts", "routing", "show", shop.account_id)).version).toBe(2)
  })

  /**
   * Every refusal of contract.md's list, through the use case `routing set` calls on the wiring the
   * CLI builds (Services.layer over this home's database), rendered as the CLI renders a failure
   * (Report.documentOf): each kind's parsing is proven in packages/domain/test/RoutingRules.test.ts,
   * what the CLI process adds (exit code, stderr) by the test above, with no process per file here.
   * Each file leads with a valid rule: the refusal is of the whole file.
   */
  it("each refusal of the contract's list names its rule, and nothing of the file is stored; an unknown account or profile is refused (Channels.setRouting as the CLI wires it)", async () => {
    const fine = { id: "fine", when: {}, then: { channels: [fast] } }
    const refusals: ReadonlyArray<readonly [string, ReadonlyArray<unknown>, string]> = [
      ["an unknown channel", [{ id: "r-unknown", when: {}, then: { channels: ["ch_nosuchchannel000000"] } }], "r-unknown"],
      ["a disabled channel", [{ id: "r-disabled", when: {}, then: { channels: [disabled] } }], "r-disabled"],
      ["a channel of the other mode", [{ id: "r-live", when: {}, then: { channels: [liveChannel] } }], "r-live"],
      ["splits not adding to 100", [{ id: "r-split", when: {}, then: { split: [{ channel: fast, percent: 60 }, { channel: slow, percent: 30 }] } }], "r-split"],
      ["a duplicate rule id", [{ id: "twice", when: {}, then: { channels: [fast] } }, { id: "twice", when: {}, then: { channels: [slow] } }], "twice"],
      ["an unknown condition", [{ id: "r-weekday", when: { weekday: ["monday"] }, then: { channels: [fast] } }], "r-weekday"]
    ]
    const { after, before, documents, unknownAccount, unknownProfile } = await asTheCli(
      Effect.gen(function*() {
        const channels = yield* Channels
        const before = (yield* channels.showRouting(shop.account_id, null))?.version
        const documents: Array<ErrorDocument> = []
        for (const [, bad] of refusals) {
          documents.push(documentOf(yield* Effect.flip(channels.setRouting(shop.account_id, null, { rules: [fine, ...bad] }))))
        }
        const unknownAccount = documentOf(yield* Effect.flip(channels.setRouting("acct_unknown0000000000", null, rules())))
        const unknownProfile = documentOf(yield* Effect.flip(channels.setRouting(shop.account_id, "nope", rules())))
        return { before, documents, unknownAccount, unknownProfile, after: (yield* channels.showRouting(shop.account_id, null))?.version }
      })
    )
    for (const [i, [what, , ruleId]] of refusals.entries()) {
      const document = documents[i]!
      expect(document, what).toMatchObject({ code: "validation_failed", message: expect.stringContaining(`Rule "${ruleId}"`) })
      expect(document.message, what).not.toContain(`Rule "fine"`)
    }
    expect(unknownAccount).toMatchObject({ code: "account_not_found" })
    expect(unknownProfile).toMatchObject({ code: "validation_failed", errors: [{ field: "profile" }] })
    expect(before).toBe(2)
    expect(after).toBe(before)
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
