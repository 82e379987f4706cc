/**
 * The spec's Conventions and Authentication over real HTTP: every code of the Transport and
 * authentication table this scope can produce, the check order, signatures (requests and
 * responses), the envelope, body cap, rate limit, 404/405.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { expectSpentBucket, rateLimitOf } from "./support/RateLimits.ts"
import type { RawReply } from "@tender/client"
import { type Credentials, type Reply, send } from "@tender/client/Testing"

let server: TestServer
let merchant: Credentials & { account_id: string }
let other: Credentials & { account_id: string; publishable_key: string }

const CARD = JSON.stringify({ number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
const METHODS = "/v1/payment-methods?country=US&currency=USD"

const create = (name: string, mode: "test" | "live" = "test") =>
  Effect.runPromise(server.accounts.create({ name, mode }))

const expectError = (reply: Reply, status: number, code: string) => {
  expect({ status: reply.status, code: reply.json?.code }).toEqual({ status, code })
  expect(typeof reply.json.message).toBe("string")
  expect(reply.json.request_id).toMatch(/^req_/)
  expect(reply.headers.get("x-request-id")).toBe(reply.json.request_id)
}

/**
 * A response is trusted only after its X-Signature verifies over t + path + body under the account's
 * signing secret (`send` checks every answer so; said here where signing is the point of the test).
 */
const expectSigned = (reply: RawReply) => {
  expect(reply.headers.get("x-signature")).toMatch(/^t=\d+, v1=[0-9a-f]{64}$/)
  expect(reply.verdict).toBe("valid")
}

// A route whose handler dies, standing for any bug below the API: the client must get a signed 500
// envelope, never a stack trace.
const Boom = HttpRouter.add("GET", "/v1/boom", Effect.die(new Error("secret internal detail")))

beforeAll(async () => {
  server = await startTestServer({ rateLimit: { perSecond: 1000, burst: 1000 }, maxBodyBytes: 64 * 1024 }, Boom)
  merchant = await create("merchant")
  other = await create("other")
})
afterAll(() => server.close())

describe("a signed request", () => {
  it("is accepted, and its response is signed", async () => {
    const reply = await send(server, merchant, "GET", METHODS)
    expect(reply.status).toBe(200)
    expect(reply.json.data.map((m: { code: string }) => m.code)).toEqual(["card", "paypal", "crypto"])
    expectSigned(reply)
  })

  it("creates a card token with the card's non-sensitive fields", async () => {
    const reply = await send(server, merchant, "POST", "/v1/test_helpers/card_tokens", { body: CARD })
    expect(reply.status).toBe(201)
    expect(reply.json).toEqual({
      token: expect.stringMatching(/^tok_/),
      brand: "visa",
      last4: "4242",
      bin: "42424242",
      exp_month: 12,
      exp_year: 2035,
      funding: "credit"
    })
    expect(reply.text).not.toContain("4242424242424242")
    expectSigned(reply)
  })
})

describe("invalid_api_key (401)", () => {
  it.each([
    ["missing header", {}],
    ["non-Bearer form", { authorization: "Basic c2tfdGVzdF94eHg6" }],
    ["unknown key", { authorization: "Bearer sk_test_00000000000000000000000000000000000000000000" }]
  ])("%s", async (_name, headers) => {
    const reply = await send(server, undefined, "GET", METHODS, { headers })
    expectError(reply, 401, "invalid_api_key")
  })

  it("revoked key (after keys roll)", async () => {
    const acct = await create("rolled")
    const rolled = await Effect.runPromise(server.accounts.rollKeys(acct.account_id))
    expectError(await send(server, acct, "GET", METHODS, { unsigned: true }), 401, "invalid_api_key")
    const fresh = await send(server, { ...acct, secret_key: rolled.secret_key }, "GET", METHODS)
    expect(fresh.status).toBe(200)
  })
})

it("publishable_api_key_not_allowed (401)", async () => {
  const reply = await send(server, { secret_key: other.publishable_key, signing_secret: other.signing_secret }, "GET", METHODS)
  expectError(reply, 401, "publishable_api_key_not_allowed")
})

