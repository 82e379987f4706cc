/**
 * Direct payments over real HTTP: every method's next action, every sandbox card, every row of the
 * manual-capture table, the pre-flight errors of the Payments and Card payments tables, reads and
 * search, and the events each transition records.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TenderConfig } from "@tender/adapters/Config"
import { Effect } from "effect"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, type Reply, send } from "@tender/client/Testing"
import { apiError, type BodyOf, type TenderPromiseClient, typedClient } from "./support/Typed.ts"

/** The whole suite, over the storage given (memory, or PostgreSQL in a temporary data dir). */
export const paymentsSuite = (storage: Pick<TenderConfig, "storage" | "dataDir">) => {
  let server: TestServer
  let merchant: Credentials & { account_id: string }
  /** The merchant's typed client: well-formed calls (raw `post`/`get` for the rest). */
  let tender: TenderPromiseClient
  let seq = 0

  const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
  const post = (path: string, body: unknown, creds: Credentials = merchant) => send(server, creds, "POST", path, { body: JSON.stringify(body) })
  const get = (path: string, creds: Credentials = merchant) => send(server, creds, "GET", path)

  const expectError = (reply: Reply, status: number, code: string) => {
    expect({ status: reply.status, code: reply.json?.code, message: reply.json?.message }).toMatchObject({ status, code })
    expect(reply.json.request_id).toMatch(/^req_/)
  }

  const tokenize = async (number: string, cvc = number.startsWith("37") ? "1234" : "123") =>
    (await tender.testHelpers.createCardToken({ number, exp_month: 12, exp_year: 2035, cvc, holder_name: "Ada Lovelace" })).token

  const readOrder = (id: string) => tender.orders.get({ params: { id } })
  const readTransaction = (id: string) => tender.transactions.get({ params: { id } })

  const urls = { success_url: "https://merchant.example/ok", cancel_url: "https://merchant.example/cancel" }

  /** A merchant-initiated card charge (authorizes in the create itself). */
  const charge = async (number: string, extra: Partial<BodyOf<"payments", "create">> = {}) =>
    tender.payments.create({
      amount: "25.00",
      currency: "USD",
      country: "US",
      merchant_reference: ref("charge"),
      payment_method: {
        code: "card",
        details: { card_token: await tokenize(number), stored_credential: { initiator: "merchant", reason: "unscheduled" } }
      },
      ...extra
    })

  const authorize = (number: string, amount = "100.00") => charge(number, { capture_method: "manual", amount })

  const eventsOf = (orderId: string) => Effect.runPromise(server.events(orderId)).then((events) => events.map((e) => e.type))

  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, storage)
    merchant = await Effect.runPromise(server.accounts.create({ name: "payments", mode: "test" }))
    tender = typedClient(server, merchant)
  })
  afterAll(() => server.close())

  describe("next action per method", () => {
    const local = (code: string, country: string, currency: string, details: Record<string, unknown> = {}, customer: Record<string, unknown> = {}) =>
      post("/v1/payments", {
        amount: currency === "CLP" || currency === "COP" ? "15000" : "50.00",
        currency,
        country,
        merchant_reference: ref(code),
        payment_method: { code, details },
        customer,
        ...urls
      })

    it.each([
      ["paypal", "US", "USD"],
      ["ideal", "NL", "EUR"]
    ])("%s → redirect", async (code, country, currency) => {
      const reply = await local(code, country, currency)
      expect(reply.status).toBe(200)
      expect(reply.json).toMatchObject({ status: "requires_action", next_action: { type: "redirect", redirect_url: expect.stringContaining("/sandbox/redirect/") } })
      expect(await eventsOf(reply.json.order_id)).toEqual(["payment.requires_action"])
    })

    it("pse → redirect (cedula and customer.ip required)", async () => {
      const reply = await local("pse", "CO", "COP", { document_id: "1.020.304.050" }, { ip: "190.24.1.2" })
      expect(reply.json.next_action.type).toBe("redirect")
    })

    it("pix → qr with data, image_url and redirect_url, expiring in 30 minutes", async () => {
      const before = Date.now()
      const reply = await local("pix", "BR", "BRL", { document_id: "123.456.789-09" }, { ip: "200.1.2.3" })
      const action = reply.json.next_action
      expect(action.type).toBe("qr")
      expect(action.qr).toMatchObject({ data: expect.any(String), image_url: expect.stringContaining(".svg"), redirect_url: expect.any(String) })
      expect(action.redirect_url).toBe(action.qr.redirect_url)
      const minutes = (Date.parse(action.expires_at) - before) / 60_000
      expect(minutes).toBeGreaterThan(29.9)
      expect(minutes).toBeLessThan(30.1)
    })

    it("mach → qr with app and web deep links", async () => {
      const reply = await local("mach", "CL", "CLP")
      expect(reply.json.next_action.qr.deep_links.map((l: { target: string }) => l.target).sort()).toEqual(["app", "web"])
    })

    it.each([
      ["boleto", "BR", "BRL", "123.456.789-09", "barcode"],
      ["oxxo", "MX", "MXN", "GODE561231HDFRRN09", "reference"]
    ])("%s → voucher expiring in 3 days", async (code, country, currency, document, field) => {
      const reply = await local(code, country, currency, { document_id: document }, { ip: "187.1.2.3" })
      const action = reply.json.next_action
      expect(action.type).toBe("voucher")
      expect(action.voucher.document_url).toContain("/sandbox/voucher/")
      expect(action.voucher[field]).toEqual(expect.any(String))
      expect(action.redirect_url).toBe(action.voucher.document_url)
      expect(Math.round((Date.parse(action.expires_at) - Date.now()) / 86_400_000)).toBe(3)
    })

    it("spei → bank_transfer", async () => {
      const reply = await local("spei", "MX", "MXN", { document_id: "GODE561231GR8" }, { ip: "187.1.2.3" })
      expect(reply.json.next_action).toMatchObject({
        type: "bank_transfer",
        bank_transfer: { clabe: expect.stringMatching(/^\d{18}$/), bank_name: expect.any(String), reference: expect.any(String), beneficiary: expect.any(String) }
      })
    })

    it("crypto → qr with a payment URI", async () => {
      const reply = await local("crypto", "DE", "EUR")
      expect(reply.json.next_action.qr.data).toMatch(/^bitcoin:/)
    })

    it("card without a token → collect_card with a 15-minute client secret", async () => {
      const reply = await post("/v1/payments", { amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("fresh"), payment_method: { code: "card" }, ...urls })
      const action = reply.json.next_action
      expect(action).toMatchObject({ type: "collect_card", client_secret: expect.stringContaining("_secret_") })
      expect(Math.round((Date.parse(action.expires_at) - Date.now()) / 60_000)).toBe(15)
    })

    it("saved card with the customer present → collect_cvv; collect_cvv: false → authorizes at once", async () => {
      const token = await tokenize("4242424242424242")
      const present = await post("/v1/payments", { amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("cvv"), payment_method: { code: "card", details: { card_token: token } } })
      expect(present.json.next_action.type).toBe("collect_cvv")
      const atOnce = await post("/v1/payments", { amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("nocvv"), collect_cvv: false, payment_method: { code: "card", details: { card_token: token } } })
      expect(atOnce.json).toMatchObject({ status: "completed", next_action: null })
    })
  })

  describe("sandbox cards", () => {
    it.each([
      ["4242424242424242", "visa"],
      ["5555555555554444", "mastercard"],
      ["378282246310005", "amex"],
      ["4000056655665556", "visa"]
    ])("%s is approved and settles; the transaction carries the card instrument", async (number, brand) => {
      const reply = await charge(number)
      expect(reply).toMatchObject({ status: "completed", next_action: null, provider_transaction_id: expect.any(String), additional_identifiers: [{ identifier: reply.order_id, type: "order" }] })
      const txn = await readTransaction(reply.transaction_id)
      expect(txn).toMatchObject({ status: "completed", subtype: "direct_payment", payment_instrument: { type: "card", card_brand: brand, last4_digits: number.slice(-4), holder_name: "Ada Lovelace" } })
      const order = await readOrder(reply.order_id)
      expect(order).toMatchObject({ status: "succeeded", payment_instrument: { type: "card", card_brand: brand } })
      expect(await eventsOf(reply.order_id)).toEqual(["payment.succeeded"])
    })

    it.each([
      ["4000000000000002", "card_declined"],
      ["4000000000009995", "insufficient_funds"],
      ["4000000000000069", "expired_card"]
    ])("%s is declined: 200 failed, decline_code %s on the transaction", async (number, code) => {
      const reply = await charge(number)
      expect(reply.status).toBe("failed")
      const txn = await readTransaction(reply.transaction_id)
      expect(txn).toMatchObject({ status: "failed", decline_code: code, payment_instrument: { type: "card" } })
      const order = await readOrder(reply.order_id)
      expect(order.status).toBe("failed")
      expect(order.payment_instrument).toBeUndefined()
      expect(await eventsOf(reply.order_id)).toEqual(["payment.failed"])
    })

    it("4000000000000119: provider_unavailable (502); contract.md, Idempotency: \"the same body with the same reference attempts again on the same order (a new transaction) … no payment.failed is emitted for a 502. The same reference with another body is 409\"", async () => {
      const body = {
        amount: "25.00",
        currency: "USD",
        country: "US",
        merchant_reference: ref("unreachable"),
        payment_method: { code: "card", details: { card_token: await tokenize("4000000000000119"), stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
      }
      expectError(await post("/v1/payments", body), 502, "provider_unavailable")
      const byReference = `/v1/orders/by-reference/${encodeURIComponent(body.merchant_reference)}`
      const pending = (await get(byReference)).json
      expect(pending).toMatchObject({ status: "pending", subtype: "direct_payment", transactions: [expect.stringMatching(/^txn_/)] })
      expect(await readTransaction(pending.transactions[0])).toMatchObject({ status: "failed", decline_code: "provider_unavailable" })
      expect((await tender.orders.search({ merchant_reference: body.merchant_reference })).data.map((o: { id: string; status: string }) => [o.id, o.status]))
        .toEqual([[pending.id, "pending"]])

      // The same request again (keys in another order): a new attempt on the same order; this card is
      // unreachable for good, so 502 again.
      const { payment_method, ...rest } = body
      expectError(await post("/v1/payments", { payment_method, ...rest }), 502, "provider_unavailable")
      const again = await readOrder(pending.id)
      expect(again).toMatchObject({ status: "pending", transactions: [pending.transactions[0], expect.stringMatching(/^txn_/)] })
      expect(again.transactions[1]).not.toBe(pending.transactions[0])
      expect(await readTransaction(again.transactions[1])).toMatchObject({ status: "failed", decline_code: "provider_unavailable" })
      expect(await eventsOf(pending.id)).toEqual([])

      // Another body with the reference: 409, nothing attempted.
      expectError(await post("/v1/payments", { ...body, amount: "25.01" }), 409, "duplicate_merchant_reference_id")
      expectError(await post("/v1/payments", { merchant_reference: body.merchant_reference }), 409, "duplicate_merchant_reference_id")
      expect((await readOrder(pending.id)).transactions).toHaveLength(2)
    })

    it("4000000000003220: 3-D Secure, complete is idempotent before and after the answer", async () => {
      const token = await tokenize("4000000000003220")
      const created = await tender.payments.create({ amount: "40.00", currency: "USD", country: "US", merchant_reference: ref("3ds"), collect_cvv: false, payment_method: { code: "card", details: { card_token: token } } })
      expect(created).toMatchObject({ status: "requires_action", next_action: { type: "redirect", redirect_url: expect.stringContaining("/sandbox/3ds/") } })
      const early = await tender.payments.completeThreeDs({ params: { id: created.order_id }, payload: {} })
      expect(early).toEqual(created)
      await tender.testHelpers.simulate({ params: { order_id: created.order_id }, payload: { outcome: "succeed" } })
      const done = await tender.payments.completeThreeDs({ params: { id: created.order_id }, payload: {} })
      expect(done).toMatchObject({ status: "completed", next_action: null })
      const again = await tender.payments.completeThreeDs({ params: { id: created.order_id }, payload: {} })
      expect(again).toEqual(done)
      expect(await eventsOf(created.order_id)).toEqual(["payment.requires_action", "payment.succeeded"])
    })

    it("4000000000003220 with manual capture: the challenge denied fails the payment", async () => {
      const token = await tokenize("4000000000003220")
      const created = await tender.payments.create({ amount: "40.00", currency: "USD", country: "US", capture_method: "manual", merchant_reference: ref("3ds-deny"), collect_cvv: false, payment_method: { code: "card", details: { card_token: token } } })
      await tender.testHelpers.simulate({ params: { order_id: created.order_id }, payload: { outcome: "fail" } })
      const done = await tender.payments.completeThreeDs({ params: { id: created.order_id }, payload: {} })
      expect(done.status).toBe("failed")
      const txn = await readTransaction(done.transaction_id)
      expect(txn.decline_code).toBe("authentication_failed")
    })

    it("merchant-initiated charges are never challenged and never emit payment.requires_action", async () => {
      const reply = await charge("4000000000003220")
      expect(reply.status).toBe("completed")
      expect(await eventsOf(reply.order_id)).toEqual(["payment.succeeded"])
    })
  })

  describe("manual capture (the spec's authorization table)", () => {
    it("event payloads: the envelope fields, payment_instrument, and the manual-capture fields on payment.succeeded", async () => {
      await Effect.runPromise(server.accounts.addProfile(merchant.account_id, "events-profile", null)).catch(() => undefined)
      const auth = await charge("4242424242424242", { capture_method: "manual", amount: "100.00", processing_profile: "events-profile" })
      const part = await tender.payments.capture({ order_id: auth.order_id, amount: "40.00", final: false })
      const last = await tender.payments.capture({ order_id: auth.order_id })
      const recorded = await Effect.runPromise(server.events(auth.order_id))
      expect(recorded.map((e) => e.type)).toEqual(["payment.authorized", "payment.partially_captured", "payment.succeeded"])
      for (const event of recorded) {
        expect(event).toMatchObject({ id: expect.stringMatching(/^evt_/), livemode: false, processing_profile: "events-profile", created_at: expect.any(String) })
        expect(event.data).toMatchObject({
          order_id: auth.order_id,
          transaction_id: auth.transaction_id,
          merchant_reference: auth.merchant_reference,
          amount: 100,
          currency: "USD",
          payment_instrument: { type: "card", card_brand: "visa", last4_digits: "4242" }
        })
      }
      expect(recorded[0].data).toMatchObject({ order_status: "authorized" })
      expect(recorded[1].data).toMatchObject({ captured_amount: 40, capture_transaction_id: part.transaction_id, capture_provider_transaction_id: part.provider_transaction_id })
      expect(recorded[2].data).toMatchObject({
        order_status: "succeeded",
        captured_amount: 100,
        capture_transaction_id: last.transaction_id,
        capture_provider_transaction_id: last.provider_transaction_id
      })
    })

    it("authorize → payment.authorized, no captured or voided amount on the response", async () => {
      const auth = await authorize("4242424242424242")
      expect(auth).toMatchObject({ status: "authorized", merchant_reference: expect.any(String) })
      expect(auth.captured_amount).toBeUndefined()
      expect(auth.voided_amount).toBeUndefined()
      expect(await eventsOf(auth.order_id)).toEqual(["payment.authorized"])
      expect((await readOrder(auth.order_id)).status).toBe("authorized")
    })

    it("capture final:false settles a part and keeps the authorization; then a final capture completes it", async () => {
      const auth = await authorize("4242424242424242")
      const part = await tender.payments.capture({ order_id: auth.order_id, amount: "30.00", final: false })
      expect(part).toMatchObject({ status: "authorized", captured_amount: 30 })
      expect(part.transaction_id).not.toBe(auth.transaction_id)
      const rest = await tender.payments.capture({ transaction_id: auth.transaction_id, amount: "20.00" })
      expect(rest).toMatchObject({ status: "completed", captured_amount: 50 })
      expect(await eventsOf(auth.order_id)).toEqual(["payment.authorized", "payment.partially_captured", "payment.succeeded"])
      // closed: no further capture or void
      await apiError(tender.payments.capture({ order_id: auth.order_id, amount: "1.00" }), 409, "payment_unexpected_state")
      await apiError(tender.payments.void({ order_id: auth.order_id }), 409, "payment_unexpected_state")
    })

    it("a capture reaching the authorized total completes it even with final:false", async () => {
      const auth = await authorize("4242424242424242", "60.00")
      const all = await tender.payments.capture({ merchant_reference: (await readOrder(auth.order_id)).merchant_reference, amount: "60.00", final: false })
      expect(all).toMatchObject({ status: "completed", captured_amount: 60 })
    })

    it("capture with no amount captures the whole remainder", async () => {
      const auth = await authorize("4242424242424242", "80.00")
      await tender.payments.capture({ order_id: auth.order_id, amount: "30.00", final: false })
      const rest = await tender.payments.capture({ order_id: auth.order_id })
      expect(rest).toMatchObject({ status: "completed", captured_amount: 80 })
    })

    it("a capture the provider refuses: 200 failed, the authorization stands, payment.capture_failed", async () => {
      const auth = await authorize("4000000000000259")
      const refused = await tender.payments.capture({ order_id: auth.order_id })
      expect(refused.status).toBe("failed")
      expect((await readOrder(auth.order_id)).status).toBe("authorized")
      expect(await eventsOf(auth.order_id)).toEqual(["payment.authorized", "payment.capture_failed"])
      const voided = await tender.payments.void({ order_id: auth.order_id })
      expect(voided).toMatchObject({ status: "canceled", voided_amount: 100 })
    })

    it("multicapture not granted: the second capture fails with multicapture_not_supported", async () => {
      const auth = await authorize("4000000000000044")
      const first = await tender.payments.capture({ order_id: auth.order_id, amount: "10.00", final: false })
      expect(first.status).toBe("authorized")
      const second = await tender.payments.capture({ order_id: auth.order_id, amount: "10.00", final: false })
      expect(second.status).toBe("failed")
      expect((await readTransaction(second.transaction_id)).decline_code).toBe("multicapture_not_supported")
    })

    it("void with nothing captured → canceled, voided_amount the whole hold, payment.canceled; a repeated void is 409", async () => {
      const auth = await authorize("4242424242424242")
      const voided = await tender.payments.void({ order_id: auth.order_id })
      expect(voided).toMatchObject({ status: "canceled", voided_amount: 100 })
      expect(await eventsOf(auth.order_id)).toEqual(["payment.authorized", "payment.canceled"])
      await apiError(tender.payments.void({ order_id: auth.order_id }), 409, "payment_unexpected_state")
      expect((await readOrder(auth.order_id)).status).toBe("canceled")
    })

    it("void behind settled captures → completed, voided_amount the remainder, payment.succeeded", async () => {
      const auth = await authorize("4242424242424242")
      await tender.payments.capture({ order_id: auth.order_id, amount: "35.00", final: false })
      const voided = await tender.payments.void({ order_id: auth.order_id })
      expect(voided).toMatchObject({ status: "completed", voided_amount: 65, captured_amount: 35 })
      expect(await eventsOf(auth.order_id)).toEqual(["payment.authorized", "payment.partially_captured", "payment.succeeded"])
    })

    it("settling: an accepted capture settles later through the worker", async () => {
      const auth = await authorize("4000000000000341")
      const capture = await tender.payments.capture({ order_id: auth.order_id })
      expect(capture).toMatchObject({ status: "settling", captured_amount: 0 })
      // captures in flight count: nothing remains, and a void must wait for the settlement
      await apiError(tender.payments.capture({ order_id: auth.order_id, amount: "1.00" }), 409, "payment_unexpected_state")
      let order = (await readOrder(auth.order_id))
      for (let i = 0; i < 50 && order.status !== "succeeded"; i++) {
        await new Promise((r) => setTimeout(r, 200))
        order = (await readOrder(auth.order_id))
      }
      expect(order).toMatchObject({ status: "succeeded", captured_amount: 100 })
      expect(await eventsOf(auth.order_id)).toEqual(["payment.authorized", "payment.succeeded"])
    })

    it("a partial capture settling blocks a void (card_payment_in_progress) and counts against the remainder", async () => {
      const auth = await authorize("4000000000000341")
      await tender.payments.capture({ order_id: auth.order_id, amount: "70.00", final: false })
      await apiError(tender.payments.capture({ order_id: auth.order_id, amount: "40.00", final: false }), 400, "capture_amount_exceeds_remaining")
      await apiError(tender.payments.void({ order_id: auth.order_id }), 409, "card_payment_in_progress")
      // A final capture would close the authorization before the settling one lands on it.
      await apiError(tender.payments.capture({ order_id: auth.order_id, amount: "10.00" }), 409, "card_payment_in_progress")
      expect((await tender.payments.capture({ order_id: auth.order_id, amount: "10.00", final: false })).status).toBe("settling")
    })
  })

  describe("pre-flight errors", () => {
    const base = () => ({ amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("e"), payment_method: { code: "paypal" }, ...urls })

    it("merchant_reference_required (400)", async () => {
      const { merchant_reference: _, ...body } = base()
      expectError(await post("/v1/payments", body), 400, "merchant_reference_required")
    })

    it("country_required (400)", async () => {
      const { country: _, ...body } = base()
      expectError(await post("/v1/payments", body), 400, "country_required")
    })

    describe("spec, Handling rules: \"For `validation_failed`, `errors[]` lists the offending fields.\"", () => {
      const refused = async (body: Record<string, unknown>, status: number, code: string) => {
        const reply = await post("/v1/payments", body)
        expectError(reply, status, code)
        return (reply.json.errors ?? []).map((e: { field: string }) => e.field).sort()
      }

      it("a body of currency alone names every missing field in one answer", async () => {
        // The missing reference keeps its own code (merchant_reference_required); errors[] has the rest.
        expect(await refused({ currency: "USD" }, 400, "merchant_reference_required")).toEqual([
          "amount", "cancel_url", "country", "merchant_reference", "payment_method.code", "success_url"
        ])
      })

      it("validation_failed lists every offending field, not the first", async () => {
        const body = {
          ...base(),
          amount: "10.001",
          country: "ZZ",
          success_url: "ftp://merchant.example/ok",
          // A line break would split the 303's Location header; the URL parser would quietly drop it.
          cancel_url: "https://merchant.example/cancel\r\nSet-Cookie: session=stolen",
          customer: { email: "not-an-email", ip: "300.1.1.1" },
          processing_profile: "nope",
          capture_method: "sometimes"
        }
        expect(await refused(body, 400, "validation_failed")).toEqual([
          "amount", "cancel_url", "capture_method", "country", "customer.email", "customer.ip", "processing_profile", "success_url"
        ])
        expect(await refused({ ...base(), success_url: `https://merchant.example/${"a".repeat(2048)}` }, 400, "validation_failed")).toEqual(["success_url"])
      })

      it("precedence: merchant_reference_required, then country_required, then unknown_payment_method; errors[] always complete", async () => {
        const { merchant_reference: _r, country: _c, ...neither } = base()
        expect(await refused({ ...neither, payment_method: { code: "sofort" }, amount: "1.001" }, 400, "merchant_reference_required"))
          .toEqual(["amount", "country", "merchant_reference", "payment_method.code"])
        const { country: _, ...noCountry } = base()
        expect(await refused({ ...noCountry, payment_method: { code: "sofort" }, amount: "abc" }, 400, "country_required"))
          .toEqual(["amount", "country", "payment_method.code"])
        expect(await refused({ ...base(), payment_method: { code: "sofort" }, amount: "-1", cancel_url: "nope" }, 400, "unknown_payment_method"))
          .toEqual(["amount", "cancel_url", "payment_method.code"])
        // Alone, each dedicated code names just its own field.
        expect(await refused({ ...base(), payment_method: { code: "sofort" } }, 400, "unknown_payment_method")).toEqual(["payment_method.code"])
      })

      it("a method's own checks still run beside other errors; routing is judged only on a valid body", async () => {
        const pix = { ...base(), country: "BR", currency: "BRL", payment_method: { code: "pix" }, amount: "1.234" }
        expect(await refused(pix, 400, "validation_failed")).toEqual(["amount", "customer.ip", "payment_method.details.document_id"])
        // ideal cannot route to US / USD, but the bad amount is what the merchant must hear about.
        expect(await refused({ ...base(), payment_method: { code: "ideal" }, amount: "0.001" }, 400, "validation_failed")).toEqual(["amount"])
      })

      it("wrong JSON types are refused by the schema, every one of them", async () => {
        expect(await refused({ ...base(), amount: 10, currency: 840, payment_method: { code: 7 } }, 400, "validation_failed"))
          .toEqual(["amount", "currency", "payment_method.code"])
      })
    })

    it("duplicate_merchant_reference_id (409) for any repeat, whatever its body", async () => {
      const body = base()
      expect((await post("/v1/payments", body)).status).toBe(200)
      expectError(await post("/v1/payments", { ...body, amount: "99.00" }), 409, "duplicate_merchant_reference_id")
      // even a body that would fail validation: the first create was accepted
      expectError(await post("/v1/payments", { merchant_reference: body.merchant_reference, amount: "ten" }), 409, "duplicate_merchant_reference_id")
      const recovered = await get(`/v1/orders/by-reference/${encodeURIComponent(body.merchant_reference)}`)
      expect(recovered.json).toMatchObject({ merchant_reference: body.merchant_reference, amount: 10, subtype: "direct_payment" })
    })

    it("contract.md, Idempotency: \"A direct payment … whose reference is already used by any order or session → 409 duplicate_merchant_reference_id, whatever its body … a session whose reference is used by a direct payment or transfer → 409 likewise\"", async () => {
      const session = await post("/v1/checkout/sessions", { amount: "30.00", currency: "USD", merchant_reference: ref("session"), ...urls })
      expect(session.status).toBe(201)
      const held = session.json.merchant_reference
      expectError(await post("/v1/payments", { ...base(), merchant_reference: held }), 409, "duplicate_merchant_reference_id")
      expectError(await post("/v1/payments", { merchant_reference: held, amount: "ten" }), 409, "duplicate_merchant_reference_id")
      // Ended, the session's reference is still the sessions': only another session may reuse it.
      expect((await post(`/v1/checkout/sessions/${session.json.id}/cancel`, {})).status).toBe(200)
      expectError(await post("/v1/payments", { ...base(), merchant_reference: held }), 409, "duplicate_merchant_reference_id")
      expect((await post("/v1/checkout/sessions", { amount: "31.00", currency: "USD", merchant_reference: held, ...urls })).status).toBe(201)

      const body = base()
      expect((await post("/v1/payments", body)).status).toBe(200)
      expectError(await post("/v1/checkout/sessions", { amount: "30.00", currency: "USD", merchant_reference: body.merchant_reference, ...urls }), 409, "duplicate_merchant_reference_id")
      expectError(await post("/v1/checkout/sessions", { merchant_reference: body.merchant_reference }), 409, "duplicate_merchant_reference_id")
      expect((await post("/v1/checkout/sessions/search", { merchant_reference: body.merchant_reference })).json.data).toEqual([])
      expect((await get(`/v1/orders/by-reference/${encodeURIComponent(body.merchant_reference)}`)).json).toMatchObject({ subtype: "direct_payment" })
    })

    it("unknown_payment_method (400) and payment_unroutable (404)", async () => {
      expectError(await post("/v1/payments", { ...base(), payment_method: { code: "sofort" } }), 400, "unknown_payment_method")
      expectError(await post("/v1/payments", { ...base(), payment_method: { code: "ideal" } }), 404, "payment_unroutable")
      expectError(await post("/v1/payments", { ...base(), currency: "EUR", payment_method: { code: "crypto" }, country: "US", amount: "1.00" }).then(() => post("/v1/payments", { ...base(), currency: "GBP", payment_method: { code: "crypto" } })), 404, "payment_unroutable")
    })

    it("validation_failed (400): amount decimals, currency, document, customer.ip, return URLs, processing profile", async () => {
      const fields = async (body: Record<string, unknown>) => {
        const reply = await post("/v1/payments", body)
        expectError(reply, 400, "validation_failed")
        return reply.json.errors.map((e: { field: string }) => e.field).sort()
      }
      expect(await fields({ ...base(), amount: "10.001" })).toEqual(["amount"])
      expect(await fields({ ...base(), currency: "CLP", country: "CL", amount: "10.5", payment_method: { code: "mach" } })).toEqual(["amount"])
      expect(await fields({ ...base(), amount: 10 })).toEqual(["amount"])
      expect(await fields({ ...base(), currency: "XYZ" })).toEqual(["currency"])
      expect(await fields({ ...base(), country: "BR", currency: "BRL", payment_method: { code: "pix", details: { document_id: "123" } } })).toEqual(["customer.ip", "payment_method.details.document_id"])
      expect(await fields({ ...base(), country: "BR", currency: "BRL", payment_method: { code: "boleto", details: { document_id: "123.456.789-09" } }, customer: { ip: "not-an-ip" } })).toEqual(["customer.ip"])
      const { success_url: _s, cancel_url: _c, ...noUrls } = base()
      expect(await fields(noUrls)).toEqual(["cancel_url", "success_url"])
      expect(await fields({ ...base(), success_url: "javascript:alert(1)" })).toEqual(["success_url"])
      expect(await fields({ ...base(), processing_profile: "nope" })).toEqual(["processing_profile"])
      expect(await fields({ ...base(), capture_method: "manual" })).toEqual(["capture_method"])
    })

    it("processing profile: active is echoed on the payment and its transactions; disabled is refused", async () => {
      await Effect.runPromise(server.accounts.addProfile(merchant.account_id, "brand-a", "Brand A"))
      const reply = await charge("4242424242424242", { processing_profile: "brand-a" })
      expect(reply.processing_profile).toBe("brand-a")
      expect((await readTransaction(reply.transaction_id)).processing_profile).toBe("brand-a")
      expect((await readOrder(reply.order_id)).processing_profile).toBe("brand-a")
      await Effect.runPromise(server.accounts.disableProfile(merchant.account_id, "brand-a"))
      await apiError(charge("4242424242424242", { processing_profile: "brand-a" }), 400, "validation_failed")
    })

    it("payment_method_not_found (404) for a card token the account does not hold", async () => {
      const body = { amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("tok"), collect_cvv: false, payment_method: { code: "card", details: { card_token: "tok_doesnotexist00000000" } } }
      expectError(await post("/v1/payments", body), 404, "payment_method_not_found")
    })

    it("capture pre-flight: exactly one identifier, amounts, states, non-card payments", async () => {
      const auth = await authorize("4242424242424242")
      expectError(await post("/v1/payments/capture", {}), 400, "validation_failed")
      await apiError(tender.payments.capture({ order_id: auth.order_id, transaction_id: auth.transaction_id }), 400, "validation_failed")
      await apiError(tender.payments.capture({ order_id: auth.order_id, amount: "100.01" }), 400, "capture_amount_exceeds_authorized")
      await apiError(tender.payments.capture({ order_id: auth.order_id, amount: "0" }), 400, "capture_amount_exceeds_authorized")
      const part = await tender.payments.capture({ order_id: auth.order_id, amount: "60.00", final: false })
      await apiError(tender.payments.capture({ order_id: auth.order_id, amount: "40.01" }), 400, "capture_amount_exceeds_remaining")
      await apiError(tender.payments.capture({ transaction_id: part.transaction_id }), 400, "invalid_transaction_status")
      await apiError(tender.payments.capture({ order_id: "ord_doesnotexist0000000000" }), 404, "order_not_found")
      await apiError(tender.payments.capture({ transaction_id: "txn_doesnotexist0000000000" }), 404, "transaction_not_found")
      const automatic = await charge("4242424242424242")
      await apiError(tender.payments.capture({ order_id: automatic.order_id }), 409, "payment_unexpected_state")
      const paypal = await tender.payments.create(base())
      await apiError(tender.payments.void({ order_id: paypal.order_id }), 409, "payment_unexpected_state")
    })
  })

  describe("reads and search", () => {
    it("another account's ids are 404, never its data", async () => {
      const other = await Effect.runPromise(server.accounts.create({ name: "other", mode: "test" }))
      const theirs = typedClient(server, other)
      const mine = await charge("4242424242424242")
      await apiError(theirs.orders.get({ params: { id: mine.order_id } }), 404, "order_not_found")
      await apiError(theirs.transactions.get({ params: { id: mine.transaction_id } }), 404, "transaction_not_found")
      const byRef = await readOrder(mine.order_id)
      await apiError(theirs.orders.byReference({ params: { merchant_reference: byRef.merchant_reference } }), 404, "order_not_found")
      await apiError(theirs.payments.capture({ order_id: mine.order_id }), 404, "order_not_found")
    })

    it("invalid_parameter (400) for a malformed id", async () => {
      expectError(await get("/v1/orders/not-an-order-id"), 400, "invalid_parameter")
    })

    it("searches orders and transactions with filters and cursor pagination, newest first", async () => {
      const acct = await Effect.runPromise(server.accounts.create({ name: "searcher", mode: "test" }))
      const token = (await post("/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 1, exp_year: 2031, cvc: "123" }, acct)).json.token
      const declined = (await post("/v1/test_helpers/card_tokens", { number: "4000000000000002", exp_month: 1, exp_year: 2031, cvc: "123" }, acct)).json.token
      const created: Array<string> = []
      for (let i = 0; i < 5; i++) {
        const r = await post("/v1/payments", { amount: `${i + 1}.00`, currency: "USD", country: "US", merchant_reference: `s-${i}`, collect_cvv: false, payment_method: { code: "card", details: { card_token: i === 2 ? declined : token } } }, acct)
        created.push(r.json.order_id)
      }
      const first = await post("/v1/orders/search", { limit: 2 }, acct)
      expect(first.json.data.map((o: { id: string }) => o.id)).toEqual([created[4], created[3]])
      expect(first.json.has_more).toBe(true)
      const second = await post("/v1/orders/search", { limit: 2, cursor: first.json.next_cursor }, acct)
      expect(second.json.data.map((o: { id: string }) => o.id)).toEqual([created[2], created[1]])
      const third = await post("/v1/orders/search", { limit: 2, cursor: second.json.next_cursor }, acct)
      expect(third.json).toMatchObject({ has_more: false, next_cursor: null })
      expect(third.json.data.map((o: { id: string }) => o.id)).toEqual([created[0]])
      const failed = await post("/v1/orders/search", { status: ["failed"] }, acct)
      expect(failed.json.data.map((o: { id: string }) => o.id)).toEqual([created[2]])
      const byRef = await post("/v1/transactions/search", { merchant_reference: "s-3" }, acct)
      expect(byRef.json.data).toHaveLength(1)
      expect(byRef.json.data[0]).toMatchObject({ order_id: created[3], subtype: "direct_payment", status: "completed" })
      const future = await post("/v1/transactions/search", { created_from: new Date(Date.now() + 60_000).toISOString() }, acct)
      expect(future.json.data).toEqual([])
      expectError(await post("/v1/orders/search", { limit: 101 }, acct), 400, "validation_failed")
      // A date JavaScript reads but PostgreSQL's timestamptz cannot hold.
      const farFuture = await post("/v1/orders/search", { created_from: "+010000-01-01T00:00:00Z" }, acct)
      expectError(farFuture, 400, "validation_failed")
      expect(farFuture.json.errors).toEqual([{ field: "created_from", message: "must be between 1970-01-01 and 9999-12-31" }])
      expectError(await post("/v1/orders/search", { cursor: "garbage" }, acct), 400, "validation_failed")
    })
  })

  describe("asynchronous outcomes", () => {
    const pay = (code: string, country: string, currency: string, details: Record<string, unknown> = {}, customer: Record<string, unknown> = {}) =>
      post("/v1/payments", { amount: "30.00", currency, country, merchant_reference: ref(code), payment_method: { code, details }, customer, ...urls })

    it("simulate succeed on a pix payment settles it: payment.succeeded, no instrument (not a stored instrument)", async () => {
      const created = await pay("pix", "BR", "BRL", { document_id: "12345678909" }, { ip: "200.1.2.3" })
      const order = await post(`/v1/test_helpers/orders/${created.json.order_id}/simulate`, { outcome: "succeed" })
      expect(order.json.status).toBe("succeeded")
      expect(order.json.payment_instrument).toBeUndefined()
      expect(await eventsOf(created.json.order_id)).toEqual(["payment.requires_action", "payment.succeeded"])
      expectError(await post(`/v1/test_helpers/orders/${created.json.order_id}/simulate`, { outcome: "fail" }), 409, "payment_unexpected_state")
    })

    it("simulate fail and expire", async () => {
      const failed = await pay("paypal", "US", "USD")
      expect((await post(`/v1/test_helpers/orders/${failed.json.order_id}/simulate`, { outcome: "fail" })).json.status).toBe("failed")
      const expired = await pay("oxxo", "MX", "MXN", { document_id: "GODE561231HDFRRN09" }, { ip: "187.1.2.3" })
      expect((await post(`/v1/test_helpers/orders/${expired.json.order_id}/simulate`, { outcome: "expire" })).json.status).toBe("canceled")
      expect(await eventsOf(expired.json.order_id)).toEqual(["payment.requires_action", "payment.failed"])
    })

    it("crypto underpayment: processing until the merchant decides; accept settles, decline returns", async () => {
      const under = await pay("crypto", "US", "USD")
      const waiting = await post(`/v1/test_helpers/orders/${under.json.order_id}/simulate`, { outcome: "underpay", amount: "20.00" })
      expect(waiting.json.status).toBe("processing")
      // Only the merchant's decision moves an order awaiting it: no later outcome overrides it.
      for (const outcome of [{ outcome: "underpay", amount: "10.00" }, { outcome: "succeed" }, { outcome: "fail" }, { outcome: "expire" }]) {
        expectError(await post(`/v1/test_helpers/orders/${under.json.order_id}/simulate`, outcome), 409, "payment_unexpected_state")
      }
      expectError(await post(`/v1/orders/${under.json.order_id}/amount_mismatch_decision`, { decision: "decline" }), 400, "amount_mismatch_decision_invalid")
      const accepted = await post(`/v1/orders/${under.json.order_id}/amount_mismatch_decision`, { decision: "accept" })
      expect(accepted.json.status).toBe("succeeded")
      expect((await post(`/v1/orders/${under.json.order_id}/amount_mismatch_decision`, { decision: "accept" })).json.status).toBe("succeeded")
      expectError(await post(`/v1/orders/${under.json.order_id}/amount_mismatch_decision`, { decision: "decline", refund_destination: { address: "bc1qxyz" } }), 409, "amount_mismatch_decision_conflict")
      expect(await eventsOf(under.json.order_id)).toEqual(["payment.requires_action", "payment.underpaid", "payment.succeeded"])

      const over = await pay("crypto", "US", "USD")
      await post(`/v1/test_helpers/orders/${over.json.order_id}/simulate`, { outcome: "overpay", amount: "45.00" })
      const returned = await post(`/v1/orders/${over.json.order_id}/amount_mismatch_decision`, { decision: "decline", refund_destination: { address: "bc1qrefund" } })
      expect(returned.json.status).toBe("returned")
      expect(await eventsOf(over.json.order_id)).toEqual(["payment.requires_action", "payment.overpaid", "payment.returned"])
      const txn = await get(`/v1/transactions/${over.json.transaction_id}`)
      expect(txn.json.status).toBe("returned")
    })

    it("collect_card: simulate succeed acts as the customer entering an approved card", async () => {
      const created = await post("/v1/payments", { amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("cc"), payment_method: { code: "card" }, ...urls })
      const order = await post(`/v1/test_helpers/orders/${created.json.order_id}/simulate`, { outcome: "succeed" })
      expect(order.json.status).toBe("succeeded")
    })

    it("test helpers are refused to live accounts (403 forbidden)", async () => {
      const live = await Effect.runPromise(server.accounts.create({ name: "live", mode: "live" }))
      expectError(await post("/v1/test_helpers/orders/ord_whatever00000000000/simulate", { outcome: "succeed" }, live), 403, "forbidden")
    })
  })

  describe("hosted sandbox pages (the customer's browser)", () => {
    const form = (url: string, outcome: string) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `outcome=${outcome}`, redirect: "manual" })

    it("redirect page: shows the payment; Succeed settles it and sends the customer to success_url", async () => {
      const created = await post("/v1/payments", { amount: "42.50", currency: "EUR", country: "NL", merchant_reference: ref("page"), payment_method: { code: "ideal" }, ...urls })
      const page = await fetch(created.json.next_action.redirect_url)
      expect(page.status).toBe(200)
      const html = await page.text()
      expect(html).toContain("Tender sandbox")
      expect(html).toContain("42.50")
      const submitted = await form(created.json.next_action.redirect_url, "succeed")
      expect(submitted.status).toBe(303)
      expect(submitted.headers.get("location")).toBe(urls.success_url)
      expect((await get(`/v1/orders/${created.json.order_id}`)).json.status).toBe("succeeded")
      // the page now shows the outcome, not the buttons; a second submission changes nothing
      expect(await (await fetch(created.json.next_action.redirect_url)).text()).not.toContain('name="outcome"')
      expect((await form(created.json.next_action.redirect_url, "fail")).status).toBeGreaterThanOrEqual(400)
      expect((await get(`/v1/orders/${created.json.order_id}`)).json.status).toBe("succeeded")
    })

    it("redirect page: Cancel sends the customer to cancel_url", async () => {
      const created = await post("/v1/payments", { amount: "5.00", currency: "USD", country: "US", merchant_reference: ref("cancel"), payment_method: { code: "paypal" }, ...urls })
      const submitted = await form(created.json.next_action.redirect_url, "cancel")
      expect(submitted.headers.get("location")).toBe(urls.cancel_url)
      expect((await get(`/v1/orders/${created.json.order_id}`)).json.status).toBe("canceled")
    })

    it("3-D Secure page: Approve, then 3ds/complete authorizes", async () => {
      const token = await tokenize("4000000000003220")
      const created = await post("/v1/payments", { amount: "40.00", currency: "USD", country: "US", capture_method: "manual", merchant_reference: ref("3ds-page"), collect_cvv: false, payment_method: { code: "card", details: { card_token: token } } })
      expect((await fetch(created.json.next_action.redirect_url)).status).toBe(200)
      await form(created.json.next_action.redirect_url, "approve")
      const done = await post(`/v1/payments/${created.json.order_id}/3ds/complete`, {})
      expect(done.json.status).toBe("authorized")
      expect(await eventsOf(created.json.order_id)).toEqual(["payment.requires_action", "payment.authorized"])
    })

    it("voucher page and QR image", async () => {
      const boleto = await post("/v1/payments", { amount: "80.00", currency: "BRL", country: "BR", merchant_reference: ref("voucher"), payment_method: { code: "boleto", details: { document_id: "12345678909" } }, customer: { ip: "200.1.2.3" }, ...urls })
      const voucher = await fetch(boleto.json.next_action.voucher.document_url)
      expect(await voucher.text()).toContain(boleto.json.next_action.voucher.barcode.slice(0, 10))
      await form(boleto.json.next_action.voucher.document_url, "succeed")
      expect((await get(`/v1/orders/${boleto.json.order_id}`)).json.status).toBe("succeeded")
      const pix = await post("/v1/payments", { amount: "80.00", currency: "BRL", country: "BR", merchant_reference: ref("qr"), payment_method: { code: "pix", details: { document_id: "12345678909" } }, customer: { ip: "200.1.2.3" }, ...urls })
      const image = await fetch(pix.json.next_action.qr.image_url)
      expect(image.status).toBe(200)
      expect(image.headers.get("content-type")).toContain("image/svg+xml")
      expect(await image.text()).toContain("<svg")
    })

    it("an unknown page is a 404; a wrong method on a page is a 405", async () => {
      expect((await fetch(`${server.baseUrl}/sandbox/redirect/txn_unknown000000000000`)).status).toBe(404)
      expect((await fetch(`${server.baseUrl}/sandbox/redirect/txn_unknown000000000000`, { method: "DELETE" })).status).toBe(405)
    })
  })

  it("live accounts: no live provider is configured, so payments are unroutable rather than sent to the sandbox", async () => {
    const live = await Effect.runPromise(server.accounts.create({ name: "live-payments", mode: "live" }))
    const reply = await post("/v1/payments", { amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("live"), payment_method: { code: "paypal" }, ...urls }, live)
    expectError(reply, 404, "payment_unroutable")
  })
}
