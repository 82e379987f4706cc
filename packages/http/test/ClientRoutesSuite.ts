/**
 * The browser SDK's routes over real HTTP (contract.md, "Browser SDK"; spec,
 * Browser SDK and SDK errors): publishable-key auth and the client secret (one payment of the key's
 * account, 15 minutes, the sandbox's expire helper), CORS and its preflight, rate limits, card
 * tokens for the secret's payment or transfer, `pay` as the payment's one authorization (4242
 * succeeded, 0002 failed, 3220 requires_action with the account's display mode, manual capture
 * authorized → succeeded, a repeat refused), CVC-only on a saved card, and no card number or CVC in
 * a response or a log line.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import type { TenderConfig } from "@tender/adapters/Config"
import { ClientSecretRepo, KeyHasher } from "@tender/domain"
import { Effect } from "effect"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, type Reply, send } from "@tender/client/Testing"
import { captureOutput } from "./support/Browser.ts"

type Merchant = Credentials & { readonly account_id: string; readonly publishable_key: string }
/** A browser's reply, with the Origin its request carried. */
type ClientReply = Reply & { readonly origin: string }

const ORIGIN = "https://shop.example"
const PANS = ["4242424242424242", "4000000000000002", "4000000000003220", "5555555555554444"]

export const clientRoutesSuite = (storage: Pick<TenderConfig, "storage" | "dataDir">) => {
  let server: TestServer
  let merchant: Merchant
  let other: Merchant
  let seq = 0
  /** Every line the process wrote while the suite ran (the server logs in-process). */
  const written: Array<string> = []

  const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
  const post = (path: string, body: unknown, creds: Credentials = merchant) => send(server, creds, "POST", path, { body: JSON.stringify(body) })

  /**
   * The secure fields frame's origin: TENDER_FIELDS_URL's default, the public URL (the test server's
   * own address). Only it may call card_tokens.
   */
  const fieldsOrigin = () => new URL(server.baseUrl).origin

  /**
   * A browser's request: the publishable key, JSON, from the merchant's page origin, or for
   * card_tokens from the fields frame's (as tender.js sends them); `headers` may name another origin.
   */
  const client = async (path: string, body: unknown, key: string | null = merchant.publishable_key, headers: Record<string, string> = {}): Promise<ClientReply> => {
    const origin = headers["origin"] ?? (path === "/v1/client/card_tokens" ? fieldsOrigin() : ORIGIN)
    const response = await fetch(server.baseUrl + path, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key !== null ? { authorization: `Bearer ${key}` } : {}), ...headers, origin },
      body: JSON.stringify(body)
    })
    const text = await response.text()
    const reply = { origin, status: response.status, headers: response.headers, text, json: text === "" ? undefined : JSON.parse(text) }
    // Whatever the route answered, no card number and no CVC value leave in it.
    for (const pan of PANS) expect(reply.text).not.toContain(pan)
    expect(reply.text).not.toMatch(/"cvc"/)
    return reply
  }

  /** A refusal in the SDK's error object, readable by the origin that asked (`allowed: false`: by none). */
  const expectClientError = (reply: ClientReply, status: number, type: string, code: string, allowed = true) => {
    expect({ status: reply.status, type: reply.json?.error?.type, code: reply.json?.error?.code }).toEqual({ status, type, code })
    expect(reply.json.error).toEqual({ type, code, message: expect.any(String), correlationId: expect.stringMatching(/^req_/) })
    expect(reply.json.error.correlationId).toBe(reply.headers.get("x-request-id"))
    expect(reply.headers.get("access-control-allow-origin")).toBe(allowed ? reply.origin : null)
  }

  const tokenize = async (number: string, creds: Credentials = merchant) => {
    const reply = await post("/v1/test_helpers/card_tokens", { number, exp_month: 12, exp_year: 2035, cvc: "123" }, creds)
    expect(reply.status).toBe(201)
    return reply.json.token as string
  }

  /** A customer-present card payment awaiting the browser: collect_card, or collect_cvv on a saved card. */
  const payment = async (extra: Record<string, unknown> = {}, creds: Merchant = merchant) => {
    const reply = await post("/v1/payments", { amount: "25.00", currency: "USD", country: "US", merchant_reference: ref("sdk"), payment_method: { code: "card" }, success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel", ...extra }, creds)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.json.next_action.type).toMatch(/^collect_(card|cvv)$/)
    return { order_id: reply.json.order_id as string, secret: reply.json.next_action.client_secret as string, expires_at: reply.json.next_action.expires_at as string }
  }

  /**
   * A collect_card payment secret stored as minted at `minted`, for what no request makes: a
   * backdated secret, or a live account's without a live payment.
   */
  const storeSecret = (secret: string, accountId: string, orderId: string, minted: number) =>
    server.run(Effect.gen(function*() {
      yield* (yield* ClientSecretRepo).insert({
        hash: yield* (yield* KeyHasher).hash(secret),
        account_id: accountId,
        order_id: orderId,
        kind: "payment",
        collect: "card",
        created_at: new Date(minted).toISOString(),
        expires_at: new Date(minted + 15 * 60_000).toISOString(),
        expired_by_helper: false,
        used_at: null,
        card_token: null,
        token_mints: 0
      })
    }))

  const card = (number: string, cvc = "123") => ({ number, exp_month: 12, exp_year: 2035, cvc, holder_name: "Ada Lovelace" })

  /** collect_card end to end: a token for the secret's payment, then pay with it. */
  const payWith = async (number: string, extra: Record<string, unknown> = {}) => {
    const p = await payment(extra)
    const token = await client("/v1/client/card_tokens", { client_secret: p.secret, ...card(number) })
    expect(token.status).toBe(201)
    const paid = await client("/v1/client/pay", { client_secret: p.secret, token: token.json.token })
    return { ...p, token: token.json.token as string, paid }
  }

  beforeAll(async () => {
    captureOutput(written)
    server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, storage)
    merchant = await Effect.runPromise(server.accounts.create({ name: "sdk", mode: "test" }))
    other = await Effect.runPromise(server.accounts.create({ name: "sdk-other", mode: "test" }))
  }, 120_000)
  afterAll(async () => {
    await server.close()
    vi.restoreAllMocks()
  })

  describe("session (contract.md: kind, payment_id, collect, amount, saved_card, livemode, expires_at)", () => {
    it("collect_card → kind payment, collect card, the amount in major units, no saved card, the secret's 15-minute expiry", async () => {
      const p = await payment()
      const reply = await client("/v1/client/session", { client_secret: p.secret })
      expect(reply.status).toBe(200)
      expect(reply.json).toEqual({ kind: "payment", payment_id: p.order_id, collect: "card", amount: 25, currency: "USD", saved_card: null, livemode: false, expires_at: p.expires_at })
      expect(reply.headers.get("access-control-allow-origin")).toBe(ORIGIN)
      // no response signature: the browser has no signing secret (the merchant API's responses carry one)
      expect(reply.headers.get("x-signature")).toBeNull()
    })

    it("collect_cvv → collect cvv with the saved card's brand and last four only", async () => {
      const p = await payment({ payment_method: { code: "card", details: { card_token: await tokenize("5555555555554444") } } })
      const reply = await client("/v1/client/session", { client_secret: p.secret })
      expect(reply.json).toMatchObject({ kind: "payment", collect: "cvv", saved_card: { brand: "mastercard", last4: "4444" } })
      expect(reply.text).not.toMatch(/tok_|exp_/)
    })
  })

  describe("auth refusals (401 authentication_error)", () => {
    it("no key, a secret key, an unknown publishable key → invalid_api_key; the merchant API refuses the publishable key", async () => {
      const p = await payment()
      expectClientError(await client("/v1/client/session", { client_secret: p.secret }, null), 401, "authentication_error", "invalid_api_key")
      expectClientError(await client("/v1/client/session", { client_secret: p.secret }, merchant.secret_key), 401, "authentication_error", "invalid_api_key")
      expectClientError(await client("/v1/client/session", { client_secret: p.secret }, "pk_test_000000000000000000000000000000000000000000000000"), 401, "authentication_error", "invalid_api_key")
      const merchantApi = await send(server, { ...merchant, secret_key: merchant.publishable_key }, "GET", `/v1/orders/${p.order_id}`)
      expect(merchantApi.status).toBe(401)
    })

    it("another account's secret, an unknown or a missing secret → client_secret_invalid", async () => {
      const foreign = await payment({}, other)
      expectClientError(await client("/v1/client/session", { client_secret: foreign.secret }), 401, "authentication_error", "client_secret_invalid")
      const mine = await payment()
      expectClientError(await client("/v1/client/session", { client_secret: `${mine.secret}0` }), 401, "authentication_error", "client_secret_invalid")
      expectClientError(await client("/v1/client/card_tokens", { ...card("4242424242424242") }), 401, "authentication_error", "client_secret_invalid")
      // the other account's key cannot use this account's secret either
      expectClientError(await client("/v1/client/pay", { client_secret: mine.secret, token: "tok_x" }, other.publishable_key), 401, "authentication_error", "client_secret_invalid")
    })

    it("past its expiry → CLIENT_SECRET_EXPIRED on every route", async () => {
      const p = await payment()
      // A secret minted 16 minutes ago for this payment (no request can backdate one).
      const secret = `${p.order_id}_secret_0123456789abcdef0123456789abcdef`
      await storeSecret(secret, merchant.account_id, p.order_id, Date.now() - 16 * 60_000)
      for (const [path, body] of [
        ["/v1/client/session", {}],
        ["/v1/client/card_tokens", card("4242424242424242")],
        ["/v1/client/pay", { token: "tok_x" }],
        ["/v1/client/payment_status", {}]
      ] as const) {
        expectClientError(await client(path, { client_secret: secret, ...body }), 401, "authentication_error", "CLIENT_SECRET_EXPIRED")
      }
      // the payment's own secret, minted now, still works
      expect((await client("/v1/client/session", { client_secret: p.secret })).status).toBe(200)
    })

    it("the expire helper ends a secret at once (secret test key, signed); live mode 403; another account's secret 400", async () => {
      const p = await payment()
      expect((await client("/v1/client/session", { client_secret: p.secret })).status).toBe(200)
      const unsigned = await send(server, merchant, "POST", "/v1/test_helpers/client_secrets/expire", { body: JSON.stringify({ client_secret: p.secret }), signature: null })
      expect(unsigned.status).toBe(401)
      const foreign = await post("/v1/test_helpers/client_secrets/expire", { client_secret: p.secret }, other)
      expect({ status: foreign.status, code: foreign.json.code }).toEqual({ status: 400, code: "validation_failed" })
      const expired = await post("/v1/test_helpers/client_secrets/expire", { client_secret: p.secret })
      expect(expired.status).toBe(200)
      expect(expired.json).toEqual({ expired: true, expires_at: expect.any(String) })
      expect(Date.parse(expired.json.expires_at)).toBeLessThanOrEqual(Date.now())
      expectClientError(await client("/v1/client/session", { client_secret: p.secret }), 401, "authentication_error", "CLIENT_SECRET_EXPIRED")
      expectClientError(await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242") }), 401, "authentication_error", "CLIENT_SECRET_EXPIRED")
      const live = await Effect.runPromise(server.accounts.create({ name: "sdk-live", mode: "live" }))
      const refused = await post("/v1/test_helpers/client_secrets/expire", { client_secret: p.secret }, live)
      expect({ status: refused.status, code: refused.json.code }).toEqual({ status: 403, code: "forbidden" })
    })
  })

  describe("card tokens (collect_card: full card; collect_cvv: the code only)", () => {
    it("a full card → 201 token, brand, last4, bin, expiry; vaulted in the secret's account (usable by its merchant, not another)", async () => {
      const p = await payment()
      const reply = await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242") })
      expect(reply.status).toBe(201)
      expect(reply.json).toEqual({ token: expect.stringMatching(/^tok_/), brand: "visa", last4: "4242", bin: "42424242", exp_month: 12, exp_year: 2035 })
      const own = await post("/v1/payments", { amount: "1.00", currency: "USD", country: "US", merchant_reference: ref("own"), collect_cvv: false, payment_method: { code: "card", details: { card_token: reply.json.token } } })
      expect(own.json.status).toBe("completed")
      const foreign = await post("/v1/payments", { amount: "1.00", currency: "USD", country: "US", merchant_reference: ref("foreign"), collect_cvv: false, payment_method: { code: "card", details: { card_token: reply.json.token } } }, other)
      expect(foreign.status).toBe(404)
    })

    it("bad card data → 400 validation_error invalid_number | invalid_expiry | invalid_cvc", async () => {
      const p = await payment()
      expectClientError(await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424241") }), 400, "validation_error", "invalid_number")
      expectClientError(await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242"), exp_year: 2020 }), 400, "validation_error", "invalid_expiry")
      expectClientError(await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242", "12") }), 400, "validation_error", "invalid_cvc")
      expectClientError(await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("378282246310005", "123") }), 400, "validation_error", "invalid_cvc")
      // a card payment's secret needs the number: absent → invalid_number
      expectClientError(await client("/v1/client/card_tokens", { client_secret: p.secret, cvc: "123" }), 400, "validation_error", "invalid_number")
      // a body that is not the route's shape → api_error validation_failed
      expectClientError(await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242"), holder_name: 42 }), 400, "api_error", "validation_failed")
    })

    it("collect_cvv: the CVC only → the saved card's token, expiry null; the code is checked against the brand; a number is refused", async () => {
      const saved = await tokenize("4242424242424242")
      const p = await payment({ payment_method: { code: "card", details: { card_token: saved } } })
      expectClientError(await client("/v1/client/card_tokens", { client_secret: p.secret, cvc: "1234" }), 400, "validation_error", "invalid_cvc")
      expectClientError(await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242") }), 400, "validation_error", "invalid_number")
      const reply = await client("/v1/client/card_tokens", { client_secret: p.secret, cvc: "321" })
      expect(reply.status).toBe(201)
      expect(reply.json).toEqual({ token: saved, brand: "visa", last4: "4242", bin: "42424242", exp_month: null, exp_year: null })
      const paid = await client("/v1/client/pay", { client_secret: p.secret, token: saved })
      expect(paid.json).toEqual({ status: "succeeded", payment_id: p.order_id })
      const order = await send(server, merchant, "GET", `/v1/orders/${p.order_id}`)
      expect(order.json.status).toBe("succeeded")
    })

    it("collect_cvv: pay with another token than the saved card's → 400", async () => {
      const p = await payment({ payment_method: { code: "card", details: { card_token: await tokenize("4242424242424242") } } })
      const stranger = await tokenize("5555555555554444")
      expectClientError(await client("/v1/client/pay", { client_secret: p.secret, token: stranger }), 400, "api_error", "validation_failed")
    })
  })

  describe("pay (the payment's own authorization, once)", () => {
    it("4242 → succeeded; the merchant API shows the payment completed with the card; no display_mode or challenge_url there", async () => {
      const { order_id, paid, secret } = await payWith("4242424242424242")
      expect(paid.status).toBe(200)
      expect(paid.json).toEqual({ status: "succeeded", payment_id: order_id })
      const order = await send(server, merchant, "GET", `/v1/orders/${order_id}`)
      expect(order.json).toMatchObject({ status: "succeeded", payment_instrument: { type: "card", last4_digits: "4242" } })
      expect(order.text).not.toMatch(/display_mode|challenge_url/)
      expect((await client("/v1/client/payment_status", { client_secret: secret })).json).toEqual({ status: "succeeded", payment_id: order_id })
    })

    it("a repeat pay → 409 card_payment_invalid_order_state; a card token after pay → 409 too", async () => {
      const { paid, secret, token } = await payWith("4242424242424242")
      expect(paid.json.status).toBe("succeeded")
      expectClientError(await client("/v1/client/pay", { client_secret: secret, token }), 409, "api_error", "card_payment_invalid_order_state")
      expectClientError(await client("/v1/client/card_tokens", { client_secret: secret, ...card("4242424242424242") }), 409, "api_error", "card_payment_invalid_order_state")
    })

    it("two pays at once: one authorization, the other refused with 409", async () => {
      const p = await payment()
      const token = (await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242") })).json.token
      const both = await Promise.all([1, 2].map(() => client("/v1/client/pay", { client_secret: p.secret, token })))
      expect(both.map((r) => r.status).sort()).toEqual([200, 409])
      const refused = both.find((r) => r.status === 409)!
      expect(["card_payment_invalid_order_state", "card_payment_in_progress"]).toContain(refused.json.error.code)
      const txns = (await server.events(p.order_id).pipe(Effect.runPromise)).filter((e) => e.type === "payment.succeeded")
      expect(txns).toHaveLength(1)
    })

    it("0002 → failed with decline_code card_declined", async () => {
      const { order_id, paid, secret } = await payWith("4000000000000002")
      expect(paid.json).toEqual({ status: "failed", payment_id: order_id, decline_code: "card_declined" })
      expect((await client("/v1/client/payment_status", { client_secret: secret })).json).toEqual({ status: "failed", payment_id: order_id, decline_code: "card_declined" })
    })

    it("3220 → requires_action with the challenge URL and the account's display mode; the customer's answer completes it: payment_status reads the outcome with no merchant call", async () => {
      const inline = await payWith("4000000000003220")
      expect(inline.paid.json).toEqual({ status: "requires_action", payment_id: inline.order_id, challenge_url: expect.stringContaining("/sandbox/3ds"), display_mode: "inline" })
      expect(await client("/v1/client/payment_status", { client_secret: inline.secret }).then((r) => r.json))
        .toEqual({ status: "requires_action", payment_id: inline.order_id, challenge_url: inline.paid.json.challenge_url })
      // The customer approves the challenge, which completes the payment (contract.md, Browser SDK: "the
      // customer's answer to a 3-D Secure challenge completes the payment with no call from the merchant's
      // server"). Was: the merchant's 3ds/complete authorized; now it only returns the snapshot.
      const answered = await fetch(inline.paid.json.challenge_url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "outcome=approve", redirect: "manual" })
      expect(answered.status).toBeLessThan(400)
      expect((await client("/v1/client/payment_status", { client_secret: inline.secret })).json).toEqual({ status: "succeeded", payment_id: inline.order_id })
      const completed = await post(`/v1/payments/${inline.order_id}/3ds/complete`, {})
      expect(completed.json.status).toBe("completed")
      // the merchant API never shows the display mode or the challenge_url field
      const order = await send(server, merchant, "GET", `/v1/orders/${inline.order_id}`)
      expect(order.text).not.toMatch(/display_mode|challenge_url/)

      for (const mode of ["popup", "redirect"] as const) {
        await Effect.runPromise(server.accounts.setThreeDsDisplayMode(merchant.account_id, mode))
        const { paid } = await payWith("4000000000003220")
        expect(paid.json).toMatchObject({ status: "requires_action", display_mode: mode })
      }
      await Effect.runPromise(server.accounts.setThreeDsDisplayMode(merchant.account_id, "inline"))
    })

    it("return_url: in redirect mode the challenge's answer sends the customer there with tender_payment_id (approve and deny); inline keeps success_url / cancel_url; a bad one → 400 invalid_return_url and nothing is paid", async () => {
      const redirector = await Effect.runPromise(server.accounts.create({ name: "sdk-redirect", mode: "test" }))
      await Effect.runPromise(server.accounts.setThreeDsDisplayMode(redirector.account_id, "redirect"))
      /** 3220 paid from the browser of `creds`'s account; the challenge answered; where the customer is sent. */
      const answered = async (creds: Merchant, answer: "approve" | "deny", returnUrl?: string) => {
        const p = await payment({}, creds)
        const token = await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4000000000003220") }, creds.publishable_key)
        const paid = await client("/v1/client/pay", { client_secret: p.secret, token: token.json.token, ...(returnUrl !== undefined ? { return_url: returnUrl } : {}) }, creds.publishable_key)
        expect(paid.json, paid.text).toMatchObject({ status: "requires_action" })
        const reply = await fetch(paid.json.challenge_url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `outcome=${answer}`, redirect: "manual" })
        expect(reply.status).toBe(303)
        // The answer completed it (no merchant call); the customer lands where the payment stands.
        expect((await send(server, creds, "GET", `/v1/orders/${p.order_id}`)).json.status).toBe(answer === "approve" ? "succeeded" : "failed")
        return { orderId: p.order_id, location: reply.headers.get("location") }
      }
      const approved = await answered(redirector, "approve", "https://shop.example/checkout?step=pay&lang=en#summary")
      expect(approved.location).toBe(`https://shop.example/checkout?step=pay&lang=en&tender_payment_id=${approved.orderId}#summary`)
      const denied = await answered(redirector, "deny", "http://127.0.0.1:3000/pay")
      expect(denied.location).toBe(`http://127.0.0.1:3000/pay?tender_payment_id=${denied.orderId}`)
      // No return_url given (an integration calling the route itself): the order's own URLs.
      expect((await answered(redirector, "deny")).location).toBe("https://shop.example/cancel")
      // Inline: the challenge's frame keeps going where it went before, whatever return_url says.
      expect((await answered(merchant, "approve", "https://shop.example/checkout")).location).toBe("https://shop.example/ok")

      const p = await payment({}, redirector)
      const token = (await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242") }, redirector.publishable_key)).json.token
      const unsafe = ["https://shop.example/a b", "https://shop.example/x\r\nSet-Cookie: a=b", "https://shop.example/café"]
      for (const bad of ["/checkout", "javascript:alert(1)", "ftp://shop.example/x", `https://shop.example/${"a".repeat(2048)}`, "", ...unsafe]) {
        const refused = await client("/v1/client/pay", { client_secret: p.secret, token, return_url: bad }, redirector.publishable_key)
        expectClientError(refused, 400, "validation_error", "invalid_return_url")
      }
      const order = await send(server, redirector, "GET", `/v1/orders/${p.order_id}`)
      expect(order.json.status).toBe("requires_action")
      const paid = await client("/v1/client/pay", { client_secret: p.secret, token, return_url: "https://shop.example/checkout" }, redirector.publishable_key)
      expect(paid.json).toEqual({ status: "succeeded", payment_id: p.order_id })
    })

    it("manual capture (a saved card, CVC collected) → succeeded while authorized; the merchant captures it", async () => {
      const saved = await tokenize("4242424242424242")
      const p = await payment({ capture_method: "manual", payment_method: { code: "card", details: { card_token: saved } } })
      expect((await client("/v1/client/card_tokens", { client_secret: p.secret, cvc: "123" })).status).toBe(201)
      const paid = await client("/v1/client/pay", { client_secret: p.secret, token: saved })
      expect(paid.json).toEqual({ status: "succeeded", payment_id: p.order_id })
      const order = await send(server, merchant, "GET", `/v1/orders/${p.order_id}`)
      expect(order.json.status).toBe("authorized")
      const captured = await post("/v1/payments/capture", { order_id: p.order_id })
      expect(captured.json.status).toBe("completed")
    })

    it("an unknown token → 400 api_error validation_failed (it is not the secret's), and the payment still awaits its card", async () => {
      const p = await payment()
      expectClientError(await client("/v1/client/pay", { client_secret: p.secret, token: "tok_doesnotexist00000000" }), 400, "api_error", "validation_failed")
      const token = (await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242") })).json.token
      expect((await client("/v1/client/pay", { client_secret: p.secret, token })).json.status).toBe("succeeded")
    })
  })

  describe("card transfers (the collection leg; the merchant executes)", () => {
    /** A card transfer to a vaulted 4242, awaiting its card through a collect_card secret. */
    const cardTransfer = async () => {
      const created = await post("/v1/transfers", {
        amount: "30.00",
        currency: "USD",
        country: "US",
        merchant_reference: ref("tr"),
        payment_method: { code: "card", details: { card_token: await tokenize("4242424242424242") } }
      })
      expect(created.status).toBe(201)
      return created
    }

    it("a transfer's secret → session kind transfer, a token, then execute by the merchant API; pay is refused", async () => {
      const created = await cardTransfer()
      const secret = created.json.next_action.client_secret
      const session = await client("/v1/client/session", { client_secret: secret })
      expect(session.json).toMatchObject({ kind: "transfer", payment_id: created.json.order_id, collect: "card", amount: 30, currency: "USD" })
      const token = await client("/v1/client/card_tokens", { client_secret: secret, ...card("5555555555554444") })
      expect(token.status).toBe(201)
      expectClientError(await client("/v1/client/pay", { client_secret: secret, token: token.json.token }), 400, "api_error", "invalid_request")
      const executed = await post(`/v1/transfers/${created.json.order_id}/execute`, { card_token: token.json.token })
      expect(executed.status).toBe(200)
      expect(executed.json).toMatchObject({ status: "succeeded", payment_instrument: { type: "card", last4_digits: "4444" } })
    })

    /** A card transfer awaiting its card, with the token the browser collected through its secret. */
    const collectedTransfer = async () => {
      const created = await cardTransfer()
      const token = await client("/v1/client/card_tokens", { client_secret: created.json.next_action.client_secret, ...card("5555555555554444") })
      expect(token.status).toBe(201)
      return { id: created.json.id as string, order_id: created.json.order_id as string, token: token.json.token as string }
    }

    const expectDestinationRefused = (reply: Reply) => {
      expect({ status: reply.status, code: reply.json?.code }).toEqual({ status: 400, code: "transfer_destination_invalid" })
      expect(reply.json.errors).toEqual([{ field: "card_token", message: expect.any(String) }])
    }

    it("execute takes only the token collected for that transfer: a payment secret's, a vaulted one or another transfer's → 400 transfer_destination_invalid, nothing changes; then its own → 200", async () => {
      const t = await collectedTransfer()
      const other = await collectedTransfer()
      const p = await payment()
      const paymentToken = (await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("5555555555554444") })).json.token
      for (const foreign of [paymentToken, await tokenize("5555555555554444"), other.token]) {
        expectDestinationRefused(await post(`/v1/transfers/${t.order_id}/execute`, { card_token: foreign }))
      }
      const untouched = await send(server, merchant, "GET", `/v1/transfers/${t.id}`)
      expect(untouched.json).toMatchObject({ status: "requires_action", payment_instrument: { last4_digits: "4242" } })
      const executed = await post(`/v1/transfers/${t.order_id}/execute`, { card_token: t.token })
      expect(executed.status).toBe(200)
      expect(executed.json).toMatchObject({ status: "succeeded", payment_instrument: { type: "card", last4_digits: "4444" } })
      // Before its own secret collected a card, a transfer still refuses another transfer's token.
      const fresh = await cardTransfer()
      expectDestinationRefused(await post(`/v1/transfers/${fresh.json.order_id}/execute`, { card_token: other.token }))
    })

    it("a transfer's collected token is payout-scoped: a payment or a checkout attempt with it → 404 payment_method_not_found; a vaulted token still pays; the transfer still executes with it", async () => {
      const t = await collectedTransfer()
      const body = (token: string) => ({ amount: "25.00", currency: "USD", country: "US", merchant_reference: ref("scoped"), payment_method: { code: "card", details: { card_token: token } }, skip_cvv: true, success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" })
      const refused = await post("/v1/payments", body(t.token))
      expect({ status: refused.status, code: refused.json?.code }).toEqual({ status: 404, code: "payment_method_not_found" })
      expect(refused.text).not.toContain(t.token)
      const vaulted = await post("/v1/payments", body(await tokenize("4242424242424242")))
      expect(vaulted.status, vaulted.text).toBe(200)
      // A checkout session's attempt (its test helper) refuses it the same way.
      const session = await post("/v1/checkout/sessions", { amount: "30.00", currency: "USD", merchant_reference: ref("cs"), success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" })
      expect(session.status, session.text).toBe(201)
      const attempt = (card_token: string) => post(`/v1/test_helpers/checkout/sessions/${session.json.id}/attempt`, { payment_method: { code: "card", details: { card_token } } })
      const attemptRefused = await attempt(t.token)
      expect({ status: attemptRefused.status, code: attemptRefused.json?.code }).toEqual({ status: 404, code: "payment_method_not_found" })
      expect((await attempt(await tokenize("4242424242424242"))).json.status).toBe("completed")
      // The transfer is untouched and still executes with it.
      expect((await post(`/v1/transfers/${t.order_id}/execute`, { card_token: t.token })).json.status).toBe("succeeded")
    })
  })

  describe("one secret, its own token (a token pays only the payment whose secret minted it)", () => {
    it("payment A's token is refused for payment B (400 on token), B still pays with its own, A with its own", async () => {
      const a = await payment()
      const b = await payment()
      const tokenA = (await client("/v1/client/card_tokens", { client_secret: a.secret, ...card("4242424242424242") })).json.token
      const refused = await client("/v1/client/pay", { client_secret: b.secret, token: tokenA })
      expectClientError(refused, 400, "api_error", "validation_failed")
      expect(refused.json.error.message).toMatch(/token/)
      expect((await send(server, merchant, "GET", `/v1/orders/${b.order_id}`)).json.status).toBe("requires_action")
      const tokenB = (await client("/v1/client/card_tokens", { client_secret: b.secret, ...card("5555555555554444") })).json.token
      expect((await client("/v1/client/pay", { client_secret: b.secret, token: tokenB })).json).toEqual({ status: "succeeded", payment_id: b.order_id })
      expect((await send(server, merchant, "GET", `/v1/orders/${b.order_id}`)).json.payment_instrument).toMatchObject({ last4_digits: "4444" })
      expect((await client("/v1/client/pay", { client_secret: a.secret, token: tokenA })).json).toEqual({ status: "succeeded", payment_id: a.order_id })
    })

    it("a token the merchant vaulted cannot pay a collect_card payment from the browser", async () => {
      const p = await payment()
      const vaulted = await tokenize("4242424242424242")
      expectClientError(await client("/v1/client/pay", { client_secret: p.secret, token: vaulted }), 400, "api_error", "validation_failed")
      expect((await send(server, merchant, "GET", `/v1/orders/${p.order_id}`)).json.status).toBe("requires_action")
    })

    it("a later card_tokens call replaces the token (the older one is refused by pay); the 6th call is 429 rate_limited, refused ones counted", async () => {
      const p = await payment()
      const first = (await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242") })).json.token
      // A rejected number spends a call too: one secret is no oracle for card numbers.
      expectClientError(await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424241") }), 400, "validation_error", "invalid_number")
      for (let i = 0; i < 2; i++) expect((await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242") })).status).toBe(201)
      const last = await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("5555555555554444") })
      expect(last.status).toBe(201)
      expect(last.json.token).not.toBe(first)
      const sixth = await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242") })
      expectClientError(sixth, 429, "api_error", "rate_limited")
      expectClientError(await client("/v1/client/pay", { client_secret: p.secret, token: first }), 400, "api_error", "validation_failed")
      expect((await client("/v1/client/pay", { client_secret: p.secret, token: last.json.token })).json).toEqual({ status: "succeeded", payment_id: p.order_id })
      expect((await send(server, merchant, "GET", `/v1/orders/${p.order_id}`)).json.payment_instrument).toMatchObject({ last4_digits: "4444" })
    })

    it("card_tokens from another Origin → 403 authentication_error origin_not_allowed, no allow-origin, nothing counted; without Origin (no browser) it is served", async () => {
      const p = await payment()
      for (let i = 0; i < 5; i++) {
        const refused = await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242") }, merchant.publishable_key, { origin: ORIGIN })
        expectClientError(refused, 403, "authentication_error", "origin_not_allowed", false)
      }
      // Refused before the key is read, too.
      expectClientError(await client("/v1/client/card_tokens", { client_secret: p.secret }, null, { origin: "null" }), 403, "authentication_error", "origin_not_allowed", false)
      const served = await fetch(server.baseUrl + "/v1/client/card_tokens", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${merchant.publishable_key}` },
        body: JSON.stringify({ client_secret: p.secret, ...card("4242424242424242") })
      })
      expect(served.status).toBe(201)
      expect(served.headers.get("access-control-allow-origin")).toBeNull()
      const token = (await served.json()).token
      expect((await client("/v1/client/pay", { client_secret: p.secret, token })).json.status).toBe("succeeded")
    })

    it("a live-mode account's return_url must be https (400 invalid_return_url); test mode keeps http", async () => {
      const live = await Effect.runPromise(server.accounts.create({ name: "sdk-live-return", mode: "live" }))
      // A live account's secret, stored directly: the rule is judged before the payment is read.
      const secret = `ord_live_secret_${"0123456789abcdef".repeat(2)}`
      await storeSecret(secret, live.account_id, "ord_live", Date.now())
      const refused = await client("/v1/client/pay", { client_secret: secret, token: "tok_x", return_url: "http://shop.example/checkout" }, live.publishable_key)
      expectClientError(refused, 400, "validation_error", "invalid_return_url")
      // https passes the rule, and the next check (the token) answers instead
      const https = await client("/v1/client/pay", { client_secret: secret, token: "tok_x", return_url: "https://shop.example/checkout" }, live.publishable_key)
      expectClientError(https, 400, "api_error", "validation_failed")
      // test mode: http is fine (a merchant's local development)
      const p = await payment()
      const token = (await client("/v1/client/card_tokens", { client_secret: p.secret, ...card("4242424242424242") })).json.token
      expect((await client("/v1/client/pay", { client_secret: p.secret, token, return_url: "http://localhost:3000/pay" })).json.status).toBe("succeeded")
    })
  })

  describe("CORS, rate limits, refusals of the transport", () => {
    it("preflight → 204 echoing the origin, POST and OPTIONS, authorization and content-type; no key needed; card_tokens for the fields origin only", async () => {
      const preflight = (path: string, origin: string) =>
        fetch(server.baseUrl + path, {
          method: "OPTIONS",
          headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" }
        })
      for (const [path, origin] of [
        ["/v1/client/session", ORIGIN],
        ["/v1/client/card_tokens", fieldsOrigin()],
        ["/v1/client/pay", ORIGIN],
        ["/v1/client/payment_status", ORIGIN]
      ] as const) {
        const reply = await preflight(path, origin)
        expect(reply.status).toBe(204)
        expect(reply.headers.get("access-control-allow-origin")).toBe(origin)
        expect(reply.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS")
        expect(reply.headers.get("access-control-allow-headers")).toBe("authorization, content-type")
      }
      // The merchant's page may not send card data itself: its preflight grants it nothing.
      const foreign = await preflight("/v1/client/card_tokens", ORIGIN)
      expect(foreign.status).toBe(204)
      expect(foreign.headers.get("access-control-allow-origin")).toBeNull()
      const get = await fetch(`${server.baseUrl}/v1/client/session`)
      expect(get.status).toBe(405)
    })

    it("the account's limit → 429 api_error rate_limited with Retry-After", async () => {
      const limited = await Effect.runPromise(server.accounts.create({ name: "sdk-limited", mode: "test" }))
      await Effect.runPromise(server.accounts.setRateLimit(limited.account_id, 1, 2))
      const p = await payment({}, limited)
      const replies = []
      for (let i = 0; i < 4; i++) replies.push(await client("/v1/client/session", { client_secret: p.secret }, limited.publishable_key))
      const refused = replies.find((r) => r.status === 429)
      expect(refused).toBeDefined()
      expectClientError(refused!, 429, "api_error", "rate_limited")
      expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      // another account from the same IP is not limited by it
      expect((await client("/v1/client/session", { client_secret: (await payment()).secret })).status).toBe(200)
    })

    it("not JSON → 415; malformed JSON → 400 malformed_request", async () => {
      const p = await payment()
      expectClientError(await client("/v1/client/session", { client_secret: p.secret }, merchant.publishable_key, { "content-type": "text/plain" }), 415, "api_error", "unsupported_media_type")
      const malformed = await fetch(server.baseUrl + "/v1/client/session", {
        method: "POST",
        headers: { "content-type": "application/json", origin: ORIGIN, authorization: `Bearer ${merchant.publishable_key}` },
        body: "{nope"
      })
      expect(malformed.status).toBe(400)
      expect((await malformed.json()).error).toMatchObject({ type: "api_error", code: "malformed_request" })
    })
  })

  it("no card number or CVC value in anything the server logged", () => {
    const logged = written.join("\n")
    for (const pan of PANS) expect(logged).not.toContain(pan)
    expect(logged).not.toMatch(/"cvc"\s*:/)
  })
}
