/**
 * End to end: Tender delivers a real event to the example receiver, whose helper verifies the
 * signature on the raw body and applies the status forward-only.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { Effect } from "effect"
import { createTenderClient, type TenderPromiseClient } from "@tender/client"
import { startTestServer, type TestServer } from "@tender/http/testing/TestServer"
import { type Receiver, startReceiver } from "./webhook-receiver.ts"

let server: TestServer
let tender: TenderPromiseClient
let receiver: Receiver

beforeAll(async () => {
  server = await startTestServer()
  const merchant = await Effect.runPromise(server.accounts.create({ name: "example merchant", mode: "test" }))
  tender = createTenderClient({ baseUrl: server.baseUrl, secretKey: merchant.secret_key, signingSecret: merchant.signing_secret })
  receiver = await startReceiver({ signingSecret: merchant.signing_secret, port: 0, path: "/webhooks/tender", log: () => {} })
})
afterAll(async () => {
  await receiver.close()
  await server.close()
})

it("a payment's events reach the example receiver, verified, in order of status", async () => {
  await tender.webhookEndpoints.create({ url: receiver.url })
  const created = await tender.payments.create({
    amount: "19.99", currency: "EUR", country: "NL", merchant_reference: `example-${Date.now()}`,
    payment_method: { code: "ideal" }, success_url: "https://shop.example/ok", cancel_url: "https://shop.example/no"
  })
  await tender.testHelpers.simulate({ params: { order_id: created.order_id }, payload: { outcome: "succeed" } })
  const deadline = Date.now() + 10_000
  while (receiver.accepted.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  expect(receiver.accepted.map((e) => e.type).sort()).toEqual(["payment.requires_action", "payment.succeeded"])
  expect(receiver.accepted.every((e) => e.data.order_id === created.order_id)).toBe(true)
  expect(receiver.statuses.get(created.order_id)).toBe("succeeded")
})
