/**
 * Issue 21, item 7: test mode takes test cards only, live mode none of them. Every place a card
 * number enters through the public API, over PostgreSQL (so the vault's rows can be counted):
 * the test helper, a raw card in a session attempt (the hosted form's, through the attempt
 * helper), and the SDK's card fields for a payment and for a card transfer; in live mode the card
 * fields of a payment on a live Stripe channel (the Stripe fake).
 *
 * contract.md, Sandbox: "New this round: test mode takes these test cards only. Any other card
 * number is refused before it is stored: `POST /v1/test_helpers/card_tokens` and a raw card in a
 * payment → 400 `validation_failed` naming the number ("test mode takes test cards only"); the
 * SDK's card fields → `validation_error` `invalid_number` with the same message. In live mode a
 * number from this table is refused the same way ("live mode does not take test cards")."
 */
import { Card } from "@tender/domain"
import { type Credentials, send } from "@tender/client/Testing"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { browserPost, type Merchant, type Rig, startRigOnFreshPostgres } from "./support/ProviderKit.ts"

const TEST_ONLY = "test mode takes test cards only"
const LIVE_ONLY = "live mode does not take test cards"

/** Luhn-valid numbers of four brands, none of them in the table. */
const OTHER_CARDS = ["4111111111111111", "5105105105105100", "6011111111111117", "4000000760000002"]

