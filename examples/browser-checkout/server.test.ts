/**
 * The example shop's server without a browser: its policy, and what it answers when Tender refuses
 * it or a link names no order. (The browser tests, browser.test.ts, pay on its pages.)
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "@tender/http/testing/TestServer"
import { checkoutCsp, startMerchantServer } from "./server.ts"

describe("checkoutCsp", () => {
  const hosts = { api: "https://api.tender.example/v1", sdk: "https://js.tender.example", fields: "https://fields.tender.example" }

  it("names each of Tender's hosts in its directive, and nothing else foreign", () => {
    expect(checkoutCsp(hosts).split("; ")).toEqual([
      "default-src 'self'",
      "script-src 'self' https://js.tender.example",
      // The fields host only, as the spec's CSP section says: an inline challenge is framed inside it.
      "frame-src https://fields.tender.example",
      "connect-src 'self' https://api.tender.example",
      "img-src 'self' data:",
      "object-src 'none'",
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'"
    ])
  })

  it("without the fields host frames nothing (not even through default-src)", () => {
    expect(checkoutCsp(hosts, { withoutFieldsHost: true })).toContain("; frame-src 'none'; ")
  })
})

describe("startMerchantServer", () => {
  let tender: TestServer
  let account: { secret_key: string; signing_secret: string; publishable_key: string }
  beforeAll(async () => {
    tender = await startTestServer()
    account = await Effect.runPromise(tender.accounts.create({ name: "example shop", mode: "test" }))
  })
  afterAll(() => tender.close())

  const shop = async (overrides: { secretKey?: string; amount?: string } = {}) => {
    const lines: Array<string> = []
    const server = await startMerchantServer({
      tenderUrl: tender.baseUrl,
      secretKey: overrides.secretKey ?? account.secret_key,
      signingSecret: account.signing_secret,
      publishableKey: account.publishable_key,
      ...(overrides.amount !== undefined ? { amount: overrides.amount } : {}),
      log: (line) => lines.push(line)
    })
    return { server, lines }
  }

  it("serves the checkout page under its policy, with the publishable key and tender.js from the SDK host", async () => {
    const { server } = await shop()
    try {
      const page = await fetch(`${server.origin}/checkout`)
      expect(page.status).toBe(200)
      expect(page.headers.get("content-security-policy")).toBe(checkoutCsp({ api: tender.baseUrl, sdk: tender.baseUrl, fields: tender.baseUrl }))
      const html = await page.text()
      expect(html).toContain(`<meta name="tender-publishable-key" content="${account.publishable_key}">`)
      expect(html).toContain(`<script src="${tender.baseUrl}/sdk/v1/tender.js"></script>`)
      expect(html).not.toContain(account.secret_key)
    } finally {
      await server.close()
    }
  })

  it("answers 502 payment_not_created when Tender refuses the payment or its answer is not signed for the shop, and logs why", async () => {
    for (const [overrides, why] of [
      [{ amount: "-5.00" }, /^payment not created: 400 \w+: /],
      // An unknown key: Tender cannot sign for an account it cannot name, and an unsigned answer is not trusted.
      [{ secretKey: "sk_test_not_a_key" }, /^payment not created: unverified answer: .*HTTP 401/]
    ] as const) {
      const { server, lines } = await shop(overrides)
      try {
        const reply = await fetch(`${server.origin}/payments`, { method: "POST" })
        expect(reply.status).toBe(502)
        expect(await reply.json()).toEqual({ error: "payment_not_created" })
        expect(lines).toEqual([expect.stringMatching(why)])
      } finally {
        await server.close()
      }
    }
  })

  it("/return shows the order this browser started (its cookie), 404 for another, an unknown or a malformed one", async () => {
    const { server } = await shop()
    try {
      const started = await fetch(`${server.origin}/payments`, { method: "POST" })
      const created = (await started.json()) as { orderId: string; clientSecret: string }
      expect(created.orderId).toMatch(/^ord_/)
      const cookie = started.headers.get("set-cookie")!
      expect(cookie).toBe(`shop_order=${created.orderId}; Path=/; HttpOnly; SameSite=Lax`)
      const mine = { headers: { cookie: cookie.split(";")[0]! } }
      const known = await fetch(`${server.origin}/return?tender_payment_id=${created.orderId}`, mine)
      expect(known.status).toBe(200)
      expect(await known.text()).toContain(`Order ${created.orderId}: requires_action`)
      // Someone else's browser (no cookie, or another order's) learns nothing of this order.
      const other = (await (await fetch(`${server.origin}/payments`, { method: "POST" })).json()) as { orderId: string }
      for (const headers of [{}, { cookie: `shop_order=${other.orderId}` }] as Array<Record<string, string>>) {
        const foreign = await fetch(`${server.origin}/return?tender_payment_id=${created.orderId}`, { headers })
        expect(foreign.status).toBe(404)
        expect(await foreign.text()).not.toContain(created.orderId)
      }
      for (const id of ["ord_unknown12345678", "not-an-id"]) {
        const unknown = await fetch(`${server.origin}/return?tender_payment_id=${id}`, mine)
        expect(unknown.status).toBe(404)
        expect(await unknown.text()).toContain("No such order.")
      }
      expect((await fetch(`${server.origin}/nowhere`)).status).toBe(404)
    } finally {
      await server.close()
    }
  })
})