describe("request signature", () => {
  const tokenPath = "/v1/test_helpers/card_tokens"
  const now = () => Math.floor(Date.now() / 1000)

  it.each([
    ["missing", null],
    ["not t=…, v1=…", "sha256=abcdef"],
    ["timestamp not a number", `t=yesterday, v1=${"a".repeat(64)}`],
    ["no v1 entry", `t=${Math.floor(Date.now() / 1000)}`],
    ["v1 not hex", `t=${Math.floor(Date.now() / 1000)}, v1=xyz`]
  ])("malformed_signature_header (401): %s", async (_name, signature) => {
    expectError(await send(server, merchant, "GET", METHODS, { signature }), 401, "malformed_signature_header")
  })

  it("invalid_signature (401): tampered body", async () => {
    const reply = await send(server, merchant, "POST", tokenPath, {
      body: CARD,
      signedBody: CARD.replace("\"123\"", "\"999\"")
    })
    expectError(reply, 401, "invalid_signature")
  })

  it("invalid_signature (401): signed with another account's secret", async () => {
    const reply = await send(server, merchant, "GET", METHODS, { signingSecret: other.signing_secret })
    expectError(reply, 401, "invalid_signature")
  })

  it("invalid_signature (401): path or query differs from what was signed", async () => {
    const t = now()
    const { signatureHeader } = await import("@tender/api/Signature")
    const signature = signatureHeader(merchant.signing_secret, t, "/v1/payment-methods?country=US&currency=EUR", "")
    expectError(await send(server, merchant, "GET", METHODS, { signature }), 401, "invalid_signature")
  })

  it.each([["301 s old", -301], ["301 s ahead", 301]])("invalid_signature (401): %s", async (_name, offset) => {
    expectError(await send(server, merchant, "GET", METHODS, { timestamp: now() + offset }), 401, "invalid_signature")
  })

  it.each([["299 s old", -299], ["299 s ahead", 299]])("accepted: %s", async (_name, offset) => {
    expect((await send(server, merchant, "GET", METHODS, { timestamp: now() + offset })).status).toBe(200)
  })

  it("several v1= entries: one that verifies is enough", async () => {
    const t = now()
    const { computeSignature } = await import("@tender/api/Signature")
    const good = computeSignature(merchant.signing_secret, t, METHODS, "")
    const stale = computeSignature("whsec_old_secret", t, METHODS, "")
    const reply = await send(server, merchant, "GET", METHODS, { signature: `t=${t}, v1=${stale}, v1=${good}` })
    expect(reply.status).toBe(200)
    const none = await send(server, merchant, "GET", METHODS, { signature: `t=${t}, v1=${stale}, v1=${stale}` })
    expectError(none, 401, "invalid_signature")
  })

  it("error responses are signed too", async () => {
    const reply = await send(server, merchant, "GET", METHODS, { signature: null })
    expectError(reply, 401, "malformed_signature_header")
    expectSigned(reply)
  })
})

describe("IP allowlist", () => {
  it("client_ip_not_allowlisted (403) outside the list; inside it works; lifting restores", async () => {
    const acct = await create("restricted")
    await Effect.runPromise(server.accounts.setAllowlist(acct.account_id, ["10.0.0.0/8"]))
    expectError(await send(server, acct, "GET", METHODS), 403, "client_ip_not_allowlisted")
    await Effect.runPromise(server.accounts.setAllowlist(acct.account_id, ["127.0.0.0/8", "::1/128"]))
    expect((await send(server, acct, "GET", METHODS)).status).toBe(200)
    await Effect.runPromise(server.accounts.setAllowlist(acct.account_id, ["0.0.0.0/0", "::/0"]))
    expect((await send(server, acct, "GET", METHODS)).status).toBe(200)
  })

  it("check order: key, then allowlist, then signature", async () => {
    const acct = await create("ordered")
    await Effect.runPromise(server.accounts.setAllowlist(acct.account_id, ["10.0.0.0/8"]))
    // bad key and outside the allowlist → the key is checked first
    const badKey = await send(server, { ...acct, secret_key: "sk_test_ffffffffffffffffffffffffffffffff" }, "GET", METHODS, { unsigned: true })
    expectError(badKey, 401, "invalid_api_key")
    // good key, outside the allowlist, bad signature → the allowlist comes before the signature
    expectError(await send(server, acct, "GET", METHODS, { signature: "nonsense" }), 403, "client_ip_not_allowlisted")
  })
})

describe("account status", () => {
  it("merchant_operation_not_allowed_status (409) on writes while suspended; reads keep working", async () => {
    const acct = await create("suspended")
    await Effect.runPromise(server.accounts.suspend(acct.account_id))
    const write = await send(server, acct, "POST", "/v1/test_helpers/card_tokens", { body: CARD })
    expectError(write, 409, "merchant_operation_not_allowed_status")
    expect((await send(server, acct, "GET", METHODS)).status).toBe(200)
    await Effect.runPromise(server.accounts.activate(acct.account_id))
    expect((await send(server, acct, "POST", "/v1/test_helpers/card_tokens", { body: CARD })).status).toBe(201)
  })
})

