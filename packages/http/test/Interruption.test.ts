/**
 * A client that disconnects mid-request must not leave a payment half done: once the order claimed
 * its reference (or a capture reserved its amount) the provider call and the recording of its
 * outcome run to completion.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { Effect } from "effect"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, send } from "@tender/client/Testing"

let server: TestServer
let merchant: Credentials

beforeAll(async () => {
  // Provider calls take 300 ms, so the client can hang up while one is in flight.
  server = await startTestServer({}, undefined, { storage: "memory", dataDir: ".tender-test", sandboxLatencyMs: 300 })
  merchant = await Effect.runPromise(server.accounts.create({ name: "impatient", mode: "test" }))
})
afterAll(() => server.close())

const abortedPost = async (path: string, body: unknown) => {
  const text = JSON.stringify(body)
  const controller = new AbortController()
  const request = send(server, merchant, "POST", path, { body: text, signal: controller.signal })
  setTimeout(() => controller.abort(), 100)
  await request.then(() => "answered", () => "aborted")
}

const settle = async (path: string, done: (json: any) => boolean) => {
  for (let i = 0; i < 40; i++) {
    const reply = await send(server, merchant, "GET", path)
    if (done(reply.json)) return reply.json
    await new Promise((r) => setTimeout(r, 100))
  }
  return (await send(server, merchant, "GET", path)).json
}

it("a create whose client hangs up still records the provider's outcome", async () => {
  const token = (await send(server, merchant, "POST", "/v1/test_helpers/card_tokens", { body: JSON.stringify({ number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" }) })).json.token
  const reference = `hangup-${Date.now()}`
  await abortedPost("/v1/payments", {
    amount: "10.00", currency: "USD", country: "US", merchant_reference: reference, capture_method: "manual",
    payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } }
  })
  const order = await settle(`/v1/orders/by-reference/${reference}`, (o) => o.status !== "pending" && o.status !== "processing")
  expect(order.status).toBe("authorized")

  await abortedPost("/v1/payments/capture", { order_id: order.id, amount: "4.00", final: false })
  const captured = await settle(`/v1/orders/${order.id}`, (o) => o.captured_amount === 4)
  expect(captured).toMatchObject({ status: "authorized", captured_amount: 4 })
  const txns = (await send(server, merchant, "POST", "/v1/transactions/search", { body: JSON.stringify({ merchant_reference: reference }) })).json.data
  expect(txns.filter((t: { status: string }) => t.status === "processing" || t.status === "initial")).toEqual([])
})
