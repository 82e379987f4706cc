import { afterAll, beforeAll, expect, it } from "vitest"
import { Effect } from "effect"
import { createTenderClient } from "@tender/client"
import { startTestServer, type TestServer } from "@tender/http/testing/TestServer"
import { payWithTestCard } from "./typed-client.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

it("the typed-client example pays, reads the order, and recovers a retried create by reference", async () => {
  const account = await Effect.runPromise(server.accounts.create({ name: "example merchant", mode: "test" }))
  const tender = createTenderClient({ baseUrl: server.baseUrl, secretKey: account.secret_key, signingSecret: account.signing_secret })
  const reference = `example-${Date.now()}`
  const { payment, order, retried } = await payWithTestCard(tender, reference)
  expect(payment).toMatchObject({ status: "completed", merchant_reference: reference })
  expect(order.id).toBe(payment.order_id)
  expect(retried.id).toBe(payment.order_id)
})
