/**
 * A live-mode account has no path to the sandbox (contract.md, Providers and Sandbox): session
 * create, the test helpers, the /sandbox/* pages and the hosted checkout submit all refuse, and each
 * refusal leaves everything as it was.
 *
 * No request can create a live order or session any more, so the records these tests refuse to act
 * on are made in test mode and copied into the live account in storage: what a record written by an
 * older version, or by any path we missed, would look like.
 */
import { CheckoutSessionRepo, Ids, OrderRepo, TransactionRepo } from "@tender/domain"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, type Reply, send } from "@tender/client/Testing"

type Merchant = Credentials & { account_id: string }

let server: TestServer
let sandboxShop: Merchant
let liveShop: Merchant
let seq = 0

const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
const post = (as: Merchant, path: string, body: unknown) => send(server, as, "POST", path, { body: JSON.stringify(body) })
const get = (as: Merchant, path: string) => send(server, as, "GET", path)
const expectError = (reply: Reply, status: number, code: string) =>
  expect({ status: reply.status, code: reply.json?.code }).toEqual({ status, code })
const eventsOf = async (orderId: string) => (await Effect.runPromise(server.events(orderId))).map((e) => e.type)
const transactionsOf = (orderId: string) =>
  server.run(Effect.gen(function*() {
    return yield* (yield* TransactionRepo).listByOrder(orderId)
  }))
const form = (url: string, body: string) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body, redirect: "manual" })

const urls = { success_url: "https://shop.example/thanks", cancel_url: "https://shop.example/cart" }
const sessionBody = (merchant_reference: string) => ({ amount: "30.00", currency: "USD", merchant_reference, ...urls })

/**
 * Stores a live twin of a test-mode order (its attempts, and its session if any) in the live
 * account: every id fresh, so the twin's own sandbox and checkout URLs point at it. Returns `reply`
 * (the API's answer about the original) rewritten the same way.
 */
const liveTwin = (reply: any, orderId: string, sessionId?: string) =>
  server.run(Effect.gen(function*() {
    const ids = yield* Ids
    const orders = yield* OrderRepo
    const transactions = yield* TransactionRepo
    const sessions = yield* CheckoutSessionRepo
    const order = Option.getOrThrow(yield* orders.findAny(orderId))
    const attempts = yield* transactions.listByOrder(orderId)
    const session = sessionId === undefined ? undefined : Option.getOrThrow(yield* sessions.findAny(sessionId))
    const renames = new Map<string, string>([[sandboxShop.account_id, liveShop.account_id], [order.id, yield* ids.make("order")]])
    for (const t of attempts) renames.set(t.id, yield* ids.make("transaction"))
    if (session !== undefined) renames.set(session.id, yield* ids.make("checkoutSession"))
    const twin = <A>(value: A): A => {
      let text = JSON.stringify(value).replaceAll(`"livemode":false`, `"livemode":true`)
      for (const [from, to] of renames) text = text.replaceAll(from, to)
      return JSON.parse(text)
    }
    yield* orders.insert(twin(order))
    for (const t of attempts) yield* transactions.insert(twin(t))
    if (session !== undefined) yield* sessions.insert(twin(session))
    return twin(reply)
  }).pipe(Effect.orDie))

/** A payment waiting on the customer at a sandbox page, made live. */
const livePayment = async (payment_method: unknown, extra: Record<string, unknown> = {}) => {
  const created = await post(sandboxShop, "/v1/payments", { merchant_reference: ref("pay"), payment_method, ...urls, ...extra })
  expect(created.json.status).toBe("requires_action")
  return liveTwin(created.json, created.json.order_id)
}

/** An open checkout session (and its order), made live. */
const liveSession = async () => {
  const created = await post(sandboxShop, "/v1/checkout/sessions", sessionBody(ref("cs")))
  expect(created.status).toBe(201)
  return liveTwin(created.json, created.json.order_id, created.json.id)
}

beforeAll(async () => {
  server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } })
  sandboxShop = await Effect.runPromise(server.accounts.create({ name: "Sandbox shop", mode: "test" }))
  liveShop = await Effect.runPromise(server.accounts.create({ name: "Live shop", mode: "live" }))
})
afterAll(() => server.close())

describe("checkout session create", () => {
  it("a live account: 404 payment_unroutable, and neither a session nor an order is stored", async () => {
    const reference = ref("live-cs")
    expectError(await post(liveShop, "/v1/checkout/sessions", sessionBody(reference)), 404, "payment_unroutable")
    expectError(await get(liveShop, `/v1/checkout/sessions/by-reference/${reference}`), 404, "checkout_session_not_found")
    expect((await post(liveShop, "/v1/orders/search", { merchant_reference: reference })).json.data).toEqual([])
    // the same request from a test account is a valid session: the refusal is the mode's
    expect((await post(sandboxShop, "/v1/checkout/sessions", sessionBody(reference))).status).toBe(201)
  })
})

