/**
 * Issue 21, item 6 ("No 500 for what a client can send"), over real HTTP on memory and PostgreSQL
 * storage: a string holding a lone UTF-16 surrogate, and JSON nested thousands of levels deep, in
 * a signed body (and on the browser SDK's routes), are 400 `validation_failed` naming the field,
 * and nothing is stored.
 *
 * Spec, Errors: "400 | Malformed JSON, invalid request, validation failure"; "`validation_failed` |
 * 400 | Field validation failed; see `errors[]`"; "500 | Unexpected error; safe to retry
 * idempotently" — so a request that can only fail again must never be answered 500.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Credentials, send } from "@tender/client/Testing"
import { Limits } from "@tender/domain"
import type { TenderConfig } from "@tender/adapters/Config"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { fileStorage } from "@tender/adapters/test/PgTestDatabase"

type Merchant = Credentials & { readonly account_id: string; readonly publishable_key: string }

const STORAGES: ReadonlyArray<Pick<TenderConfig, "storage" | "dataDir" | "databaseUrl" | "vaultKey">> = [
  { storage: "memory", dataDir: ".tender-test" },
  await fileStorage()
]

const URLS = { success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" }

/** JSON nested `depth` levels under one field, written as text (JSON.stringify itself overflows that deep). */
const nested = (depth: number) => `${"[".repeat(depth)}"x"${"]".repeat(depth)}`

describe.each(STORAGES)("request text ($storage)", (storage) => {
  let server: TestServer
  let merchant: Merchant
  let signedAt = 0

  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, storage)
    merchant = await Effect.runPromise(server.accounts.create({ name: `text-${storage.storage}`, mode: "test" }))
  })
  afterAll(() => server?.close())

  /**
   * Each request signed in a second of its own, as a client signs each retry anew (the same write
   * signed in the same second is a replay, 409): now, or one past the last (within the 300 s window).
   */
  const post = (path: string, body: string) => {
    signedAt = Math.max(Math.floor(Date.now() / 1000), signedAt + 1)
    return send(server, merchant, "POST", path, { body, timestamp: signedAt })
  }

  const expectNamed = (reply: { status: number; json: any }, field: string) => {
    expect(reply.status).toBe(400)
    expect(reply.json.code).toBe("validation_failed")
    expect(reply.json.errors.map((e: { field: string }) => e.field)).toContain(field)
  }

  it("a lone surrogate in merchant_reference: 400 naming it, on the create and on every retry; nothing stored", async () => {
    const reference = `lone-${storage.storage}-\ud800`
    const body = JSON.stringify({ amount: "10.00", currency: "USD", country: "US", merchant_reference: reference, payment_method: { code: "paypal" }, ...URLS })
    // JSON.stringify writes the surrogate as the escape \ud800: the bytes on the wire are valid UTF-8.
    expect(body).toContain("\\ud800")
    for (let attempt = 0; attempt < 3; attempt++) {
      const reply = await post("/v1/payments", body)
      expectNamed(reply, "merchant_reference")
      expect(reply.json.errors.find((e: { field: string }) => e.field === "merchant_reference").message).toMatch(/lone UTF-16 surrogate/)
    }
    // Nothing was stored under what PostgreSQL would have made of the reference (U+FFFD for the surrogate).
    expect((await send(server, merchant, "GET", `/v1/orders/by-reference/${encodeURIComponent(reference.replace("\ud800", "\ufffd"))}`)).status).toBe(404)
    // The same payment with a well-formed reference goes through.
    const clean = await post("/v1/payments", body.replace("\\ud800", "ok"))
    expect(clean.status).toBe(200)
  })

  it.each([
    ["/v1/checkout/sessions", "merchant_reference", { amount: "10.00", currency: "USD", country: "US", merchant_reference: "s-\udfff", ...URLS }],
    ["/v1/transfers", "payment_method.details.holder_name", { amount: "5.00", currency: "EUR", country: "DE", merchant_reference: "t-1", payment_method: { code: "bank_transfer", details: { iban: "DE89370400440532013000", holder_name: "Ada \udc00" } } }],
    ["/v1/customers", "name", { email: "ada@example.com", name: "\udbffAda" }],
    ["/v1/webhook_endpoints", "url", { url: "https://hooks.example/\ud800" }],
    ["/v1/test_helpers/card_tokens", "holder_name", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123", holder_name: "\udc00\ud800" }],
    ["/v1/orders/search", "merchant_reference", { merchant_reference: "x\ud800" }],
    ["/v1/payments", "body", { amount: "10.00", currency: "USD", country: "US", merchant_reference: "k-1", payment_method: { code: "paypal" }, ...URLS, ["note\ud800"]: 1 }]
  ])("a lone surrogate in a body of POST %s is 400 naming %s", async (path, field, body) => {
    expectNamed(await post(path, JSON.stringify(body)), field)
  })

  it.each([1_000, 5_000, 100_000])("JSON nested %i levels in a signed body: 400 naming the field that holds it", async (depth) => {
    const body = `{"amount":"10.00","currency":"USD","country":"US","merchant_reference":"deep-${depth}","payment_method":{"code":"paypal","details":${nested(depth)}}}`
    const reply = await post("/v1/payments", body)
    expectNamed(reply, "payment_method")
    expect(reply.json.errors[0].message).toBe(`nests objects and arrays deeper than ${Limits.MAX_JSON_DEPTH} levels`)
    expect((await send(server, merchant, "GET", `/v1/orders/by-reference/deep-${depth}`)).status).toBe(404)
  })

  it(`nesting up to ${Limits.MAX_JSON_DEPTH} levels is the schema's to judge; one more is refused`, async () => {
    // The body is level 1, `payment_method` 2, so the array holds the rest.
    const within = await post("/v1/payments", `{"merchant_reference":"within","payment_method":${nested(Limits.MAX_JSON_DEPTH - 1)}}`)
    expect(within.status).toBe(400)
    expect(within.json.errors.some((e: { message: string }) => e.message.includes("deeper than"))).toBe(false)
    expectNamed(await post("/v1/payments", `{"merchant_reference":"beyond","payment_method":${nested(Limits.MAX_JSON_DEPTH)}}`), "payment_method")
  })

  describe("the browser SDK's routes (/v1/client/…)", () => {
    const client = async (path: string, body: string) => {
      const response = await fetch(server.baseUrl + path, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${merchant.publishable_key}`, origin: new URL(server.baseUrl).origin },
        body
      })
      return { status: response.status, json: await response.json() }
    }

    it("a lone surrogate in the card number, or deep JSON: validation_error, never a 500", async () => {
      const collecting = await post("/v1/payments", JSON.stringify({ amount: "25.00", currency: "USD", country: "US", merchant_reference: `collect-${storage.storage}`, payment_method: { code: "card" }, ...URLS }))
      const secret = collecting.json.next_action.client_secret as string
      const lone = await client("/v1/client/card_tokens", JSON.stringify({ client_secret: secret, number: "4242\ud800424242424242", exp_month: 12, exp_year: 2035, cvc: "123" }))
      expect(lone).toMatchObject({ status: 400, json: { error: { type: "validation_error", code: "invalid_number" } } })
      const deep = await client("/v1/client/session", `{"client_secret":"${secret}","extra":${nested(50_000)}}`)
      expect(deep).toMatchObject({ status: 400, json: { error: { type: "api_error", code: "validation_failed" } } })
    })
  })
})
