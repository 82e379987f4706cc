/**
 * Hosted checkout sessions over real HTTP: every row of the session table, the reference-reuse
 * rule, cancel, attempts and their exhaustion, manual-capture sessions captured and voided through
 * the payments endpoints, and the events each transition emits.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Option } from "effect"
import { StateMachine, TransactionRepo } from "@tender/domain"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, type Reply, send } from "@tender/client/Testing"

let server: TestServer
let merchant: Credentials & { account_id: string }
let seq = 0

const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
const post = (path: string, body: unknown) => send(server, merchant, "POST", path, { body: JSON.stringify(body) })
const get = (path: string) => send(server, merchant, "GET", path)
const expectError = (reply: Reply, status: number, code: string) =>
  expect({ status: reply.status, code: reply.json?.code }).toEqual({ status, code })
const eventsOf = async (orderId: string) => (await Effect.runPromise(server.events(orderId))).map((e) => e.type)

const base = (extra: Record<string, unknown> = {}) => ({
  amount: "30.00",
  currency: "USD",
  merchant_reference: ref("cs"),
  success_url: "https://shop.example/thanks",
  cancel_url: "https://shop.example/cart",
  ...extra
})
const card = (number: string) => ({ payment_method: { code: "card", details: { card: { number, exp_month: 12, exp_year: 2035, cvc: number.startsWith("37") ? "1234" : "123" } } } })
const attempt = (id: string, body: unknown) => post(`/v1/test_helpers/checkout/sessions/${id}/attempt`, body)

beforeAll(async () => {
  server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } })
  merchant = await Effect.runPromise(server.accounts.create({ name: "Sessions shop", mode: "test" }))
})
afterAll(() => server.close())

describe("create", () => {
  it("201 with the session record: url, defaults (3 attempts, one hour), an order of subtype checkout", async () => {
    const before = Date.now()
    const created = await post("/v1/checkout/sessions", base({ line_items: [{ name: "Mug", quantity: 2, unit_amount: "15.00" }], locale: "es" }))
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({
      id: expect.stringMatching(/^cs_/),
      url: `${server.baseUrl}/checkout/${created.json.id}`,
      status: "open",
      amount: 30,
      currency: "USD",
      max_payment_attempts: 3,
      attempts: 0,
      transaction_id: null,
      next_action: null,
      locale: "es",
      line_items: [{ name: "Mug", quantity: 2, unit_amount: 15 }]
    })
    expect(created.json.capture_method).toBeUndefined()
    const hour = (Date.parse(created.json.expires_at) - before) / 60_000
    expect(hour).toBeGreaterThan(59.9)
    expect(hour).toBeLessThan(60.1)
    expect((await get(`/v1/orders/${created.json.order_id}`)).json).toMatchObject({ subtype: "checkout", status: "pending" })
    expect((await get(`/v1/checkout/sessions/${created.json.id}`)).json).toEqual(created.json)
  })

  it.each([
    [{ max_payment_attempts: 0 }, "max_payment_attempts"],
    [{ max_payment_attempts: 11 }, "max_payment_attempts"],
    [{ expires_at: new Date(Date.now() - 1000).toISOString() }, "expires_at"],
    [{ expires_at: new Date(Date.now() + 25 * 3_600_000).toISOString() }, "expires_at"],
    [{ success_url: "ftp://x" }, "success_url"],
    [{ straight_through: true, payment_methods: ["card"] }, "straight_through"],
    [{ capture_method: "manual", payment_methods: ["paypal"] }, "capture_method"],
    [{ success_url: "https://shop.example/ok\r\nSet-Cookie: x=1" }, "success_url"],
    [{ cancel_url: `https://shop.example/${"a".repeat(2048)}` }, "cancel_url"],
    [{ merchant_reference: "r".repeat(256) }, "merchant_reference"],
    [{ line_items: Array.from({ length: 101 }, () => ({ name: "Mug", quantity: 1, unit_amount: "1.00" })) }, "line_items"],
    [{ line_items: [{ name: "Mug", quantity: 2_000_000, unit_amount: "1.00" }] }, "line_items[0].quantity"],
    [{ line_items: [{ name: "M".repeat(256), quantity: 1, unit_amount: "1.00" }] }, "line_items[0].name"]
  ])("validation_failed: %j", async (extra, field) => {
    const reply = await post("/v1/checkout/sessions", base(extra))
    expectError(reply, 400, "validation_failed")
    expect(reply.json.errors.map((e: { field: string }) => e.field)).toContain(field)
  })

  describe("contract.md: \"when `line_items` are given, the sum of `quantity × unit_amount` must equal `amount` exactly; otherwise 400 `validation_failed` naming `line_items`\"", () => {
    it.each([
      ["a total short by one cent", "30.00", [{ name: "Mug", quantity: 2, unit_amount: "14.99" }], "totals 29.98, amount is 30.00"],
      ["a total above the amount", "30.00", [{ name: "Mug", quantity: 2, unit_amount: "15.00" }, { name: "Spoon", quantity: 1, unit_amount: "0.01" }], "totals 30.01"],
      ["no items at all", "30.00", [], "totals 0.00"],
      // 10^6 × 9,999,999,999.99 is past 2^53 minor units: summed exactly, never rounded into a match.
      ["a product past 2^53", "9999999999.99", [{ name: "Bulk", quantity: 1_000_000, unit_amount: "9999999999.99" }], "totals 9999999999990000.00"]
    ])("%s: 400 naming line_items, nothing stored", async (_name, amount, line_items, says) => {
      const body = base({ amount, line_items })
      const reply = await post("/v1/checkout/sessions", body)
      expectError(reply, 400, "validation_failed")
      expect(reply.json.errors).toEqual([{ field: "line_items", message: expect.stringContaining(says) }])
      expectError(await get(`/v1/checkout/sessions/by-reference/${body.merchant_reference}`), 404, "checkout_session_not_found")
    })

    it("items that add up, in a currency without decimals too: 201 with them", async () => {
      expect((await post("/v1/checkout/sessions", base({ amount: "16.50", line_items: [{ name: "Flat white", quantity: 2, unit_amount: "4.50" }, { name: "Croissant", quantity: 3, unit_amount: "2.50" }] }))).status).toBe(201)
      const yen = await post("/v1/checkout/sessions", base({ amount: "1000", currency: "JPY", country: "JP", line_items: [{ name: "Tea", quantity: 3, unit_amount: "333" }, { name: "Bag", quantity: 1, unit_amount: "1" }] }))
      expect(yen.status).toBe(201)
      expect(yen.json.line_items).toEqual([{ name: "Tea", quantity: 3, unit_amount: 333 }, { name: "Bag", quantity: 1, unit_amount: 1 }])
    })
  })

  it("merchant_reference_required, unknown_payment_method, country_not_available", async () => {
    const { merchant_reference: _, ...noRef } = base()
    expectError(await post("/v1/checkout/sessions", noRef), 400, "merchant_reference_required")
    expectError(await post("/v1/checkout/sessions", base({ payment_methods: ["sofort"] })), 400, "unknown_payment_method")
    expectError(await post("/v1/checkout/sessions", base({ payment_methods: ["pix"] })), 400, "country_not_available")
    expectError(await post("/v1/checkout/sessions", base({ country: "BR", payment_methods: ["ideal"], currency: "EUR" })), 400, "country_not_available")
  })
})

describe("additional_identifiers", () => {
  it("spec, Payment: \"Items of {identifier: string, type: checkout or order}\": a session's order names its session in reads and events", async () => {
    const s = (await post("/v1/checkout/sessions", base())).json
    const expected = [{ identifier: s.order_id, type: "order" }, { identifier: s.id, type: "checkout" }]
    expect((await get(`/v1/orders/${s.order_id}`)).json.additional_identifiers).toEqual(expected)
    const paid = await attempt(s.id, card("4242424242424242"))
    expect((await get(`/v1/transactions/${paid.json.transaction_id}`)).json.additional_identifiers).toEqual(expected)
    const payments = (await Effect.runPromise(server.events(s.order_id))).filter((e) => e.type.startsWith("payment."))
    expect(payments.map((e) => e.type)).toEqual(["payment.succeeded"])
    for (const event of payments) expect(event.data.additional_identifiers).toEqual(expected)
  })
})

describe("the session table", () => {
  it("open → (declined, attempts remain) open → completed: transaction_id is the settled one", async () => {
    const s = (await post("/v1/checkout/sessions", base())).json
    const declined = await attempt(s.id, card("4000000000000002"))
    expect(declined.json).toMatchObject({ status: "open", attempts: 1 })
    expect((await get(`/v1/orders/${s.order_id}`)).json.status).toBe("pending")
    const paid = await attempt(s.id, card("4242424242424242"))
    expect(paid.json).toMatchObject({ status: "completed", attempts: 2, transaction_id: expect.stringMatching(/^txn_/) })
    const txn = (await get(`/v1/transactions/${paid.json.transaction_id}`)).json
    expect(txn).toMatchObject({ status: "completed", subtype: "checkout", order_id: s.order_id })
    expect((await get(`/v1/orders/${s.order_id}`)).json).toMatchObject({ status: "succeeded", transactions: [expect.any(String), paid.json.transaction_id] })
    // spec, Events: payment.failed is "final, no retry on the same payment": a retried decline emits none
    expect(await eventsOf(s.order_id)).toEqual(["payment.succeeded", "checkout.session.completed"])
    // a final status never changes
    expectError(await attempt(s.id, card("4242424242424242")), 409, "invalid_session_state")
    expectError(await post(`/v1/checkout/sessions/${s.id}/cancel`, {}), 409, "invalid_session_state")
  })

  it("open → pending_action (redirect) → declined → open → pending_action → completed", async () => {
    const s = (await post("/v1/checkout/sessions", base({ payment_methods: ["paypal", "card"] }))).json
    const waiting = await attempt(s.id, { payment_method: { code: "paypal" } })
    expect(waiting.json).toMatchObject({ status: "pending_action", next_action: { type: "redirect" } })
    const order = (await get(`/v1/orders/${s.order_id}`)).json
    const first = order.transactions[0]
    await fetch(waiting.json.next_action.redirect_url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "outcome=fail", redirect: "manual" })
    expect((await get(`/v1/checkout/sessions/${s.id}`)).json).toMatchObject({ status: "open", next_action: null })
    expect((await get(`/v1/transactions/${first}`)).json.status).toBe("failed")
    const again = await attempt(s.id, { payment_method: { code: "paypal" } })
    expect(again.json.status).toBe("pending_action")
    const back = await fetch(again.json.next_action.redirect_url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "outcome=succeed", redirect: "manual" })
    // the provider page returns the customer to the hosted checkout page
    expect(back.headers.get("location")).toBe(s.url)
    expect((await get(`/v1/checkout/sessions/${s.id}`)).json).toMatchObject({ status: "completed", attempts: 2 })
    expect(await eventsOf(s.order_id)).toEqual([
      "payment.requires_action", "payment.requires_action", "payment.succeeded", "checkout.session.completed"
    ])
  })

  it("open or pending_action → failed when the last permitted attempt is declined", async () => {
    const s = (await post("/v1/checkout/sessions", base({ max_payment_attempts: 2 }))).json
    expect((await attempt(s.id, card("4000000000009995"))).json.status).toBe("open")
    expect((await attempt(s.id, card("4000000000000069"))).json).toMatchObject({ status: "failed", attempts: 2 })
    expect((await get(`/v1/orders/${s.order_id}`)).json.status).toBe("failed")
    // spec, Events: payment.failed is "final, no retry on the same payment": once, for the last attempt
    expect(await eventsOf(s.order_id)).toEqual(["payment.failed", "checkout.session.failed"])
    expectError(await attempt(s.id, card("4242424242424242")), 409, "invalid_session_state")
  })

  it("open and pending_action → canceled (API cancel); cancel of a final session is 409", async () => {
    const open = (await post("/v1/checkout/sessions", base())).json
    const canceled = await post(`/v1/checkout/sessions/${open.id}/cancel`, {})
    expect(canceled.json.status).toBe("canceled")
    expect(await eventsOf(open.order_id)).toEqual(["checkout.session.canceled"])
    expect((await get(`/v1/orders/${open.order_id}`)).json.status).toBe("canceled")
    expectError(await post(`/v1/checkout/sessions/${open.id}/cancel`, {}), 409, "invalid_session_state")
    const pending = (await post("/v1/checkout/sessions", base({ payment_methods: ["paypal"] }))).json
    await attempt(pending.id, { payment_method: { code: "paypal" } })
    expect((await post(`/v1/checkout/sessions/${pending.id}/cancel`, {})).json.status).toBe("canceled")
  })

  it("a method the session does not offer is refused", async () => {
    const s = (await post("/v1/checkout/sessions", base({ payment_methods: ["card"] }))).json
    expectError(await attempt(s.id, { payment_method: { code: "paypal" } }), 400, "validation_failed")
  })

  it("straight_through with a single redirect method starts at once: pending_action with the redirect", async () => {
    const s = await post("/v1/checkout/sessions", base({ payment_methods: ["paypal"], straight_through: true }))
    expect(s.status).toBe(201)
    expect(s.json).toMatchObject({ status: "pending_action", attempts: 1, next_action: { type: "redirect", redirect_url: expect.stringContaining("/sandbox/redirect/") } })
  })
})

describe("references (contract.md)", () => {
  it("refused while the newest session is open or completed; reusable after it ended; by-reference returns the newest", async () => {
    const reference = ref("reuse")
    const first = (await post("/v1/checkout/sessions", base({ merchant_reference: reference }))).json
    expectError(await post("/v1/checkout/sessions", base({ merchant_reference: reference })), 409, "duplicate_merchant_reference_id")
    await post(`/v1/checkout/sessions/${first.id}/cancel`, {})
    const second = (await post("/v1/checkout/sessions", base({ merchant_reference: reference }))).json
    expect(second.id).not.toBe(first.id)
    expect((await get(`/v1/checkout/sessions/by-reference/${reference}`)).json.id).toBe(second.id)
    await attempt(second.id, card("4242424242424242"))
    expectError(await post("/v1/checkout/sessions", base({ merchant_reference: reference })), 409, "duplicate_merchant_reference_id")
    const found = await post("/v1/checkout/sessions/search", { merchant_reference: reference })
    expect(found.json.data.map((s: { id: string }) => s.id)).toEqual([second.id, first.id])
    const completed = await post("/v1/checkout/sessions/search", { merchant_reference: reference, status: ["completed"] })
    expect(completed.json.data.map((s: { id: string }) => s.id)).toEqual([second.id])
  })
})

describe("manual capture sessions", () => {
  it("complete at authorization; capture and void then target the session's order, transaction or reference", async () => {
    const s = (await post("/v1/checkout/sessions", base({ capture_method: "manual", amount: "50.00" }))).json
    expect(s.capture_method).toBe("manual")
    const done = await attempt(s.id, card("4242424242424242"))
    expect(done.json).toMatchObject({ status: "completed", capture_method: "manual" })
    expect((await get(`/v1/orders/${s.order_id}`)).json.status).toBe("authorized")
    expect(await eventsOf(s.order_id)).toEqual(["payment.authorized", "checkout.session.completed"])
    const part = await post("/v1/payments/capture", { transaction_id: done.json.transaction_id, amount: "20.00", final: false })
    expect(part.json).toMatchObject({ status: "authorized", captured_amount: 20 })
    const rest = await post("/v1/payments/capture", { merchant_reference: s.merchant_reference })
    expect(rest.json).toMatchObject({ status: "completed", captured_amount: 50 })

    const v = (await post("/v1/checkout/sessions", base({ capture_method: "manual" }))).json
    await attempt(v.id, card("4242424242424242"))
    expect((await post("/v1/payments/void", { order_id: v.order_id })).json).toMatchObject({ status: "canceled", voided_amount: 30 })
  })

  it("checkout.session.completed carries capture_method, order_id and transaction_id", async () => {
    const s = (await post("/v1/checkout/sessions", base({ capture_method: "manual" }))).json
    const done = (await attempt(s.id, card("4242424242424242"))).json
    const events = await Effect.runPromise(server.events(s.order_id))
    const completed = events.find((e) => e.type === "checkout.session.completed")!
    expect(completed.data).toMatchObject({ capture_method: "manual", order_id: s.order_id, transaction_id: done.transaction_id, status: "completed" })
  })
})

it("payment.returned follows checkout.session.completed when a crypto mismatch is declined", async () => {
  const s = (await post("/v1/checkout/sessions", base({ currency: "EUR", payment_methods: ["crypto"] }))).json
  await attempt(s.id, { payment_method: { code: "crypto" } })
  await post(`/v1/test_helpers/orders/${s.order_id}/simulate`, { outcome: "underpay", amount: "10.00" })
  expect((await get(`/v1/checkout/sessions/${s.id}`)).json.status).toBe("completed")
  await post(`/v1/orders/${s.order_id}/amount_mismatch_decision`, { decision: "decline", refund_destination: { address: "bc1qrefund" } })
  expect(await eventsOf(s.order_id)).toEqual(["payment.requires_action", "payment.underpaid", "checkout.session.completed", "payment.returned"])
})

it("expiry is applied when the session is next touched (API)", async () => {
  const s = (await post("/v1/checkout/sessions", base({ expires_at: new Date(Date.now() + 1_500).toISOString() }))).json
  await new Promise((r) => setTimeout(r, 1_700))
  const read = await get(`/v1/checkout/sessions/${s.id}`)
  expect(read.json.status).toBe("expired")
  expect(await eventsOf(s.order_id)).toEqual(["checkout.session.expired"])
  expectError(await attempt(s.id, card("4242424242424242")), 409, "invalid_session_state")
})

/**
 * contract.md, Browser SDK: "in the browser flows (the SDK's `pay()` in every display mode, the hosted
 * checkout page) the customer's answer to a 3-D Secure challenge completes the payment with no call
 * from the merchant's server […] Reading a page (GET) never authorizes."
 */
