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
 *
 * And where a vaulted card is used (issue 21 review, L5): a card an earlier version vaulted against
 * the rule (written here through the vault's port, as tokenization wrote it then) is refused by
 * every payment, transfer and payout naming it, 400 naming the token's field, nothing sent.
 */
import { type AccountId, Card, CardVault, ClientSecretRepo, KeyHasher, OrderRepo, StateMachine } from "@tender/domain"
import { type Credentials, send } from "@tender/client/Testing"
import { Effect, Option } from "effect"
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

/**
 * A card an earlier version vaulted against today's rule (4111… in test mode, a table card in live
 * mode): stored through the vault's port, as tokenization stored it before the rule.
 */
const vaultedEarlier = (accountId: string, number: string) =>
  rig.server.run(Effect.gen(function*() {
    const card = yield* (yield* CardVault).store({
      account_id: accountId as AccountId,
      number,
      brand: Card.detectBrand(number),
      last4: Card.last4Of(number),
      bin: Card.binOf(number),
      exp_month: 12,
      exp_year: 2035,
      funding: Card.fundingOf(number),
      holder_name: "Ada Lovelace"
    })
    return card.token
  }))

/** The transactions Tender made for a reference: none means nothing was sent to a provider either. */
const transactionsOf = async (as: Merchant, reference: string) =>
  (await post(as, "/v1/transactions/search", { merchant_reference: reference })).json.data as ReadonlyArray<unknown>

describe("a card vaulted before the rule is refused where it is used (400 naming the token, tokenization's message, nothing sent)", () => {
  it("test mode: a direct payment, a session attempt, the SDK's pay, a card transfer's create and execute; a payout to it is not eligible", async () => {
    const earlier = await vaultedEarlier(shop.account_id, "4111111111111111")
    const stored = { initiator: "merchant", reason: "unscheduled" }

    const direct = ref("earlier-card")
    const payment = await post(shop, "/v1/payments", {
      amount: "10.00", currency: "USD", country: "US", merchant_reference: direct,
      payment_method: { code: "card", details: { card_token: earlier, stored_credential: stored } }
    })
    expectRefused(payment, "payment_method.details.card_token", TEST_ONLY)
    expect(await transactionsOf(shop, direct)).toEqual([])

    const session = (await post(shop, "/v1/checkout/sessions", { amount: "12.00", currency: "USD", country: "US", merchant_reference: ref("cs-earlier"), ...URLS })).json
    const attempt = await post(shop, `/v1/test_helpers/checkout/sessions/${session.id}/attempt`, { payment_method: { code: "card", details: { card_token: earlier } } })
    expectRefused(attempt, "payment_method.details.card_token", TEST_ONLY)
    expect((await send(rig.server, shop, "GET", `/v1/checkout/sessions/${session.id}`)).json).toMatchObject({ status: "open" })
    expect(await transactionsOf(shop, session.merchant_reference)).toEqual([])

    // The SDK's pay: as if the card fields had vaulted it for this secret before the rule.
    const collecting = (await post(shop, "/v1/payments", { amount: "25.00", currency: "USD", country: "US", merchant_reference: ref("collect-earlier"), payment_method: { code: "card" }, ...URLS })).json
    const secret = collecting.next_action.client_secret as string
    await rig.server.run(Effect.gen(function*() {
      yield* (yield* ClientSecretRepo).recordToken(yield* (yield* KeyHasher).hash(secret), earlier)
    }))
    const paid = await browserPost(rig.server.baseUrl, shop.publishable_key, "/v1/client/pay", { client_secret: secret, token: earlier })
    expect(paid.status).toBe(400)
    expect(paid.json.error).toMatchObject({ code: "validation_failed" })
    expect(paid.json.error.message).toContain(TEST_ONLY)
    expect((await rig.transactionsOf(collecting.order_id)).map((t) => t.status)).toEqual(["initial"])

    const transferRef = ref("transfer-earlier")
    const transfer = await post(shop, "/v1/transfers", { amount: "5.00", currency: "USD", country: "US", merchant_reference: transferRef, payment_method: { code: "card", details: { card_token: earlier } } })
    expectRefused(transfer, "payment_method.details.card_token", TEST_ONLY)
    expect(await transactionsOf(shop, transferRef)).toEqual([])
    const destination = (await post(shop, "/v1/test_helpers/card_tokens", { number: "4242424242424242", ...expiry, cvc: "123" })).json.token
    const awaiting = (await post(shop, "/v1/transfers", { amount: "5.00", currency: "USD", country: "US", merchant_reference: ref("transfer"), payment_method: { code: "card", details: { card_token: destination } } })).json
    expectRefused(await post(shop, `/v1/transfers/${awaiting.order_id}/execute`, { card_token: earlier }), "card_token", TEST_ONLY)
    expect((await rig.transactionsOf(awaiting.order_id)).map((t) => t.status)).toEqual(["initial"])
    // A transfer whose create named such a card (before the rule): its execute is refused the same way.
    await rig.server.run(Effect.gen(function*() {
      const orders = yield* OrderRepo
      const order = Option.getOrThrow(yield* orders.findAny(awaiting.order_id))
      yield* Effect.orDie(orders.update(StateMachine.revise(order, { card_token: earlier }, new Date().toISOString())))
    }))
    expectRefused(await post(shop, `/v1/transfers/${awaiting.order_id}/execute`, {}), "card_token", TEST_ONLY)
    expect((await rig.transactionsOf(awaiting.order_id)).map((t) => t.status)).toEqual(["initial"])

    // A payment an earlier version took with such a card (its token swapped in under a settled order):
    // a payout to it names no token, so its original is not eligible.
    const settled = await post(shop, "/v1/payments", {
      amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("settled"),
      payment_method: { code: "card", details: { card_token: destination, stored_credential: stored } }
    })
    expect(settled.json.status).toBe("completed")
    await rig.server.run(Effect.gen(function*() {
      const orders = yield* OrderRepo
      const order = Option.getOrThrow(yield* orders.findAny(settled.json.order_id))
      yield* Effect.orDie(orders.update(StateMachine.revise(order, { card_token: earlier }, new Date().toISOString())))
    }))
    const payout = await post(shop, "/v1/payouts", { order_id: settled.json.order_id, amount: "1.00" })
    expect({ status: payout.status, code: payout.json.code }).toEqual({ status: 409, code: "original_transaction_not_eligible" })
    expect(payout.json.message).toContain(TEST_ONLY)
    expect((await rig.transactionsOf(settled.json.order_id)).map((t) => t.kind)).toEqual(["payment"])
  })

  it("live mode: a table card in a live account's vault is refused by a payment on its live channel", async () => {
    const live = await rig.merchant("live")
    await rig.addChannel(live, "stripe", "live")
    const earlier = await vaultedEarlier(live.account_id, "4242424242424242")
    const reference = ref("live-earlier")
    const reply = await post(live, "/v1/payments", {
      amount: "42.00", currency: "EUR", country: "NL", merchant_reference: reference,
      payment_method: { code: "card", details: { card_token: earlier, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
    })
    expectRefused(reply, "payment_method.details.card_token", LIVE_ONLY)
    expect(await transactionsOf(live, reference)).toEqual([])
  })
})
