/**
 * End to end: Tender delivers a real event to the example receiver, whose helper verifies the
 * signature on the raw body and applies the status forward-only.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { Effect } from "effect"
import { type Credentials, send, startTestServer, type TestServer } from "@tender/http/testing/TestServer"
import { type Receiver, startReceiver } from "./webhook-receiver.ts"

let server: TestServer
let merchant: Credentials
let receiver: Receiver

beforeAll(async () => {
  server = await startTestServer()
  merchant = await Effect.runPromise(server.accounts.create({ name: "example merchant", mode: "test" }))
  receiver = await startReceiver({ signingSecret: merchant.signing_secret, port: 0, path: "/webhooks/tender", log: () => {} })
})
afterAll(async () => {
  await receiver.close()
  await server.close()
})

it("a payment's events reach the example receiver, verified, in order of status", async () => {
  const post = (path: string, body: unknown) => send(server, merchant, "POST", path, { body: JSON.stringify(body) })
  expect((await post("/v1/webhook_endpoints", { url: receiver.url })).status).toBe(201)
  const created = await post("/v1/payments", {
    amount: "19.99", currency: "EUR", country: "NL", merchant_reference: `example-${Date.now()}`,
    payment_method: { code: "ideal" }, success_url: "https://shop.example/ok", cancel_url: "https://shop.example/no"
  })
  await post(`/v1/test_helpers/orders/${created.json.order_id}/simulate`, { outcome: "succeed" })
  const deadline = Date.now() + 10_000
  while (receiver.accepted.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  expect(receiver.accepted.map((e) => e.type).sort()).toEqual(["payment.requires_action", "payment.succeeded"])
  expect(receiver.accepted.every((e) => e.data.order_id === created.json.order_id)).toBe(true)
  expect(receiver.statuses.get(created.json.order_id)).toBe("succeeded")
})
