/**
 * The servers' channel and endpoint caches (ListCachesPg, issue 24) against other processes, over
 * one PostgreSQL: two `serve` processes and the operator's CLI. A channel the CLI adds or disables
 * routes (or stops routing) on both servers within a second; an endpoint registered or disabled
 * through one server gets (or stops getting) the events of payments made on the other within a
 * second. LISTEN/NOTIFY carries each change in milliseconds; docs/decisions.md, "Fewer statements per
 * payment: notified caches and the vault's one read".
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { freePort } from "@tender/http/testing/TestServer"
import { describe, expect, it } from "vitest"
import { makeHome, type Merchant, merchantClient, twoServers, untilAnswered } from "./support/Tender.ts"

const home = makeHome("tender-list-caches-")
// No workers: nothing here needs a delivery attempted, only fanned out.
const { database, on } = twoServers(home, {
  TENDER_RATE_LIMIT_PER_SECOND: "100000",
  TENDER_RATE_LIMIT_BURST: "100000",
  TENDER_WEBHOOK_ALLOW_PRIVATE: "true",
  TENDER_SERVE_BACKGROUND: "false"
})

/** How soon a change must be in force on every server. */
const PROMPTLY_MS = 1_000

let merchant: Merchant
const { post } = merchantClient(() => merchant)
let seq = 0
const reference = (label: string) => `${label}-${Date.now()}-${++seq}`

describe("channels and endpoints cached per account, changed from other processes", () => {
  it("a live channel the CLI adds routes on both servers within a second; disabled, it stops within a second", async () => {
    merchant = await home.runJson("accounts", "create", "--name", "Live shop", "--mode", "live")
    const account = (merchant as Merchant & { account_id: string }).account_id
    const session = (server: number) =>
      post(on(server), "/v1/checkout/sessions", {
        amount: "30.00",
        currency: "USD",
        merchant_reference: reference("cs"),
        success_url: "https://shop.example/thanks",
        cancel_url: "https://shop.example/cart"
      })
    // Both servers have read (and may keep) the account's empty list.
    for (let i = 0; i < 4; i++) expect((await session(i)).json.code).toBe("payment_unroutable")

    const credentials = join(home.dataDir, "stripe.json")
    writeFileSync(credentials, JSON.stringify({ secret_key: "sk_live_51CachesSecretKeyXYZ", webhook_secret: "whsec_CachesWebhookSecret" }))
    const { channel_id } = await home.runJson("accounts", "channels", "add", account, "--provider", "stripe", "--mode", "live", "--credentials-file", credentials)
    for (const server of [0, 1]) expect(await untilAnswered(() => session(server), (r) => r.status === 201)).toBeLessThan(PROMPTLY_MS)

    await home.runJson("accounts", "channels", "disable", account, channel_id)
    for (const server of [0, 1]) {
      expect(await untilAnswered(() => session(server), (r) => r.json.code === "payment_unroutable")).toBeLessThan(PROMPTLY_MS)
    }
  }, 120_000)

  it("an endpoint registered through one server gets the events of payments made on the other within a second; disabled, none", async () => {
    merchant = await home.runJson("accounts", "create", "--name", "Endpoints shop")
    const { token } = (await post(on(1), "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).json
    /** A charge on server 1; how many deliveries its events got for `endpoint`. */
    const chargeDeliveries = async (endpoint: string) => {
      const paid = await post(on(1), "/v1/payments", {
        amount: "5.00",
        currency: "USD",
        country: "US",
        merchant_reference: reference("pay"),
        payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } }
      })
      expect(paid.json.status).toBe("completed")
      const { rows } = await database().query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
         WHERE e.order_id = $1 AND d.endpoint_id = $2`,
        [paid.json.order_id, endpoint]
      )
      return rows[0]!.n
    }
    // Server 1 has read (and may keep) the account's endpoints: none.
    for (let i = 0; i < 2; i++) expect(await chargeDeliveries("we_none")).toBe(0)

    const created = await post(on(0), "/v1/webhook_endpoints", { url: `http://127.0.0.1:${await freePort()}/hooks`, enabled_events: ["*"] })
    expect(created.status).toBe(201)
    const endpoint: string = created.json.id
    expect(await untilAnswered(() => chargeDeliveries(endpoint), (n) => n > 0)).toBeLessThan(PROMPTLY_MS)

    expect((await post(on(0), `/v1/webhook_endpoints/${endpoint}`, { status: "disabled" })).json.status).toBe("disabled")
    expect(await untilAnswered(() => chargeDeliveries(endpoint), (n) => n === 0)).toBeLessThan(PROMPTLY_MS)
  }, 120_000)
})