describe("3-D Secure on the hosted checkout", () => {
  /** A session whose card attempt waits on the sandbox's challenge page. */
  const challenged = async () => {
    const s = (await post("/v1/checkout/sessions", base({ payment_methods: ["card"] }))).json
    const waiting = await attempt(s.id, card("4000000000003220"))
    expect(waiting.json).toMatchObject({ status: "pending_action", next_action: { type: "redirect", redirect_url: expect.stringContaining("/sandbox/3ds/") } })
    return { id: s.id as string, orderId: s.order_id as string, url: s.url as string, challenge: waiting.json.next_action.redirect_url as string }
  }
  const page = async (url: string) => expect((await fetch(url)).status).toBe(200)
  const stateOf = async (s: { id: string; orderId: string }) => ({
    session: (await get(`/v1/checkout/sessions/${s.id}`)).json.status,
    order: (await get(`/v1/orders/${s.orderId}`)).json.status,
    events: await eventsOf(s.orderId)
  })

  it("the answer's POST completes the attempt (approve: completed; deny: open again); GETs of the page before and after change nothing", async () => {
    for (const [answer, after, events] of [
      ["approve", { session: "completed", order: "succeeded" }, ["payment.requires_action", "payment.succeeded", "checkout.session.completed"]],
      ["deny", { session: "open", order: "pending" }, ["payment.requires_action"]]
    ] as const) {
      const s = await challenged()
      const before = await stateOf(s)
      expect(before).toEqual({ session: "pending_action", order: "requires_action", events: ["payment.requires_action"] })
      await page(s.url)
      await page(s.challenge)
      expect(await stateOf(s)).toEqual(before)
      // The answer alone, its redirect not followed: no page is read after it.
      const answered = await fetch(s.challenge, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `outcome=${answer}`, redirect: "manual" })
      expect(answered.status).toBe(303)
      expect(answered.headers.get("location")).toBe(s.url)
      const done = await stateOf(s)
      expect(done).toEqual({ ...after, events })
      await page(s.url)
      await page(s.challenge)
      expect(await stateOf(s)).toEqual(done)
      // The merchant's 3ds/complete only returns the snapshot.
      expect((await post(`/v1/payments/${s.orderId}/3ds/complete`, {})).status).toBe(200)
      expect(await stateOf(s)).toEqual(done)
    }
  })

  it("an answer recorded but not yet authorized (as before this change) is never authorized by the page's GET; 3ds/complete still finishes it", async () => {
    const s = await challenged()
    // The state the old answer left (recorded, authorization pending the next page read or 3ds/complete).
    const attemptId = await server.run(Effect.gen(function*() {
      const transactions = yield* TransactionRepo
      const txn = (yield* transactions.listByOrder(s.orderId))[0]!
      yield* transactions.update(StateMachine.revise(txn, { three_ds: "approved" }, new Date().toISOString()))
      return txn.id
    }))
    const stored = () => server.run(Effect.gen(function*() {
      return Option.getOrThrow(yield* (yield* TransactionRepo).findAny(attemptId))
    }))
    const before = await stateOf(s)
    await page(s.url)
    await page(`${s.url}/continue`)
    await page(s.url)
    expect(await stateOf(s)).toEqual(before)
    // No provider call: the attempt neither reserved nor recorded one.
    expect(await stored()).toMatchObject({ status: "processing", three_ds: "approved", pending_call: null })
    expect((await post(`/v1/payments/${s.orderId}/3ds/complete`, {})).json.status).toBe("completed")
    expect((await stateOf(s)).session).toBe("completed")
  })
})
