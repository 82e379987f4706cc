/**
 * Hosted pages against framing and forged posts (issue 12, "Card data"): X-Frame-Options beside
 * the CSP's frame-ancestors (DENY where nothing may frame the page, SAMEORIGIN on the checkout,
 * which only its own inline 3-D Secure return frames, none on the pages merchants frame); posts
 * to the checkout (pay, card, cancel) and the sandbox's answer pages refused with 403 when another
 * site sent them (Sec-Fetch-Site, or Origin without it), nothing changed; the same posts from the
 * page's own origin still work.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, send } from "@tender/client/Testing"

let server: TestServer
let merchant: Credentials
let seq = 0
const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
const post = (path: string, body: unknown) => send(server, merchant, "POST", path, { body: JSON.stringify(body) })
const get = (path: string) => send(server, merchant, "GET", path)
const urls = { success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" }

const browser = (method: "GET" | "POST", path: string, headers: Record<string, string> = {}, body?: string) =>
  fetch(server.baseUrl + path, {
    method,
    redirect: "manual",
    headers: { ...(body !== undefined ? { "content-type": "application/x-www-form-urlencoded" } : {}), ...headers },
    body
  })

const FORGED = [
  ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site", origin: "https://evil.example" }],
  // a sibling subdomain (another tenant's page on the same registrable domain)
  ["Sec-Fetch-Site: same-site", { "sec-fetch-site": "same-site", origin: "https://other.example" }],
  ["Origin of another site (no fetch metadata)", { origin: "https://evil.example" }]
] as const
const OWN = () => ({ "sec-fetch-site": "same-origin", origin: new URL(server.baseUrl).origin })

const newSession = async () => {
  const created = await post("/v1/checkout/sessions", { amount: "30.00", currency: "USD", merchant_reference: ref("cs"), ...urls })
  expect(created.status, created.text).toBe(201)
  return created.json.id as string
}
const sessionStatus = async (id: string) => (await get(`/v1/checkout/sessions/${id}`)).json as { status: string; attempts: number }

/** The payment's snapshot as 3ds/complete reads it (the same requires_action until the challenge is answered). */
const paymentStatus = async (orderId: string) => (await post(`/v1/payments/${orderId}/3ds/complete`, {})).json.status as string

/** A direct card payment waiting on the sandbox's 3-D Secure page. */
const challenged = async () => {
  const token = await post("/v1/test_helpers/card_tokens", { number: "4000000000003220", exp_month: 12, exp_year: 2035, cvc: "123" })
  const paid = await post("/v1/payments", { amount: "25.00", currency: "USD", country: "US", merchant_reference: ref("3ds"), payment_method: { code: "card", details: { card_token: token.json.token } }, collect_cvv: false, ...urls })
  expect(paid.json.status, paid.text).toBe("requires_action")
  return { orderId: paid.json.order_id as string, path: new URL(paid.json.next_action.redirect_url as string).pathname }
}

beforeAll(async () => {
  server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } })
  merchant = await Effect.runPromise(server.accounts.create({ name: "framing", mode: "test" }))
})
afterAll(() => server.close())

describe("X-Frame-Options", () => {
  it("the checkout page: SAMEORIGIN (its inline 3-D Secure return); its not-found page: DENY", async () => {
    const page = await browser("GET", `/checkout/${await newSession()}`)
    expect(page.status).toBe(200)
    expect(page.headers.get("x-frame-options")).toBe("SAMEORIGIN")
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'self';")
    expect((await browser("GET", "/checkout/cs_nope")).headers.get("x-frame-options")).toBe("DENY")
  })

  it("sandbox pages: DENY, except the 3-D Secure challenge tender.js frames", async () => {
    const { path } = await challenged()
    const challenge = await browser("GET", path)
    expect(challenge.headers.get("content-security-policy")).toContain("frame-ancestors *")
    expect(challenge.headers.get("x-frame-options")).toBeNull()
    const missing = await browser("GET", "/sandbox/redirect/txn_nope")
    expect(missing.headers.get("x-frame-options")).toBe("DENY")
  })

  it("the card fields page merchants frame sends none", async () => {
    const fields = await browser("GET", "/fields/v1/card.html")
    if (fields.status === 503) return // assets not built in this checkout: nothing to look at
    expect(fields.headers.get("x-frame-options")).toBeNull()
  })
})

describe("forged posts to hosted pages are refused, nothing changes", () => {
  it.each(FORGED)("checkout cancel (%s) → 403, the session stays open", async (_label, headers) => {
    const id = await newSession()
    const reply = await browser("POST", `/checkout/${id}/cancel`, headers, "")
    expect(reply.status).toBe(403)
    expect(reply.headers.get("x-frame-options")).toBe("DENY")
    expect((await sessionStatus(id)).status).toBe("open")
  })

  it.each(FORGED)("checkout pay form and card start (%s) → 403, no attempt", async (_label, headers) => {
    const id = await newSession()
    expect((await browser("POST", `/checkout/${id}`, headers, "method=card")).status).toBe(403)
    const card = await browser("POST", `/checkout/${id}/card`, headers, "")
    expect(card.status).toBe(403)
    expect(await card.json()).toEqual({ message: expect.any(String) })
    expect(await sessionStatus(id)).toMatchObject({ status: "open", attempts: 0 })
  })

  it.each(FORGED)("sandbox 3-D Secure answer (%s) → 403, the payment still waits", async (_label, headers) => {
    const { orderId, path } = await challenged()
    expect((await browser("POST", path, headers, "outcome=approve")).status).toBe(403)
    expect(await paymentStatus(orderId)).toBe("requires_action")
  })

  it("the same posts from the page's own origin work", async () => {
    const id = await newSession()
    const canceled = await browser("POST", `/checkout/${id}/cancel`, OWN(), "")
    expect(canceled.status).toBe(303)
    expect((await sessionStatus(id)).status).toBe("canceled")
    const { orderId, path } = await challenged()
    const answered = await browser("POST", path, OWN(), "outcome=approve")
    expect(answered.status).toBe(303)
    expect(await paymentStatus(orderId)).toBe("completed")
  })

  it("a post whose browser sends neither header (or Origin: null, as no-referrer pages do) is taken", async () => {
    const id = await newSession()
    expect((await browser("POST", `/checkout/${id}/cancel`, { origin: "null" }, "")).status).toBe(303)
    expect((await sessionStatus(id)).status).toBe("canceled")
  })
})
