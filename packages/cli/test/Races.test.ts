/**
 * Races across processes: two `tender serve` processes share one PostgreSQL (the embedded one; the
 * second joins the first's), and requests hit both at once. Correctness rests on the database (unique
 * references, row locks), so it holds with or without Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHome, type Merchant, merchantClient, type Served } from "./support/Tender.ts"

const home = makeHome("tender-races-")
const servers: Array<Served> = []
let merchant: Merchant
let token = ""

// Provider calls take 40 ms, as a real provider's would: captures stay in flight long enough that
// the other process reserves while they are, which is the case the remainder rule must get right.
const SERVER_ENV = { TENDER_RATE_LIMIT_PER_SECOND: "100000", TENDER_RATE_LIMIT_BURST: "100000", TENDER_SANDBOX_LATENCY_MS: "40" }

const { post, get } = merchantClient(() => merchant)

/** Request i goes to server i mod 2. */
const on = (i: number) => servers[i % servers.length]

const authorize = async (reference: string, amount = "100.00") => {
  const reply = await post(on(0), "/v1/payments", {
    amount,
    currency: "USD",
    country: "US",
    merchant_reference: reference,
    capture_method: "manual",
    payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
  })
  expect(reply.json.status).toBe("authorized")
  return reply.json.order_id as string
}

beforeAll(async () => {
  servers.push(await home.serve(SERVER_ENV))
  servers.push(await home.serve(SERVER_ENV))
  merchant = await home.runJson("accounts", "create", "--name", "racer")
  const tokenized = await post(on(0), "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
  token = tokenized.json.token
}, 240_000)

afterAll(async () => {
  // The joiner first, then the owner of the embedded PostgreSQL.
  for (const server of [...servers].reverse()) await server.stop()
  await home.cleanup()
}, 120_000)

describe("two server processes, one PostgreSQL", () => {
  it("50 concurrent creates with one reference → exactly one order, one attempt, one provider outcome", async () => {
    const reference = `race-${Date.now()}`
    const body = {
      amount: "12.00",
      currency: "USD",
      country: "US",
      merchant_reference: reference,
      payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } }
    }
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => post(on(i), "/v1/payments", body)))
    const statuses = replies.map((r) => r.status).sort()
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s === 409)).toHaveLength(49)
    expect(replies.filter((r) => r.status === 409).every((r) => r.json.code === "duplicate_merchant_reference_id")).toBe(true)
    const winner = replies.find((r) => r.status === 200)!.json
    const orders = await post(on(1), "/v1/orders/search", { merchant_reference: reference })
    expect(orders.json.data.map((o: { id: string }) => o.id)).toEqual([winner.order_id])
    // The provider is called only by the request whose insert claimed the reference, once per attempt.
    const attempts = await post(on(1), "/v1/transactions/search", { merchant_reference: reference })
    expect(attempts.json.data).toHaveLength(1)
    expect(attempts.json.data[0]).toMatchObject({ id: winner.transaction_id, status: "completed" })
  }, 120_000)

  it("20 concurrent partial captures never exceed the authorized amount", async () => {
    const orderId = await authorize(`captures-${Date.now()}`)
    // Uneven amounts (7.00 on one process, 6.00 on the other) so that a round of captures can
    // straddle the limit: a remainder that forgot captures in flight would let both through.
    const amountOf = (i: number) => (i % 2 === 0 ? 700 : 600)
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      post(on(i), "/v1/payments/capture", { order_id: orderId, amount: (amountOf(i) / 100).toFixed(2), final: false })))
    const accepted = replies.flatMap((r, i) => (r.status === 200 && r.json.status !== "failed" ? [amountOf(i)] : []))
    const refused = replies.filter((r) => r.status !== 200)
    expect(accepted.length + refused.length).toBe(20)
    for (const r of refused) expect(r.json.code).toBe("capture_amount_exceeds_remaining")
    const total = accepted.reduce((s, a) => s + a, 0)
    expect(total).toBeLessThanOrEqual(10_000)
    // and nothing was refused while enough remained for it
    expect(total).toBeGreaterThan(10_000 - 700)
    const order = await get(on(1), `/v1/orders/${orderId}`)
    expect(order.json.captured_amount).toBe(total / 100)
    const captures = (await post(on(0), "/v1/transactions/search", { merchant_reference: order.json.merchant_reference, limit: 100 }))
      .json.data.filter((t: { kind: string }) => t.kind === "capture")
    expect(captures).toHaveLength(accepted.length)
    expect(captures.every((t: { status: string }) => t.status === "completed")).toBe(true)
  }, 120_000)

  it("concurrent capture and void leave one consistent outcome", async () => {
    for (let round = 0; round < 6; round++) {
      const orderId = await authorize(`capture-void-${Date.now()}-${round}`)
      const [capture, voided] = await Promise.all([
        post(on(round), "/v1/payments/capture", { order_id: orderId }),
        post(on(round + 1), "/v1/payments/void", { order_id: orderId })
      ])
      const order = (await get(on(0), `/v1/orders/${orderId}`)).json
      if (capture.status === 200) {
        // the capture won: the void was refused, the whole amount settled
        expect(capture.json).toMatchObject({ status: "completed", captured_amount: 100 })
        expect(voided.status).toBe(409)
        expect(order).toMatchObject({ status: "succeeded", captured_amount: 100 })
      } else {
        expect(voided.json).toMatchObject({ status: "canceled", voided_amount: 100 })
        expect(capture.status).toBe(409)
        expect(order).toMatchObject({ status: "canceled", captured_amount: 0 })
      }
    }
  }, 120_000)
})
