/**
 * Customers, card-storage consent and the payment-instrument model over real HTTP: contract.md
 * "Customers", the spec's `customer_not_found` and `consent_conflict`, and the spec's "Payment
 * instrument" section (its fields, and every bullet of "Where payment_instrument is set").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TenderConfig } from "@tender/adapters/Config"
import { Effect } from "effect"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, type Reply, send } from "@tender/client/Testing"
import { apiError, type BodyOf, type TenderPromiseClient, typedClient } from "./support/Typed.ts"

export const customersSuite = (storage: Pick<TenderConfig, "storage" | "dataDir">) => {
  let server: TestServer
  let merchant: Credentials & { account_id: string }
  let other: Credentials & { account_id: string }
  /** The two accounts' typed clients: well-formed calls (raw `post`/`get` for what is malformed on purpose). */
  let tender: TenderPromiseClient
  let theirs: TenderPromiseClient
  let seq = 0

  const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
  const post = (path: string, body: unknown, creds: Credentials = merchant) => send(server, creds, "POST", path, { body: JSON.stringify(body) })
  const get = (path: string, creds: Credentials = merchant) => send(server, creds, "GET", path)
  const expectError = (reply: Reply, status: number, code: string) => {
    expect({ status: reply.status, code: reply.json?.code }).toEqual({ status, code })
    expect(reply.json.request_id).toMatch(/^req_/)
  }
  const fieldsOf = (reply: Reply) => reply.json.errors.map((e: { field: string }) => e.field).sort()
  const events = (orderId: string) => Effect.runPromise(server.events(orderId))

  const tokenize = async (number: string, holder_name: string | null = "Ada Lovelace") =>
    (await tender.testHelpers.createCardToken({ number, exp_month: 12, exp_year: 2035, cvc: number.startsWith("37") ? "1234" : "123", ...(holder_name !== null ? { holder_name } : {}) })).token

  const payment = (token: string, extra: Record<string, unknown> = {}, details: Record<string, unknown> = {}) =>
    post("/v1/payments", {
      amount: "25.00",
      currency: "USD",
      country: "US",
      merchant_reference: ref("pay"),
      payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" }, ...details } },
      ...extra
    })

  const redirect = (extra: Record<string, unknown> = {}) =>
    post("/v1/payments", {
      amount: "25.00",
      currency: "USD",
      country: "US",
      merchant_reference: ref("paypal"),
      payment_method: { code: "paypal" },
      success_url: "https://shop.example/ok",
      cancel_url: "https://shop.example/cancel",
      ...extra
    })

  const newCustomer = async (body: BodyOf<"customers", "create"> = { email: "grace@example.com", name: "Grace Hopper", phone: "+1 212 555 0100" }, client: TenderPromiseClient = tender) =>
    (await client.customers.create(body)).id

  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, storage)
    merchant = await Effect.runPromise(server.accounts.create({ name: "customers", mode: "test" }))
    other = await Effect.runPromise(server.accounts.create({ name: "someone else", mode: "test" }))
    tender = typedClient(server, merchant)
    theirs = typedClient(server, other)
  })
  afterAll(() => server.close())

  describe("customers (contract.md: POST /v1/customers {email?, name?, phone?}, GET /v1/customers/{id})", () => {
    it("creates a cus_ record (201) and reads it back (200)", async () => {
      const created = await tender.customers.create({ email: "ada@example.com", name: "Ada Lovelace", phone: "+44 20 7946 0958" })
      expect(created).toEqual({
        id: expect.stringMatching(/^cus_/),
        email: "ada@example.com",
        name: "Ada Lovelace",
        phone: "+44 20 7946 0958",
        livemode: false,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/)
      })
      expect(await tender.customers.get({ params: { id: created.id } })).toEqual(created)
    })

    it("every field is optional; fields with no value are null", async () => {
      const created = await tender.customers.create({})
      expect(created).toMatchObject({ email: null, name: null, phone: null })
      expect(await tender.customers.get({ params: { id: created.id } })).toEqual(created)
    })

    it("spec, Handling rules: validation_failed lists every offending field; nothing is created", async () => {
      const bad = await post("/v1/customers", { email: "not-an-email", name: "   ", phone: "call me" })
      expectError(bad, 400, "validation_failed")
      expect(fieldsOf(bad)).toEqual(["email", "name", "phone"])
      // Bounds are checked with the JSON shape, before the rules above (docs/decisions.md, Input bounds).
      const long = await post("/v1/customers", { email: "x".repeat(255), name: "x".repeat(256), phone: "1".repeat(33) })
      expectError(long, 400, "validation_failed")
      expect(fieldsOf(long)).toEqual(["email", "name", "phone"])
      expectError(await post("/v1/customers", { email: `${"a".repeat(250)}@example.com` }), 400, "validation_failed")
      expectError(await post("/v1/customers", { name: "   " }), 400, "validation_failed")
      const wrongType = await post("/v1/customers", { email: 42, phone: true })
      expectError(wrongType, 400, "validation_failed")
      expect(fieldsOf(wrongType)).toEqual(["email", "phone"])
    })

    it("spec, no 500 for what a client can send: a NUL character in any text is validation_failed (PostgreSQL text cannot hold it)", async () => {
      const reply = await post("/v1/customers", { name: "Ada\u0000Lovelace" })
      expectError(reply, 400, "validation_failed")
      expect(reply.json.errors).toEqual([{ field: "name", message: expect.any(String) }])
      expectError(await post("/v1/refunds", { order_id: "ord_x", reason: "r\u0000" }), 400, "validation_failed")
      expectError(await post("/v1/transfers", { payment_method: { code: "paypal", details: { holder_name: "\u0000" } } }), 400, "validation_failed")
      expectError(await get("/v1/orders/by-reference/ref%00erence"), 400, "invalid_parameter")
    })

    it("spec, customer_not_found (404): unknown ids and another account's customers", async () => {
      await apiError(tender.customers.get({ params: { id: "cus_doesnotexist0000" } }), 404, "customer_not_found")
      const their = await newCustomer({ email: "theirs@example.com" }, theirs)
      await apiError(tender.customers.get({ params: { id: their } }), 404, "customer_not_found")
      expect(await theirs.customers.get({ params: { id: their } })).toMatchObject({ id: their, email: "theirs@example.com" })
      // decisions.md: ids in URLs must be well-formed
      expectError(await get("/v1/customers/ord_notacustomer000"), 400, "invalid_parameter")
    })
  })

  describe("a payment names its customer and card-storage consent", () => {
    it("customer_id and card_storage_consent are stored on the order and echoed on GET /v1/orders/{id}", async () => {
      const customer = await newCustomer()
      const created = await payment(await tokenize("4242424242424242"), {
        customer_id: customer,
        card_storage_consent: { granted: true, usage: "recurring" }
      })
      expect(created.json.status).toBe("completed")
      const order = await get(`/v1/orders/${created.json.order_id}`)
      expect(order.json).toMatchObject({ customer_id: customer, card_storage_consent: { granted: true, usage: "recurring" } })
      const plain = await get(`/v1/orders/${(await payment(await tokenize("4242424242424242"))).json.order_id}`)
      expect(plain.json.customer_id).toBeUndefined()
      expect(plain.json.card_storage_consent).toBeUndefined()
    })

    it("spec, customer_not_found: an unknown or another account's customer_id is 404 before anything is written", async () => {
      const token = await tokenize("4242424242424242")
      const their = await newCustomer({ name: "Theirs" }, theirs)
      for (const customer_id of ["cus_doesnotexist0000", their]) {
        const merchant_reference = ref("nocustomer")
        expectError(await payment(token, { customer_id, merchant_reference }), 404, "customer_not_found")
        expectError(await get(`/v1/orders/by-reference/${merchant_reference}`), 404, "order_not_found")
        // The reference was not claimed: the same one goes through with a valid body.
        expect((await payment(token, { merchant_reference })).json.status).toBe("completed")
      }
    })

    it("a malformed consent is validation_failed naming its fields", async () => {
      const bad = await payment(await tokenize("4242424242424242"), { card_storage_consent: { granted: "yes", usage: "forever" } })
      expectError(bad, 400, "validation_failed")
      expect(fieldsOf(bad)).toEqual(["card_storage_consent.granted", "card_storage_consent.usage"])
    })
  })

  describe("spec, consent_conflict (409): a different consent for a payment that has one; an identical one is safe", () => {
    const assert = (orderId: string, body: unknown, creds: Credentials = merchant) => post(`/v1/payments/${orderId}/card_storage_consent`, body, creds)

    it("none yet → stored; identical → 200 unchanged; different → 409 and nothing changes", async () => {
      const customer = await newCustomer()
      const { order_id } = (await payment(await tokenize("4242424242424242"), { customer_id: customer })).json
      const first = await assert(order_id, { granted: true, usage: "one_click" })
      expect(first.status).toBe(200)
      expect(first.json).toEqual({ order_id, customer_id: customer, card_storage_consent: { granted: true, usage: "one_click" } })
      const updatedAt = (await tender.orders.get({ params: { id: order_id } })).updated_at
      const again = await assert(order_id, { granted: true, usage: "one_click" })
      expect(again.status).toBe(200)
      expect(again.json).toEqual(first.json)
      for (const different of [{ granted: true, usage: "recurring" }, { granted: true }, { granted: false, usage: "one_click" }]) {
        expectError(await assert(order_id, different), 409, "consent_conflict")
      }
      const order = await get(`/v1/orders/${order_id}`)
      expect(order.json).toMatchObject({ card_storage_consent: { granted: true, usage: "one_click" }, updated_at: updatedAt })
    })

    it("a consent given on create is the one held; a payment without a customer answers customer_id null", async () => {
      const { order_id } = (await payment(await tokenize("4242424242424242"), { card_storage_consent: { granted: false } })).json
      expect((await assert(order_id, { granted: false })).json).toEqual({ order_id, customer_id: null, card_storage_consent: { granted: false } })
      expectError(await assert(order_id, { granted: true }), 409, "consent_conflict")
    })

    it("two different assertions racing: one is stored, every other different one is 409", async () => {
      const { order_id } = (await redirect()).json
      const bodies = [0, 1, 2, 3, 4, 5].map((i) => ({ granted: true, usage: i % 2 === 0 ? "recurring" : "unscheduled" }))
      const replies = await Promise.all(bodies.map((body) => assert(order_id, body)))
      const stored = (await tender.orders.get({ params: { id: order_id } })).card_storage_consent!
      expect(["recurring", "unscheduled"]).toContain(stored.usage)
      replies.forEach((reply, i) => {
        if (bodies[i].usage === stored.usage) expect(reply.status).toBe(200)
        else expectError(reply, 409, "consent_conflict")
      })
    })

    it("refusals: unknown or another account's order 404, malformed id 400, malformed body 400", async () => {
      const { order_id } = (await redirect()).json
      expectError(await assert("ord_doesnotexist0000", { granted: true }), 404, "order_not_found")
      expectError(await assert(order_id, { granted: true }, other), 404, "order_not_found")
      expectError(await assert("not-an-order", { granted: true }), 400, "invalid_parameter")
      expectError(await assert(order_id, { usage: "recurring" }), 400, "validation_failed")
      expectError(await assert(order_id, { granted: true, usage: "sometimes" }), 400, "validation_failed")
      expect((await tender.orders.get({ params: { id: order_id } })).card_storage_consent).toBeUndefined()
    })
  })

  describe("spec, Payment instrument: card instruments of payments", () => {
    it("id (pi_), country_code from the issuer's BIN, issuer_name, holder fields; no card_product when unknown", async () => {
      const customer = await newCustomer({ email: "record@example.com", phone: "+1 212 555 0100" })
      const created = await payment(await tokenize("4242424242424242"), { customer_id: customer, customer: { email: "payer@example.com" } }, { document_id: "123.456.789-09" })
      const txn = await get(`/v1/transactions/${created.json.transaction_id}`)
      expect(txn.json.payment_instrument).toEqual({
        id: expect.stringMatching(/^pi_/),
        type: "card",
        country_code: "US",
        holder_name: "Ada Lovelace",
        // the payment's own customer first, the customer record for what it lacks
        holder_email: "payer@example.com",
        holder_phone: "+1 212 555 0100",
        document_id: "123.456.789-09",
        card_brand: "visa",
        last4_digits: "4242",
        bin: "42424242",
        card_funding: "credit",
        issuer_name: "tender sandbox bank"
      })
      expect((await tender.orders.get({ params: { id: created.json.order_id } })).payment_instrument).toEqual(txn.json.payment_instrument)
    })

    it("fields with no value are omitted: no holder name captured, no issuer country for BIN 400000…", async () => {
      const created = await payment(await tokenize("4000000000000002", null))
      const instrument = (await tender.transactions.get({ params: { id: created.json.transaction_id } })).payment_instrument
      expect(instrument).toEqual({ id: expect.stringMatching(/^pi_/), type: "card", card_brand: "visa", last4_digits: "0002", bin: "40000000", card_funding: "unknown" })
    })

    it("transactions: on every attempt that ran on a stored instrument, failed ones included; orders: none unless succeeded", async () => {
      const declined = await payment(await tokenize("4000000000009995"))
      expect(declined.json.status).toBe("failed")
      const txn = await get(`/v1/transactions/${declined.json.transaction_id}`)
      expect(txn.json).toMatchObject({ status: "failed", payment_instrument: { type: "card", last4_digits: "9995" } })
      const order = await get(`/v1/orders/${declined.json.order_id}`)
      expect(order.json.status).toBe("failed")
      expect(order.json.payment_instrument).toBeUndefined()
      // search: the same rules
      const txns = await post("/v1/transactions/search", { merchant_reference: order.json.merchant_reference })
      expect(txns.json.data.map((t: { payment_instrument?: unknown }) => t.payment_instrument)).toEqual([txn.json.payment_instrument])
      const orders = await post("/v1/orders/search", { merchant_reference: order.json.merchant_reference })
      expect(orders.json.data).toHaveLength(1)
      expect(orders.json.data[0].payment_instrument).toBeUndefined()
    })

    it("manual capture: one pi_ id for the order; the order carries it only once the final capture succeeded", async () => {
      const auth = await payment(await tokenize("5555555555554444"), { capture_method: "manual", amount: "100.00" })
      expect(auth.json.status).toBe("authorized")
      const authTxn = (await tender.transactions.get({ params: { id: auth.json.transaction_id } }))
      const instrument = authTxn.payment_instrument
      expect(instrument).toMatchObject({ id: expect.stringMatching(/^pi_/), card_brand: "mastercard" })
      expect((await tender.orders.get({ params: { id: auth.json.order_id } })).payment_instrument).toBeUndefined()
      const part = await post("/v1/payments/capture", { order_id: auth.json.order_id, amount: "30.00", final: false })
      expect((await tender.transactions.get({ params: { id: part.json.transaction_id } })).payment_instrument).toEqual(instrument)
      expect((await tender.orders.get({ params: { id: auth.json.order_id } }))).toMatchObject({ status: "authorized" })
      expect((await tender.orders.get({ params: { id: auth.json.order_id } })).payment_instrument).toBeUndefined()
      const last = await post("/v1/payments/capture", { order_id: auth.json.order_id })
      expect((await tender.transactions.get({ params: { id: last.json.transaction_id } })).payment_instrument).toEqual(instrument)
      expect((await tender.orders.get({ params: { id: auth.json.order_id } }))).toMatchObject({ status: "succeeded", payment_instrument: instrument })
      // Transaction webhooks: on the same transactions, at emission time.
      for (const event of await events(auth.json.order_id)) expect(event.data.payment_instrument).toEqual(instrument)
    })

    it("collect_cvv: the saved card's instrument on the attempt, on the order once it succeeded, and in its webhooks", async () => {
      const created = await post("/v1/payments", { amount: "12.00", currency: "USD", country: "US", merchant_reference: ref("cvv"), payment_method: { code: "card", details: { card_token: await tokenize("4242424242424242") } } })
      expect(created.json.next_action.type).toBe("collect_cvv")
      expect((await tender.orders.get({ params: { id: created.json.order_id } })).payment_instrument).toBeUndefined()
      const order = await post(`/v1/test_helpers/orders/${created.json.order_id}/simulate`, { outcome: "succeed" })
      expect(order.json.status).toBe("succeeded")
      const txn = (await tender.transactions.get({ params: { id: created.json.transaction_id } }))
      expect(txn.payment_instrument).toMatchObject({ id: expect.stringMatching(/^pi_/), last4_digits: "4242", country_code: "US" })
      expect(order.json.payment_instrument).toEqual(txn.payment_instrument)
      const recorded = await events(created.json.order_id)
      expect(recorded.map((e) => e.type)).toEqual(["payment.requires_action", "payment.succeeded"])
      for (const event of recorded) expect(event.data.payment_instrument).toEqual(txn.payment_instrument)
    })

    it("checkout attempts: a retry on the same card keeps the order's pi_ id, another card is another instrument", async () => {
      const session = await post("/v1/checkout/sessions", { amount: "30.00", currency: "USD", merchant_reference: ref("cs"), customer: { email: "shopper@example.com" }, success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" })
      expect(session.status).toBe(201)
      const declined = await tokenize("4000000000000002")
      const approved = await tokenize("4242424242424242")
      const attempt = (card_token: string) => post(`/v1/test_helpers/checkout/sessions/${session.json.id}/attempt`, { payment_method: { code: "card", details: { card_token } } })
      expect((await attempt(declined)).status).toBe(200)
      expect((await attempt(declined)).status).toBe(200)
      expect((await attempt(approved)).json.status).toBe("completed")
      const order = (await tender.orders.get({ params: { id: session.json.order_id } }))
      const txns = await Promise.all(order.transactions.map(async (id: string) => (await tender.transactions.get({ params: { id } }))))
      expect(txns.map((t) => t.status)).toEqual(["failed", "failed", "completed"])
      const [first, second, third] = txns.map((t) => t.payment_instrument)
      expect(first).toMatchObject({ id: expect.stringMatching(/^pi_/), last4_digits: "0002", holder_email: "shopper@example.com" })
      expect(second).toEqual(first)
      expect(third).toMatchObject({ id: expect.stringMatching(/^pi_/), last4_digits: "4242", country_code: "US", holder_email: "shopper@example.com" })
      expect(third!.id).not.toBe(first!.id)
      expect(order.payment_instrument).toEqual(third)
    })

    it("redirect methods carry no instrument: transactions, orders and webhooks alike (field absent)", async () => {
      const created = await redirect()
      const order = await post(`/v1/test_helpers/orders/${created.json.order_id}/simulate`, { outcome: "succeed" })
      expect(order.json.status).toBe("succeeded")
      expect("payment_instrument" in order.json).toBe(false)
      expect("payment_instrument" in (await tender.transactions.get({ params: { id: created.json.transaction_id } }))).toBe(false)
      const recorded = await events(created.json.order_id)
      expect(recorded.map((e) => e.type)).toEqual(["payment.requires_action", "payment.succeeded"])
      for (const event of recorded) expect("payment_instrument" in event.data).toBe(false)
    })
  })

  describe("spec: \"The token and the card expiry are never returned on an instrument\" (nor in any response, webhook or log)", () => {
    it("card flows leave no token, card number, expiry or CVC in responses, event payloads or the server's log", async () => {
      const number = "4000056655665556"
      const cvc = "739"
      const logged: Array<string> = []
      const originals = { stdout: process.stdout.write, stderr: process.stderr.write, log: console.log, error: console.error, warn: console.warn, info: console.info, debug: console.debug }
      const capture = (chunk: unknown) => logged.push(typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) ? chunk.toString("utf8") : String(chunk))
      process.stdout.write = ((chunk: unknown, ...rest: Array<any>) => (capture(chunk), originals.stdout.call(process.stdout, chunk as string, ...rest))) as typeof process.stdout.write
      process.stderr.write = ((chunk: unknown, ...rest: Array<any>) => (capture(chunk), originals.stderr.call(process.stderr, chunk as string, ...rest))) as typeof process.stderr.write
      for (const level of ["log", "error", "warn", "info", "debug"] as const) console[level] = (...args: Array<unknown>) => args.forEach(capture)

      const responses: Array<Reply> = []
      const orders: Array<string> = []
      const call = async (method: "GET" | "POST", path: string, body?: unknown) => {
        const reply = method === "GET" ? await get(path) : await post(path, body)
        responses.push(reply)
        return reply
      }
      try {
        // The card_tokens test helper answers with the token and expiry by contract.md; it is the only such answer.
        const tokenReply = await post("/v1/test_helpers/card_tokens", { number, exp_month: 11, exp_year: 2037, cvc, holder_name: "Ada Lovelace" })
        const token = tokenReply.json.token as string
        const declinedToken = (await post("/v1/test_helpers/card_tokens", { number: "4000000000000002", exp_month: 11, exp_year: 2037, cvc })).json.token as string
        const customer = await newCustomer()
        const base = { amount: "20.00", currency: "USD", country: "US", customer_id: customer, customer: { email: "leak@example.com" } }
        const mit = { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }

        const cvv = await call("POST", "/v1/payments", { ...base, merchant_reference: ref("leak-cvv"), payment_method: { code: "card", details: { card_token: token } } })
        await call("POST", `/v1/test_helpers/orders/${cvv.json.order_id}/simulate`, { outcome: "succeed" })
        const merchantInitiated = await call("POST", "/v1/payments", { ...base, merchant_reference: ref("leak-mit"), payment_method: mit, card_storage_consent: { granted: true, usage: "unscheduled" } })
        await call("POST", `/v1/payments/${merchantInitiated.json.order_id}/card_storage_consent`, { granted: true, usage: "unscheduled" })
        const manual = await call("POST", "/v1/payments", { ...base, merchant_reference: ref("leak-manual"), capture_method: "manual", payment_method: mit })
        await call("POST", "/v1/payments/capture", { order_id: manual.json.order_id, amount: "5.00", final: false })
        await call("POST", "/v1/payments/capture", { order_id: manual.json.order_id })
        const failed = await call("POST", "/v1/payments", { ...base, merchant_reference: ref("leak-failed"), payment_method: { ...mit, details: { ...mit.details, card_token: declinedToken } } })
        // A token the account does not hold is refused without being echoed.
        const foreign = (await post("/v1/test_helpers/card_tokens", { number, exp_month: 11, exp_year: 2037, cvc }, other)).json.token as string
        const refused = await call("POST", "/v1/payments", { ...base, merchant_reference: ref("leak-foreign"), payment_method: { ...mit, details: { ...mit.details, card_token: foreign } } })
        expectError(refused, 404, "payment_method_not_found")
        const session = await call("POST", "/v1/checkout/sessions", { amount: "20.00", currency: "USD", merchant_reference: ref("leak-cs"), success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" })
        await call("POST", `/v1/test_helpers/checkout/sessions/${session.json.id}/attempt`, { payment_method: { code: "card", details: { card_token: declinedToken } } })
        await call("POST", `/v1/test_helpers/checkout/sessions/${session.json.id}/attempt`, { payment_method: { code: "card", details: { card: { number, exp_month: 11, exp_year: 2037, cvc } } } })
        orders.push(cvv.json.order_id, merchantInitiated.json.order_id, manual.json.order_id, failed.json.order_id, session.json.order_id)
        for (const orderId of orders) {
          const order = await call("GET", `/v1/orders/${orderId}`)
          for (const txn of order.json.transactions) await call("GET", `/v1/transactions/${txn}`)
        }
        await call("POST", "/v1/transactions/search", { limit: 100 })
        await call("POST", "/v1/orders/search", { limit: 100 })
        await call("GET", `/v1/checkout/sessions/${session.json.id}`)

        // The flows ran as meant, so the scan below covers what they write.
        expect((await tender.orders.get({ params: { id: cvv.json.order_id } })).status).toBe("succeeded")
        expect((await tender.orders.get({ params: { id: manual.json.order_id } })).status).toBe("succeeded")
        expect((await tender.orders.get({ params: { id: failed.json.order_id } })).status).toBe("failed")
        expect((await get(`/v1/checkout/sessions/${session.json.id}`)).json.status).toBe("completed")

        const payloads = (await Promise.all(orders.map(events))).flat().map((e) => JSON.stringify(e))
        expect(payloads.length).toBeGreaterThanOrEqual(8)
        expect(payloads.some((p) => p.includes("\"payment_instrument\""))).toBe(true)
        const forbidden = [token, declinedToken, foreign, "tok_", number, "exp_month", "exp_year", "expiry", `"cvc"`, `"${cvc}"`]
        const scanned = [...responses.map((r) => r.text), ...payloads, logged.join("\n")]
        for (const text of scanned) {
          for (const needle of forbidden) expect(text, `found ${needle}`).not.toContain(needle)
        }
      } finally {
        process.stdout.write = originals.stdout
        process.stderr.write = originals.stderr
        for (const level of ["log", "error", "warn", "info", "debug"] as const) console[level] = originals[level]
      }
    })
  })
}