const URLS = { success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" }
const expiry = { exp_month: 12, exp_year: 2035 }
const cvcOf = (number: string) => (number.startsWith("37") ? "1234" : "123")

let rig: Rig
let shop: Merchant
let seq = 0
const ref = (label: string) => `${label}-${Date.now()}-${++seq}`

beforeAll(async () => {
  // The Stripe fake takes live keys here, for the live account's channel; the test account has none (the sandbox).
  rig = await startRigOnFreshPostgres({ stripeKey: "sk_live_cards" })
  shop = await rig.merchant("test")
}, 120_000)
afterAll(() => rig?.close())

const post = (as: Credentials, path: string, body: unknown) => rig.post(as, path, body)

/** The account's rows in the vault (nothing refused may be stored). */
const vaulted = (accountId: string) =>
  rig.server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM card_vault WHERE account_id = ${accountId}`
    return row!.n
  }) as Effect.Effect<number, unknown, never>)

const expectRefused = (reply: { status: number; json: any }, field: string, message: string) => {
  expect(reply.status).toBe(400)
  expect(reply.json.code).toBe("validation_failed")
  expect(reply.json.message).toContain(message)
  expect(reply.json.errors).toEqual([{ field, message }])
}

const expectFieldsRefused = (reply: { status: number; json: any }, message: string) => {
  expect(reply.status).toBe(400)
  expect(reply.json.error).toMatchObject({ type: "validation_error", code: "invalid_number" })
  expect(reply.json.error.message).toContain(message)
}

describe("test mode takes test cards only", () => {
  it("POST /v1/test_helpers/card_tokens: each of the table's cards is taken; any other number is 400 naming number, and not stored", async () => {
    const before = await vaulted(shop.account_id)
    for (const number of Card.TEST_CARDS) {
      expect((await post(shop, "/v1/test_helpers/card_tokens", { number, ...expiry, cvc: cvcOf(number) })).status).toBe(201)
    }
    for (const number of OTHER_CARDS) {
      expectRefused(await post(shop, "/v1/test_helpers/card_tokens", { number, ...expiry, cvc: "123" }), "number", TEST_ONLY)
    }
    expect(await vaulted(shop.account_id)).toBe(before + Card.TEST_CARDS.length)
  })

  it("a raw card in a session attempt (the hosted form's): 400 naming payment_method.details.card.number; the session has no attempt", async () => {
    const session = (await post(shop, "/v1/checkout/sessions", { amount: "12.00", currency: "USD", country: "US", merchant_reference: ref("cs"), ...URLS })).json
    const before = await vaulted(shop.account_id)
    const reply = await post(shop, `/v1/test_helpers/checkout/sessions/${session.id}/attempt`, {
      payment_method: { code: "card", details: { card: { number: "4111111111111111", ...expiry, cvc: "123" } } }
    })
    expectRefused(reply, "payment_method.details.card.number", TEST_ONLY)
    expect(await vaulted(shop.account_id)).toBe(before)
    expect((await send(rig.server, shop, "GET", `/v1/checkout/sessions/${session.id}`)).json).toMatchObject({ status: "open" })
    // The table's card goes through the same way.
    const paid = await post(shop, `/v1/test_helpers/checkout/sessions/${session.id}/attempt`, {
      payment_method: { code: "card", details: { card: { number: "4242424242424242", ...expiry, cvc: "123" } } }
    })
    expect(paid.status).toBe(200)
  })

  it("the SDK's card fields, for a payment and for a card transfer: validation_error invalid_number with the same message; nothing stored", async () => {
    const payment = (await post(shop, "/v1/payments", { amount: "25.00", currency: "USD", country: "US", merchant_reference: ref("collect"), payment_method: { code: "card" }, ...URLS })).json
    const destination = (await post(shop, "/v1/test_helpers/card_tokens", { number: "4242424242424242", ...expiry, cvc: "123" })).json.token
    const transfer = (await post(shop, "/v1/transfers", { amount: "5.00", currency: "USD", country: "US", merchant_reference: ref("transfer"), payment_method: { code: "card", details: { card_token: destination } } })).json
    const before = await vaulted(shop.account_id)
    for (const secret of [payment.next_action.client_secret, transfer.next_action.client_secret]) {
      for (const number of OTHER_CARDS) {
        expectFieldsRefused(await browserPost(rig.server.baseUrl, shop.publishable_key, "/v1/client/card_tokens", { client_secret: secret, number, ...expiry, cvc: "123" }), TEST_ONLY)
      }
    }
    expect(await vaulted(shop.account_id)).toBe(before)
    // The same secret takes a test card, and the payment goes on.
    const token = await browserPost(rig.server.baseUrl, shop.publishable_key, "/v1/client/card_tokens", { client_secret: payment.next_action.client_secret, number: "4242424242424242", ...expiry, cvc: "123" })
    expect(token.status).toBe(201)
  })
})

describe("live mode does not take test cards", () => {
  let live: Merchant

  beforeAll(async () => {
    live = await rig.merchant("live")
    await rig.addChannel(live, "stripe", "live")
  })

  it("the card fields of a live payment: each table card is validation_error invalid_number, nothing stored; a card of the provider's is taken", async () => {
    /** A live customer-present card payment's collect_card secret (a secret makes at most 5 card calls). */
    const collecting = async () => {
      const payment = (await post(live, "/v1/payments", { amount: "42.00", currency: "EUR", country: "NL", merchant_reference: ref("live"), payment_method: { code: "card" }, ...URLS })).json
      expect(payment.next_action.type).toBe("collect_card")
      return payment.next_action.client_secret as string
    }
    const before = await vaulted(live.account_id)
    for (const number of Card.TEST_CARDS) {
      expectFieldsRefused(await browserPost(rig.server.baseUrl, live.publishable_key, "/v1/client/card_tokens", { client_secret: await collecting(), number, ...expiry, cvc: cvcOf(number) }), LIVE_ONLY)
    }
    expect(await vaulted(live.account_id)).toBe(before)
    const secret = await collecting()
    const token = await browserPost(rig.server.baseUrl, live.publishable_key, "/v1/client/card_tokens", { client_secret: secret, number: "4111111111111111", ...expiry, cvc: "123" })
    expect(token.status).toBe(201)
    const paid = await browserPost(rig.server.baseUrl, live.publishable_key, "/v1/client/pay", { client_secret: secret, token: token.json.token })
    expect(paid.json).toMatchObject({ status: "succeeded" })
    expect(await vaulted(live.account_id)).toBe(before + 1)
  })
})
