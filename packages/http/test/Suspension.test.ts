/**
 * A suspended account collects nothing on the paths a customer drives (issue 12, item 5): the
 * sandbox's provider pages, its 3-D Secure page and the checkout session's attempt refuse with
 * `merchant_operation_not_allowed_status` (a page saying so), and so do the hosted page's form and
 * a channel provider's 3-D Secure return, while reads keep working; once active again, the same
 * steps go through. The API's own writes and the SDK's routes refuse it already (Gateway.test.ts,
 * ClientRoutesSuite.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Sessions } from "@tender/domain"
import { type Credentials, send } from "@tender/client/Testing"
import { type ProviderFakes, startWithProviderFakes } from "../src/testing/ProviderFakes.ts"
import type { TestServer } from "../src/testing/TestServer.ts"

let fakes: ProviderFakes
let server: TestServer
let merchant: Credentials & { readonly account_id: string }
let seq = 0

beforeAll(async () => {
  fakes = await startWithProviderFakes({ storage: "memory", dataDir: ".tender-test" })
  server = fakes.server
  merchant = await Effect.runPromise(server.accounts.create({ name: "suspension", mode: "test" }))
})

afterAll(async () => {
  await fakes?.close()
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

const suspended = async <A>(body: () => Promise<A>, accountId = merchant.account_id) => {
  await Effect.runPromise(server.accounts.suspend(accountId))
  try {
    return await body()
  } finally {
    await Effect.runPromise(server.accounts.activate(accountId))
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

  it("the hosted page's form: the attempt is refused with a message saying so (409), the session stays open; active again, it goes through", async () => {
    const session = await post("/v1/checkout/sessions", {
      amount: "15.00", currency: "USD", country: "US", merchant_reference: `susp-${++seq}`, payment_methods: ["paypal"], ...urls
    })
    expect(session.status, session.text).toBe(201)
    const submit = () =>
      fetch(`${server.baseUrl}/checkout/${session.json.id}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "accept-language": "en" },
        body: "method=paypal",
        redirect: "manual"
      })
    await suspended(async () => {
      const refused = await submit()
      expect(refused.status).toBe(409)
      expect(await refused.text()).toContain("This merchant cannot accept payments right now.")
      expect((await fetch(`${server.baseUrl}/checkout/${session.json.id}`)).status).toBe(200)
      expect((await send(server, merchant, "GET", `/v1/checkout/sessions/${session.json.id}`)).json.status).toBe("open")
    })
    const taken = await submit()
    expect(taken.status).toBe(303)
    expect((await send(server, merchant, "GET", `/v1/checkout/sessions/${session.json.id}`)).json.status).toBe("pending_action")
  })

  it("a channel provider's 3-D Secure return authorizes nothing while suspended (a page saying so); the same link completes it once active", async () => {
    const onStripe: Credentials & { readonly account_id: string } = await Effect.runPromise(server.accounts.create({ name: "suspension-stripe", mode: "test" }))
    const channel = await Effect.runPromise(server.channels.add(onStripe.account_id, {
      provider: "stripe", mode: "test", methods: null, currencies: null, countries: null, priority: null,
      credentials: { secret_key: "sk_test_suspension", webhook_secret: "whsec_suspension" }
    }))
    const call = (path: string, body: unknown) => send(server, onStripe, "POST", path, { body: JSON.stringify(body) })
    const token = await call("/v1/test_helpers/card_tokens", { number: "4000000000003220", exp_month: 12, exp_year: 2035, cvc: "737" })
    const created = await call("/v1/payments", {
      amount: "16.00", currency: "USD", country: "US", merchant_reference: `susp-${++seq}`,
      collect_cvv: false, payment_method: { code: "card", details: { card_token: token.json.token } }, ...urls
    })
    expect(created.json, created.text).toMatchObject({ status: "requires_action", next_action: { type: "redirect" } })
    // The customer approves on the provider's page, which sends them back to Tender's return route.
    const answered = await fetch(created.json.next_action.redirect_url, {
      method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "answer=approve", redirect: "manual"
    })
    const back = answered.headers.get("location")!
    expect(new URL(back).pathname).toBe(`/providers/${channel.id}/return`)
    const status = async () => (await send(server, onStripe, "GET", `/v1/orders/${created.json.order_id}`)).json.status as string

    // The return page's form posts the return URL back (a GET alone never authorizes): the browser's POST.
    const posted = () => fetch(back, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "", redirect: "manual" })
    await suspended(async () => {
      const refused = await posted()
      expect(refused.status).toBe(409)
      expect(await refused.text()).toContain("This merchant cannot accept payments right now.")
      expect(await status()).toBe("requires_action")
    }, onStripe.account_id)
    const returned = await posted()
    expect({ status: returned.status, location: returned.headers.get("location") }).toEqual({ status: 303, location: urls.success_url })
    expect(await status()).toBe("succeeded")
  })
})
