/**
 * A suspended account collects nothing on the paths a customer drives (issue 12, item 5): the
 * sandbox's provider pages, its 3-D Secure page and the checkout session's attempt refuse with
 * `merchant_operation_not_allowed_status` (a page saying so), while reads keep working; once active
 * again, the same steps go through. The API's own writes and the SDK's routes refuse it already
 * (Gateway.test.ts, ClientRoutesSuite.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Sessions } from "@tender/domain"
import { type Credentials, send } from "@tender/client/Testing"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"

let server: TestServer
let merchant: Credentials & { readonly account_id: string }
let seq = 0

beforeAll(async () => {
  server = await startTestServer()
  merchant = await Effect.runPromise(server.accounts.create({ name: "suspension", mode: "test" }))
})

afterAll(async () => {
  await server?.close()
})

const urls = { success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" }
const post = (path: string, body: unknown) => send(server, merchant, "POST", path, { body: JSON.stringify(body) })

/** A customer's answer on one of the sandbox's pages (a form POST, as the page's buttons send it). */
const answerPage = (url: string, outcome: string) =>
  fetch(`${server.baseUrl}${new URL(url).pathname}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `outcome=${outcome}`,
    redirect: "manual"
  })

const orderStatus = async (orderId: string) => (await send(server, merchant, "GET", `/v1/orders/${orderId}`)).json.status as string

const suspended = async <A>(body: () => Promise<A>) => {
  await Effect.runPromise(server.accounts.suspend(merchant.account_id))
  try {
    return await body()
  } finally {
    await Effect.runPromise(server.accounts.activate(merchant.account_id))
  }
}

describe("a suspended account collects nothing a customer drives", () => {
  it("the sandbox's redirect page: paying is refused (409, a page saying so); active again, it pays", async () => {
    const created = await post("/v1/payments", {
      amount: "12.00", currency: "USD", country: "US", merchant_reference: `susp-${++seq}`, payment_method: { code: "paypal" }, ...urls
    })
    expect(created.status, created.text).toBe(200)
    const page = created.json.next_action.redirect_url as string
    await suspended(async () => {
      const refused = await answerPage(page, "succeed")
      expect(refused.status).toBe(409)
      expect(await refused.text()).toContain("Account is suspended: payments are not allowed")
      expect(await orderStatus(created.json.order_id)).toBe("requires_action")
    })
    const paid = await answerPage(page, "succeed")
    expect(paid.status).toBe(303)
    expect(await orderStatus(created.json.order_id)).toBe("succeeded")
  })

  it("the sandbox's 3-D Secure page: an answer is refused while suspended, and counts once active again", async () => {
    const token = await post("/v1/test_helpers/card_tokens", { number: "4000000000003220", exp_month: 12, exp_year: 2035, cvc: "123" })
    const created = await post("/v1/payments", {
      amount: "13.00", currency: "USD", country: "US", merchant_reference: `susp-${++seq}`,
      collect_cvv: false, payment_method: { code: "card", details: { card_token: token.json.token } }, ...urls
    })
    expect(created.status, created.text).toBe(200)
    expect(created.json.status).toBe("requires_action")
    const challenge = created.json.next_action.redirect_url as string
    await suspended(async () => {
      expect((await answerPage(challenge, "approve")).status).toBe(409)
      expect((await send(server, merchant, "GET", `/v1/orders/${created.json.order_id}`)).status).toBe(200)
    })
    expect((await answerPage(challenge, "approve")).status).toBe(303)
  })

  it("a checkout session's attempt (the hosted page's submit) is refused with merchant_operation_not_allowed_status", async () => {
    const session = await post("/v1/checkout/sessions", {
      amount: "14.00", currency: "USD", country: "US", merchant_reference: `susp-${++seq}`, payment_methods: ["paypal"], ...urls
    })
    expect(session.status, session.text).toBe(201)
    const submit = () => server.run(Effect.flip(Effect.gen(function*() {
      return yield* (yield* Sessions).submit(session.json.id, { payment_method: { code: "paypal" } })
    })))
    const refused = await suspended(submit)
    expect(refused).toMatchObject({ code: "merchant_operation_not_allowed_status" })
    expect((await send(server, merchant, "GET", `/v1/checkout/sessions/${session.json.id}`)).json.status).toBe("open")
  })
})