describe("bodies", () => {
  const path = "/v1/test_helpers/card_tokens"

  it("unsupported_media_type (415) for a non-JSON body", async () => {
    const reply = await send(server, merchant, "POST", path, { body: "number=4242", headers: { "content-type": "application/x-www-form-urlencoded" } })
    expectError(reply, 415, "unsupported_media_type")
  })

  it("malformed_request (400) for invalid JSON", async () => {
    expectError(await send(server, merchant, "POST", path, { body: "{\"number\": " }), 400, "malformed_request")
  })

  it("invalid_request (400) for JSON that is not an object", async () => {
    expectError(await send(server, merchant, "POST", path, { body: "[1,2]" }), 400, "invalid_request")
  })

  it("validation_failed (400) names each offending field", async () => {
    const reply = await send(server, merchant, "POST", path, { body: JSON.stringify({ number: 4242, exp_month: "12" }) })
    expectError(reply, 400, "validation_failed")
    const fields = reply.json.errors.map((e: { field: string }) => e.field).sort()
    expect(fields).toEqual(["cvc", "exp_month", "exp_year", "number"])
  })

  it("validation_failed (400) for a card failing Luhn, expiry and CVC length", async () => {
    const body = JSON.stringify({ number: "378282246310006", exp_month: 1, exp_year: 2020, cvc: "123" })
    const reply = await send(server, merchant, "POST", path, { body })
    expectError(reply, 400, "validation_failed")
    expect(reply.json.errors.map((e: { field: string }) => e.field).sort()).toEqual(["cvc", "exp_year", "number"])
  })

  it("413 payload_too_large above the cap", async () => {
    const body = JSON.stringify({ pad: "x".repeat(70 * 1024) })
    expectError(await send(server, merchant, "POST", path, { body }), 413, "payload_too_large")
  })
})

describe("routing", () => {
  it("not_found (404) for an unknown route", async () => {
    const reply = await send(server, merchant, "GET", "/v1/nothing-here")
    expectError(reply, 404, "not_found")
    expectSigned(reply)
  })

  it("method_not_allowed (405) for a known path with another method", async () => {
    const reply = await send(server, merchant, "DELETE", "/v1/test_helpers/card_tokens")
    expectError(reply, 405, "method_not_allowed")
    expect(reply.headers.get("allow")).toBe("POST")
  })

  it("not_found (404), not 405, for the right method on a path the router will not match (an id past its length)", async () => {
    const reply = await send(server, merchant, "GET", `/v1/orders/ord_${"a".repeat(200)}`)
    expectError(reply, 404, "not_found")
    expect(reply.headers.get("allow")).toBeNull()
  })
})

it("internal_error (500): a defect becomes the signed envelope and reveals nothing", async () => {
  const reply = await send(server, merchant, "GET", "/v1/boom")
  expectError(reply, 500, "internal_error")
  expect(reply.text).not.toContain("secret internal detail")
  expectSigned(reply)
})

describe("vault access tokens", () => {
  it("vault_not_enabled (403) until the operator enables the vault; then a 5-minute token", async () => {
    const acct = await create("vaulted")
    expectError(await send(server, acct, "POST", "/v1/vault/access_tokens", { body: "{}" }), 403, "vault_not_enabled")
    await Effect.runPromise(server.accounts.enableVault(acct.account_id))
    const before = Date.now()
    const reply = await send(server, acct, "POST", "/v1/vault/access_tokens", { body: "{}" })
    expect(reply.status).toBe(201)
    expect(reply.json.token).toMatch(/^vat_/)
    const ttl = Date.parse(reply.json.expires_at) - before
    expect(ttl).toBeGreaterThan(299_000)
    expect(ttl).toBeLessThanOrEqual(301_000)
  })
})

describe("test helpers", () => {
  it("forbidden (403) for a live-mode account", async () => {
    const live = await create("live merchant", "live")
    expectError(await send(server, live, "POST", "/v1/test_helpers/card_tokens", { body: CARD }), 403, "forbidden")
  })

  it("detects brand and funding: amex with a 4-digit CVC, visa debit", async () => {
    const amex = await send(server, merchant, "POST", "/v1/test_helpers/card_tokens", {
      body: JSON.stringify({ number: "378282246310005", exp_month: 1, exp_year: 2040, cvc: "1234", holder_name: "Ada" })
    })
    expect(amex.json).toMatchObject({ brand: "amex", last4: "0005", bin: "378282" })
    const debit = await send(server, merchant, "POST", "/v1/test_helpers/card_tokens", {
      body: JSON.stringify({ number: "4000 0566 5566 5556", exp_month: 1, exp_year: 2040, cvc: "123" })
    })
    expect(debit.json).toMatchObject({ brand: "visa", funding: "debit", last4: "5556" })
  })
})