describe("test helpers", () => {
  it("card_tokens: 403 forbidden", async () => {
    const card = { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" }
    expectError(await post(liveShop, "/v1/test_helpers/card_tokens", card), 403, "forbidden")
  })

  it("simulate on a live order: 403 forbidden, the order still waits and no event is recorded", async () => {
    const payment = await livePayment({ code: "paypal" }, { amount: "10.00", currency: "USD", country: "US" })
    const events = await eventsOf(payment.order_id)
    const reply = await post(liveShop, `/v1/test_helpers/orders/${payment.order_id}/simulate`, { outcome: "succeed" })
    expectError(reply, 403, "forbidden")
    expect((await get(liveShop, `/v1/orders/${payment.order_id}`)).json.status).toBe("requires_action")
    expect(await eventsOf(payment.order_id)).toEqual(events)
  })

  it("attempt on a live session: 403 forbidden, the session stays open with no attempt", async () => {
    const session = await liveSession()
    const card = { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" }
    const reply = await post(liveShop, `/v1/test_helpers/checkout/sessions/${session.id}/attempt`, {
      payment_method: { code: "card", details: { card } }
    })
    expectError(reply, 403, "forbidden")
    expect((await get(liveShop, `/v1/checkout/sessions/${session.id}`)).json).toMatchObject({ status: "open", attempts: 0 })
    expect(await transactionsOf(session.order_id)).toEqual([])
  })
})

describe("sandbox pages", () => {
  const expectNotFound = async (response: Response) => {
    expect(response.status).toBe(404)
    expect(await response.text()).toContain("Payment not found")
  }

  it("redirect page of a live payment: not found, and a posted outcome changes nothing", async () => {
    const payment = await livePayment({ code: "paypal" }, { amount: "10.00", currency: "USD", country: "US" })
    const events = await eventsOf(payment.order_id)
    await expectNotFound(await fetch(payment.next_action.redirect_url))
    await expectNotFound(await form(payment.next_action.redirect_url, "outcome=succeed"))
    expect((await get(liveShop, `/v1/orders/${payment.order_id}`)).json.status).toBe("requires_action")
    expect(await eventsOf(payment.order_id)).toEqual(events)
  })

  it("voucher page and QR image of a live payment: not found, nothing paid", async () => {
    const pix = await livePayment(
      { code: "pix", details: { document_id: "12345678909" } },
      { amount: "80.00", currency: "BRL", country: "BR", customer: { ip: "200.1.2.3" } }
    )
    expect((await fetch(pix.next_action.qr.image_url)).status).toBe(404)
    const boleto = await livePayment(
      { code: "boleto", details: { document_id: "12345678909" } },
      { amount: "80.00", currency: "BRL", country: "BR", customer: { ip: "200.1.2.3" } }
    )
    await expectNotFound(await form(boleto.next_action.voucher.document_url, "outcome=succeed"))
    expect((await get(liveShop, `/v1/orders/${boleto.order_id}`)).json.status).toBe("requires_action")
  })

  it("3-D Secure page of a live payment: not found, the challenge stays unanswered", async () => {
    const token = (await post(sandboxShop, "/v1/test_helpers/card_tokens", { number: "4000000000003220", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
    const payment = await livePayment({ code: "card", details: { card_token: token } }, { amount: "40.00", currency: "USD", country: "US", collect_cvv: false })
    await expectNotFound(await fetch(payment.next_action.redirect_url))
    await expectNotFound(await form(payment.next_action.redirect_url, "outcome=approve"))
    expect((await transactionsOf(payment.order_id)).map((t) => t.three_ds)).toEqual(["required"])
  })
})

describe("hosted checkout page", () => {
  it.each([
    ["card", "method=card&card_number=4242+4242+4242+4242&card_expiry=12%2F35&card_cvc=123"],
    ["paypal", "method=paypal"]
  ])("submit on a live session (%s): refused before any provider call, the session stays open", async (_, body) => {
    const session = await liveSession()
    const events = await eventsOf(session.order_id)
    const reply = await form(session.url, body)
    expect(reply.status).toBe(404)
    expect(reply.headers.get("location")).toBeNull()
    expect((await get(liveShop, `/v1/checkout/sessions/${session.id}`)).json).toMatchObject({ status: "open", attempts: 0, transaction_id: null })
    // An attempt is stored before its provider call: none stored, none made.
    expect(await transactionsOf(session.order_id)).toEqual([])
    expect(await eventsOf(session.order_id)).toEqual(events)
  })
})

describe("refunds and payouts", () => {
  it("of a settled live payment: 404 payment_unroutable before any provider call, nothing stored", async () => {
    const token = (await post(sandboxShop, "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
    const settled = await post(sandboxShop, "/v1/payments", {
      amount: "40.00", currency: "USD", country: "US", merchant_reference: ref("paid"), collect_cvv: false,
      payment_method: { code: "card", details: { card_token: token } }
    })
    expect(settled.json.status).toBe("completed")
    const payment = await liveTwin(settled.json, settled.json.order_id)
    expectError(await post(liveShop, "/v1/refunds", { order_id: payment.order_id }), 404, "payment_unroutable")
    expectError(await post(liveShop, "/v1/payouts", { order_id: payment.order_id, amount: "1.00" }), 404, "payment_unroutable")
    expect((await transactionsOf(payment.order_id)).map((t) => t.kind)).toEqual(["payment"])
    expect(await eventsOf(payment.order_id)).toEqual([])
  })
})
