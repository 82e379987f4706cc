/**
 * A CVC is used for one authorization attempt and is gone after it, on every path that sends a
 * card to the provider (issue 12, "Card data"): direct payments (approved, declined, provider
 * unreachable), merchant-initiated charges (which never send it), collect_cvv payments (the token's
 * code is dropped; the customer's fresh one is used by `pay`), the SDK's collect_card, hosted
 * session attempts and 3-D Secure. Each check asks the CVC port itself whether the token still has
 * a code; a control shows a code that nothing used is still there.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CvcStore, OrderRepo } from "@tender/domain"
import { Effect, Option } from "effect"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, send } from "@tender/client/Testing"
import { sdkCall } from "./support/Browser.ts"

let server: TestServer
let merchant: Credentials & { readonly account_id: string; readonly publishable_key: string }
let seq = 0

const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
const post = (path: string, body: unknown) => send(server, merchant, "POST", path, { body: JSON.stringify(body) })
const urls = { success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" }

/** Takes the token's CVC if the store still holds one (a take: the caller learns, the code goes). */
const leftCvc = (token: string) => server.run(Effect.gen(function*() {
  return Option.getOrUndefined(yield* (yield* CvcStore).take(token))
}))
const tokenOf = (orderId: string) => server.run(Effect.gen(function*() {
  return Option.getOrThrow(yield* (yield* OrderRepo).find(merchant.account_id, orderId)).card_token!
}))

const tokenize = async (number: string, cvc = "123") => {
  const reply = await post("/v1/test_helpers/card_tokens", { number, exp_month: 12, exp_year: 2035, cvc })
  expect(reply.status, reply.text).toBe(201)
  return reply.json.token as string
}
const pay = (token: string, extra: Record<string, unknown> = {}) =>
  post("/v1/payments", { amount: "25.00", currency: "USD", country: "US", merchant_reference: ref("cvc"), payment_method: { code: "card", details: { card_token: token } }, ...urls, ...extra })

const client = (path: string, body: unknown) => sdkCall(server, merchant.publishable_key, path, body)

beforeAll(async () => {
  server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } })
  merchant = await Effect.runPromise(server.accounts.create({ name: "cvc", mode: "test" })) as typeof merchant
})
afterAll(() => server.close())

describe("a CVC is gone after the authorization it was given for", () => {
  it("control: a token's CVC that no payment used is still held", async () => {
    const token = await tokenize("4242424242424242", "321")
    expect(await leftCvc(token)).toBe("321")
  })

  it.each([
    ["approved", "4242424242424242", 200],
    ["declined", "4000000000000002", 200],
    ["provider unreachable", "4000000000000119", 502],
    ["3-D Secure challenge", "4000000000003220", 200]
  ])("direct payment with collect_cvv false (%s)", async (_label, number, status) => {
    const token = await tokenize(number)
    const reply = await pay(token, { collect_cvv: false })
    expect(reply.status, reply.text).toBe(status)
    expect(await leftCvc(token)).toBeUndefined()
  })

  it("merchant-initiated charge: the code is dropped, never sent", async () => {
    const token = await tokenize("4242424242424242")
    const reply = await pay(token, { payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } } })
    expect(reply.status, reply.text).toBe(200)
    expect(await leftCvc(token)).toBeUndefined()
  })

  it("collect_cvv: the token's code is dropped at create; the customer's fresh one is used once by pay", async () => {
    const token = await tokenize("5555555555554444")
    const created = await pay(token)
    expect(created.json.next_action?.type, created.text).toBe("collect_cvv")
    expect(await leftCvc(token)).toBeUndefined()
    const secret = created.json.next_action.client_secret as string
    expect((await client("/v1/client/card_tokens", { client_secret: secret, cvc: "987" })).status).toBe(201)
    const paid = await client("/v1/client/pay", { client_secret: secret, token })
    expect(paid.status, paid.text).toBe(200)
    expect(await leftCvc(token)).toBeUndefined()
  })

  it.each([["approved", "4242424242424242"], ["declined", "4000000000000002"]])("SDK collect_card: card_tokens then pay (%s)", async (_label, number) => {
    const created = await post("/v1/payments", { amount: "25.00", currency: "USD", country: "US", merchant_reference: ref("sdk"), payment_method: { code: "card" }, ...urls })
    const secret = created.json.next_action.client_secret as string
    const token = await client("/v1/client/card_tokens", { client_secret: secret, number, exp_month: 12, exp_year: 2035, cvc: "123" })
    expect(token.status, token.text).toBe(201)
    await client("/v1/client/pay", { client_secret: secret, token: token.json.token })
    expect(await leftCvc(token.json.token)).toBeUndefined()
  })

  it.each([["approved", "4242424242424242"], ["declined", "4000000000000002"], ["3-D Secure challenge", "4000000000003220"]])(
    "hosted session attempt with a card (%s)",
    async (_label, number) => {
      const session = await post("/v1/checkout/sessions", { amount: "30.00", currency: "USD", merchant_reference: ref("cs"), ...urls })
      expect(session.status, session.text).toBe(201)
      const attempted = await post(`/v1/test_helpers/checkout/sessions/${session.json.id}/attempt`, {
        payment_method: { code: "card", details: { card: { number, exp_month: 12, exp_year: 2035, cvc: "123" } } }
      })
      expect(attempted.status, attempted.text).toBe(200)
      expect(await leftCvc(await tokenOf(session.json.order_id))).toBeUndefined()
    }
  )
})