describe("payment methods discovery", () => {
  it("lists methods with their fields per country and currency", async () => {
    const path = "/v1/payment-methods?country=BR&currency=BRL"
    const reply = await send(server, merchant, "GET", path)
    expect(reply.json.data).toEqual([
      { code: "card", next_action_type: "collect_card", required_fields: [] },
      { code: "paypal", next_action_type: "redirect", required_fields: ["success_url", "cancel_url"] },
      { code: "pix", next_action_type: "qr", required_fields: ["payment_method.details.document_id", "customer.ip"] },
      { code: "boleto", next_action_type: "voucher", required_fields: ["payment_method.details.document_id", "customer.ip"] }
    ])
  })

  it("missing_request_parameter (400) without country or currency", async () => {
    const reply = await send(server, merchant, "GET", "/v1/payment-methods?country=US")
    expectError(reply, 400, "missing_request_parameter")
    expect(reply.json.errors).toEqual([{ field: "currency", message: "is required" }])
  })

  it("validation_failed (400) for an unknown country or currency", async () => {
    const reply = await send(server, merchant, "GET", "/v1/payment-methods?country=XX&currency=usd")
    expectError(reply, 400, "validation_failed")
    expect(reply.json.errors.map((e: { field: string }) => e.field)).toEqual(["country", "currency"])
  })
})

describe("rate limit", () => {
  it("every answer says the account's bucket (RateLimit-*); 429 rate_limited with Retry-After once it is empty", async () => {
    const acct = await create("limited")
    await Effect.runPromise(server.accounts.setRateLimit(acct.account_id, 1, 2))
    const replies = []
    for (let i = 0; i < 3; i++) replies.push(await send(server, acct, "GET", METHODS))
    expect(replies.slice(0, 2).map((r) => r.status)).toEqual([200, 200])
    expectSpentBucket(replies, 2)
    expectError(replies[2], 429, "rate_limited")
    // a refusal after the bucket is spent (here 400, a malformed id) says it too: the request took its token
    const unknown = await send(server, merchant, "GET", "/v1/orders/ord_unknown")
    expect(unknown.status).toBe(400)
    const said = rateLimitOf(unknown.headers)
    expect(said.limit).toBe(1000)
    expect(said.remaining).toBeGreaterThanOrEqual(0)
    expect(said.remaining).toBeLessThan(1000)
    // another account is not affected
    expect((await send(server, merchant, "GET", METHODS)).status).toBe(200)
  })
})

describe("documentation", () => {
  it("serves the OpenAPI document and the reference page from the same API value", async () => {
    const doc = await fetch(`${server.baseUrl}/v1/openapi.json`)
    expect(doc.status).toBe(200)
    const openapi = await doc.json() as { paths: Record<string, unknown>; components: { securitySchemes: unknown } }
    expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(["/v1/payment-methods", "/v1/test_helpers/card_tokens"]))
    expect(openapi.components.securitySchemes).toBeDefined()
    const page = await fetch(`${server.baseUrl}/docs`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    expect(await page.text()).toContain("/v1/test_helpers/card_tokens")
  })
})

describe("hostile input never yields a 500", () => {
  const path = "/v1/test_helpers/card_tokens"
  const bodies = [
    "{}",
    "null",
    "\"text\"",
    "{\"number\": null, \"exp_month\": 1e400, \"exp_year\": -1, \"cvc\": []}",
    "{\"number\": \"4242424242424242\", \"exp_month\": 12.5, \"exp_year\": 2030, \"cvc\": \"123\"}",
    "{\"number\": \"\\u0000\\u0000\", \"exp_month\": 12, \"exp_year\": 2030, \"cvc\": \"123\", \"holder_name\": {}}",
    `{"a":${"[".repeat(2000)}${"]".repeat(2000)}}`,
    "{\"__proto__\": {\"polluted\": true}, \"constructor\": 1}",
    "\uFEFF{}"
  ]
  it.each(bodies.map((b, i) => [i, b]))("body #%i", async (_i, body) => {
    const reply = await send(server, merchant, "POST", path, { body })
    expect(reply.status).toBeGreaterThanOrEqual(400)
    expect(reply.status).toBeLessThan(500)
    expect(reply.json.request_id).toMatch(/^req_/)
  })

  // Dot segments, encoded or not, are resolved by the URL parser before the request leaves: the
  // `%2e%2e` path arrives as /etc/passwd, outside the API, so no account signs its 404.
  it.each([
    ["/v1/payment-methods?country=%E0%A4%A&currency=USD", false],
    ["/v1/payment-methods?country=US&country=BR&currency=USD", false],
    [`/v1/payment-methods?country=${"A".repeat(5000)}&currency=USD`, false],
    ["/v1/%2e%2e/%2e%2e/etc/passwd", true],
    ["/v1/test_helpers/card_tokens/../card_tokens", false]
  ])("path %s", async (path, unsigned) => {
    const reply = await send(server, merchant, "GET", path, { unsigned })
    expect(reply.status).toBeGreaterThanOrEqual(400)
    expect(reply.status).toBeLessThan(500)
  })

  it("invalid UTF-8 bytes in a body", async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])
    expect((await send(server, merchant, "POST", path, { body: bytes })).status).toBe(400)
  })
})
