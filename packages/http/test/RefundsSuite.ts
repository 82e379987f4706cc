/**
 * Refunds and payouts over real HTTP (spec, "Refunds, payouts, transfers and others" and the Errors
 * tables; contract.md, "Other endpoints…", "Sandbox", "Idempotency"): every target rule and error
 * code, the balances, the records as transactions of their order, the events, and the sandbox's
 * pending (card 0341) and unreachable (card 0119) paths.
 */
import { OrderRepo, StateMachine } from "@tender/domain"
import type { TenderConfig } from "@tender/adapters/Config"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, type Reply, send } from "@tender/client/Testing"
import { apiError, type BodyOf, type TenderPromiseClient, typedClient } from "./support/Typed.ts"

export const refundsSuite = (storage: Pick<TenderConfig, "storage" | "dataDir">) => {
  let server: TestServer
  let merchant: Credentials & { account_id: string }
  let other: Credentials & { account_id: string }
  /** The two accounts' typed clients: well-formed calls (raw `post`/`get` for the rest). */
  let tender: TenderPromiseClient
  let theirs: TenderPromiseClient
  let seq = 0

  const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
  const post = (path: string, body: unknown, creds: Credentials = merchant) => send(server, creds, "POST", path, { body: JSON.stringify(body) })
  const get = (path: string, creds: Credentials = merchant) => send(server, creds, "GET", path)

  const expectError = (reply: Reply, status: number, code: string) => {
    expect({ status: reply.status, code: reply.json?.code, message: reply.json?.message }).toMatchObject({ status, code })
    expect(reply.json.request_id).toMatch(/^req_/)
  }

  const tokenize = async (number: string) =>
    (await tender.testHelpers.createCardToken({ number, exp_month: 12, exp_year: 2035, cvc: "123", holder_name: "Ada Lovelace" })).token

  /** A merchant-initiated card charge of 25.00 USD (settles in the create itself). */
  const charge = async (number = "4242424242424242", extra: Partial<BodyOf<"payments", "create">> = {}) =>
    tender.payments.create({
      amount: "25.00",
      currency: "USD",
      country: "US",
      merchant_reference: ref("charge"),
      payment_method: { code: "card", details: { card_token: await tokenize(number), stored_credential: { initiator: "merchant", reason: "unscheduled" } } },
      ...extra
    })

  const authorize = (number = "4242424242424242") => charge(number, { capture_method: "manual", amount: "100.00" })

  const eventsOf = async (orderId: string) => (await Effect.runPromise(server.events(orderId))).filter((e) => !e.type.startsWith("payment."))

  /** Reads `path` until `done` holds, for at most 10 s (the settlement worker runs every second). */
  const poll = async (path: string, done: (json: any) => boolean) => {
    const deadline = Date.now() + 10_000
    let reply = await get(path)
    while (!done(reply.json) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200))
      reply = await get(path)
    }
    return reply.json
  }

  /** A payout refused over its allowance: 400 validation_failed naming amount. */
  const refusedAmount = (reply: Reply) => {
    expectError(reply, 400, "validation_failed")
    expect(reply.json.errors.map((e: { field: string }) => e.field)).toEqual(["amount"])
  }

  /**
   * An account of its own (an operator's daily limit counts every payout of the account): its card
   * charges (merchant-initiated, settled at once unless `extra` says otherwise) and payouts by order.
   */
  const ownAccount = async (name: string) => {
    const account = await Effect.runPromise(server.accounts.create({ name, mode: "test" }))
    const client = typedClient(server, account)
    const chargeOn = async (amount: string, currency = "USD", country = currency === "EUR" ? "DE" : "US", extra: Partial<BodyOf<"payments", "create">> = {}) =>
      client.payments.create({
        amount,
        currency,
        country,
        merchant_reference: ref(name),
        payment_method: {
          code: "card",
          details: {
            card_token: (await client.testHelpers.createCardToken({ number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).token,
            stored_credential: { initiator: "merchant", reason: "unscheduled" }
          }
        },
        ...extra
      })
    const payout = (orderId: string, amount: string) => send(server, account, "POST", "/v1/payouts", { body: JSON.stringify({ order_id: orderId, amount }) })
    return { account, chargeOn, payout }
  }

  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, storage)
    merchant = await Effect.runPromise(server.accounts.create({ name: "refunds", mode: "test" }))
    other = await Effect.runPromise(server.accounts.create({ name: "someone else", mode: "test" }))
    tender = typedClient(server, merchant)
    theirs = typedClient(server, other)
  })
  afterAll(() => server.close())

  describe("POST /v1/refunds", () => {
    it("contract.md: 201 {id re_…, transaction_id, order_id, original_transaction_id, amount, currency, status, created_at}; omitted amount refunds the balance", async () => {
      const paid = await charge()
      const reply = await tender.refunds.create({ order_id: paid.order_id, reason: "requested_by_customer" })
      expect(reply).toMatchObject({
        id: expect.stringMatching(/^re_/),
        transaction_id: expect.stringMatching(/^txn_/),
        order_id: paid.order_id,
        original_transaction_id: paid.transaction_id,
        amount: 25,
        currency: "USD",
        status: "succeeded",
        reason: "requested_by_customer",
        created_at: expect.any(String)
      })
      expect(reply).not.toHaveProperty("decline_code")
      expect((await tender.refunds.get({ params: { id: reply.id } }))).toEqual(reply)
    })

    it("contract.md: a refund is also a transaction of the order (subtype refund; kind refund, parent = original, the original's instrument), in reads and search; the order carries refunded_amount", async () => {
      const paid = await charge()
      const refund = (await tender.refunds.create({ order_id: paid.order_id, amount: "10.00" }))
      const original = (await tender.transactions.get({ params: { id: paid.transaction_id } }))
      const txn = (await tender.transactions.get({ params: { id: refund.transaction_id } }))
      expect(txn).toMatchObject({ subtype: "refund", kind: "refund", status: "completed", order_id: paid.order_id, parent_transaction_id: paid.transaction_id, amount: 10 })
      expect(original.subtype).toBe("direct_payment")
      expect(txn.payment_instrument).toEqual(original.payment_instrument)
      const found = (await tender.transactions.search({ merchant_reference: paid.merchant_reference }))
      expect(found.data.find((t: { id: string }) => t.id === refund.transaction_id)).toMatchObject({ subtype: "refund" })
      const order = (await tender.orders.get({ params: { id: paid.order_id } }))
      expect(order).toMatchObject({ status: "succeeded", refunded_amount: 10 })
      expect(order.transactions).toContain(refund.transaction_id)
    })

    it("events: refund.succeeded with the refund's view, the order's merchant_reference", async () => {
      const paid = await charge()
      const refund = (await tender.refunds.create({ order_id: paid.order_id, amount: "5.00", refund_reference: ref("rr") }))
      const events = await eventsOf(paid.order_id)
      expect(events.map((e) => e.type)).toEqual(["refund.succeeded"])
      expect(events[0]).toMatchObject({ livemode: false, order_id: paid.order_id })
      expect(events[0].data).toMatchObject({ ...refund, merchant_reference: paid.merchant_reference })
    })

    it("spec: not exceed the remaining refundable balance; partial refunds then the rest; then refund_already_fully_refunded (409)", async () => {
      const paid = await charge()
      expect((await tender.refunds.create({ order_id: paid.order_id, amount: "20.00" })).status).toBe("succeeded")
      await apiError(tender.refunds.create({ order_id: paid.order_id, amount: "5.01" }), 400, "refund_amount_exceeds_refundable")
      const rest = await tender.refunds.create({ transaction_id: paid.transaction_id })
      expect(rest).toMatchObject({ status: "succeeded", amount: 5 })
      await apiError(tender.refunds.create({ order_id: paid.order_id, amount: "1.00" }), 409, "refund_already_fully_refunded")
      await apiError(tender.refunds.create({ order_id: paid.order_id }), 409, "refund_already_fully_refunded")
      expect((await tender.orders.get({ params: { id: paid.order_id } })).refunded_amount).toBe(25)
    })

    it("by merchant_reference: the one order's settlement", async () => {
      const paid = await charge()
      expect((await tender.refunds.create({ merchant_reference: paid.merchant_reference, amount: "1.00" }))).toMatchObject({ status: "succeeded", original_transaction_id: paid.transaction_id })
    })

    describe("targets", () => {
      it("ambiguous_original_transaction_target (400): none, or more than one of order_id, transaction_id, merchant_reference", async () => {
        const paid = await charge()
        await apiError(tender.refunds.create({ amount: "1.00" }), 400, "ambiguous_original_transaction_target")
        await apiError(tender.refunds.create({ order_id: paid.order_id, transaction_id: paid.transaction_id }), 400, "ambiguous_original_transaction_target")
      })

      it("original_transaction_not_found (404): unknown ids and references, and another account's payment", async () => {
        const paid = await charge()
        await apiError(tender.refunds.create({ order_id: "ord_doesnotexist1" }), 404, "original_transaction_not_found")
        await apiError(tender.refunds.create({ transaction_id: "txn_doesnotexist1" }), 404, "original_transaction_not_found")
        await apiError(tender.refunds.create({ merchant_reference: ref("nobody") }), 404, "original_transaction_not_found")
        await apiError(theirs.refunds.create({ order_id: paid.order_id }), 404, "original_transaction_not_found")
        await apiError(theirs.refunds.create({ transaction_id: paid.transaction_id }), 404, "original_transaction_not_found")
      })

      it("contract.md, Idempotency: \"a session whose reference is used by a direct payment or transfer → 409\": the reference names the one payment, refunded by it", async () => {
        const paid = await charge()
        const session = await post("/v1/checkout/sessions", {
          amount: "30.00",
          currency: "USD",
          merchant_reference: paid.merchant_reference,
          success_url: "https://merchant.example/ok",
          cancel_url: "https://merchant.example/cancel"
        })
        expectError(session, 409, "duplicate_merchant_reference_id")
        expect(await tender.refunds.create({ merchant_reference: paid.merchant_reference, amount: "1.00" }))
          .toMatchObject({ status: "succeeded", order_id: paid.order_id, original_transaction_id: paid.transaction_id })
      })

      it("merchant_reference_ambiguous (409): sessions reused the reference (the first canceled, the second paid); by order_id it is refunded", async () => {
        const reference = ref("sessions")
        const session = (body: Record<string, unknown> = {}) =>
          post("/v1/checkout/sessions", {
            amount: "30.00",
            currency: "USD",
            merchant_reference: reference,
            success_url: "https://merchant.example/ok",
            cancel_url: "https://merchant.example/cancel",
            ...body
          })
        const first = await session()
        expect((await post(`/v1/checkout/sessions/${first.json.id}/cancel`, {})).status).toBe(200)
        const second = await session({ amount: "40.00" })
        expect(second.status).toBe(201)
        const paid = await post(`/v1/test_helpers/checkout/sessions/${second.json.id}/attempt`, {
          payment_method: { code: "card", details: { card_token: await tokenize("4242424242424242") } }
        })
        expect(paid.json).toMatchObject({ status: "completed" })
        await apiError(tender.refunds.create({ merchant_reference: reference }), 409, "merchant_reference_ambiguous")
        expect(await tender.refunds.create({ order_id: second.json.order_id })).toMatchObject({ status: "succeeded", amount: 40 })
      })

      it("spec: a payment captured in parts is refunded by the capture's transaction_id (refund_requires_transaction_target, 400)", async () => {
        const auth = await authorize()
        const first = (await tender.payments.capture({ order_id: auth.order_id, amount: "30.00", final: false }))
        await tender.payments.capture({ order_id: auth.order_id, amount: "20.00", final: false })
        await apiError(tender.refunds.create({ order_id: auth.order_id }), 400, "refund_requires_transaction_target")
        // The authorization's id (what the create answered) names the order's settlements as the order id does.
        await apiError(tender.refunds.create({ transaction_id: auth.transaction_id }), 400, "refund_requires_transaction_target")
        const refund = await tender.refunds.create({ transaction_id: first.transaction_id })
        expect(refund).toMatchObject({ status: "succeeded", amount: 30, original_transaction_id: first.transaction_id })
        // One capture's balance: the other capture's is its own.
        await apiError(tender.refunds.create({ transaction_id: first.transaction_id, amount: "0.01" }), 409, "refund_already_fully_refunded")
      })

      it("a payment captured once is refunded by its order: the capture is the settlement", async () => {
        const auth = await authorize()
        const captured = (await tender.payments.capture({ order_id: auth.order_id, amount: "40.00" }))
        const refund = await tender.refunds.create({ order_id: auth.order_id, amount: "15.00" })
        expect(refund).toMatchObject({ status: "succeeded", amount: 15, original_transaction_id: captured.transaction_id })
        // … and by the authorization's transaction_id, the id its create answered
        const byAuthorization = await tender.refunds.create({ transaction_id: auth.transaction_id })
        expect(byAuthorization).toMatchObject({ status: "succeeded", amount: 25, original_transaction_id: captured.transaction_id })
      })

      it("contract.md, Sandbox: refunds succeed at once for local methods too (a redirect, a QR payment)", async () => {
        for (const [code, country, currency] of [["paypal", "US", "USD"], ["pix", "BR", "BRL"]] as const) {
          const created = (await post("/v1/payments", {
            amount: "10.00", currency, country, merchant_reference: ref(code), payment_method: { code, details: { document_id: "123.456.789-09" } },
            customer: { ip: "203.0.113.7" }, success_url: "https://merchant.example/ok", cancel_url: "https://merchant.example/cancel"
          })).json
          expect((await tender.testHelpers.simulate({ params: { order_id: created.order_id }, payload: { outcome: "succeed" } })).status).toBe("succeeded")
          const refund = await tender.refunds.create({ order_id: created.order_id, amount: "4.00" })
          expect(refund, code).toMatchObject({ status: "succeeded", amount: 4, currency })
        }
      })

      /** A crypto payment of `amount` whose mismatch (`received` arrived) the merchant accepted. */
      const acceptedMismatch = async (amount: string, outcome: "underpay" | "overpay", received: string) => {
        const created = (await post("/v1/payments", {
          amount, currency: "USD", country: "US", merchant_reference: ref("crypto"), payment_method: { code: "crypto" },
          success_url: "https://merchant.example/ok", cancel_url: "https://merchant.example/cancel"
        })).json
        await tender.testHelpers.simulate({ params: { order_id: created.order_id }, payload: { outcome, amount: received } })
        expect((await post(`/v1/orders/${created.order_id}/amount_mismatch_decision`, { decision: "accept" })).json.status).toBe("succeeded")
        return created as { order_id: string }
      }

      it("a crypto payment whose underpayment was accepted refunds at most what arrived", async () => {
        const created = await acceptedMismatch("30.00", "underpay", "10.00")
        await apiError(tender.refunds.create({ order_id: created.order_id, amount: "10.01" }), 400, "refund_amount_exceeds_refundable")
        const refund = await tender.refunds.create({ order_id: created.order_id })
        expect(refund).toMatchObject({ status: "succeeded", amount: 10 })
        expect((await tender.orders.get({ params: { id: created.order_id } })).refunded_amount).toBe(10)
      })

      it("contract.md: \"After an accepted crypto overpayment the refundable balance is what arrived (less earlier refunds)\": 150.00 arrived on 100.00, all 150.00 refundable", async () => {
        const created = await acceptedMismatch("100.00", "overpay", "150.00")
        await apiError(tender.refunds.create({ order_id: created.order_id, amount: "150.01" }), 400, "refund_amount_exceeds_refundable")
        const first = await tender.refunds.create({ order_id: created.order_id, amount: "120.00" })
        expect(first).toMatchObject({ status: "succeeded", amount: 120 })
        expect((await tender.orders.get({ params: { id: created.order_id } })).refunded_amount).toBe(120)
        // less earlier refunds: 30.00 remain
        await apiError(tender.refunds.create({ order_id: created.order_id, amount: "30.01" }), 400, "refund_amount_exceeds_refundable")
        const rest = await tender.refunds.create({ order_id: created.order_id })
        expect(rest).toMatchObject({ status: "succeeded", amount: 30 })
        expect((await tender.orders.get({ params: { id: created.order_id } })).refunded_amount).toBe(150)
        expect((await eventsOf(created.order_id)).map((e) => e.type)).toEqual(["refund.succeeded", "refund.succeeded"])
        await apiError(tender.refunds.create({ order_id: created.order_id }), 409, "refund_already_fully_refunded")
        expect((await tender.refunds.get({ params: { id: rest.id } })).status).toBe("succeeded")
      })

      it("original_transaction_not_eligible (409): an authorization, a void, a refund, a failed or unsettled payment", async () => {
        const auth = await authorize()
        await apiError(tender.refunds.create({ order_id: auth.order_id }), 409, "original_transaction_not_eligible")
        // an authorization with nothing captured has no settlement
        await apiError(tender.refunds.create({ transaction_id: auth.transaction_id }), 409, "original_transaction_not_eligible")
        const voided = (await tender.payments.void({ order_id: auth.order_id }))
        await apiError(tender.refunds.create({ transaction_id: voided.transaction_id }), 409, "original_transaction_not_eligible")
        const declined = await charge("4000000000000002")
        expect(declined.status).toBe("failed")
        await apiError(tender.refunds.create({ order_id: declined.order_id }), 409, "original_transaction_not_eligible")
        const paypal = (await post("/v1/payments", {
          amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("pp"), payment_method: { code: "paypal" },
          success_url: "https://merchant.example/ok", cancel_url: "https://merchant.example/cancel"
        })).json
        await apiError(tender.refunds.create({ order_id: paypal.order_id }), 409, "original_transaction_not_eligible")
        const paid = await charge()
        const refund = (await tender.refunds.create({ order_id: paid.order_id, amount: "1.00" }))
        await apiError(tender.refunds.create({ transaction_id: refund.transaction_id }), 409, "original_transaction_not_eligible")
      })
    })

    it("amounts: malformed is validation_failed naming amount; zero or negative is refund_amount_invalid (400); nothing changes", async () => {
      const paid = await charge()
      for (const amount of ["abc", "1.234", "1e3"]) {
        const reply = await post("/v1/refunds", { order_id: paid.order_id, amount })
        expectError(reply, 400, "validation_failed")
        expect(reply.json.errors.map((e: { field: string }) => e.field)).toEqual(["amount"])
      }
      for (const amount of ["0", "0.00", "-5", "-0.50"]) await apiError(tender.refunds.create({ order_id: paid.order_id, amount }), 400, "refund_amount_invalid")
      // A number where the API takes a decimal string: only the raw path can send it.
      expectError(await post("/v1/refunds", { order_id: paid.order_id, amount: 5 }), 400, "validation_failed")
      expect((await tender.orders.get({ params: { id: paid.order_id } })).transactions).toHaveLength(1)
    })

    it("contract.md, Idempotency: refund_reference is unique per account, whatever the body (409 duplicate_merchant_reference_id), even when two arrive at once", async () => {
      const paid = await charge()
      const reference = ref("refund")
      expect((await tender.refunds.create({ order_id: paid.order_id, amount: "1.00", refund_reference: reference })).refund_reference).toBe(reference)
      await apiError(tender.refunds.create({ order_id: paid.order_id, amount: "1.00", refund_reference: reference }), 409, "duplicate_merchant_reference_id")
      const another = await charge()
      await apiError(tender.refunds.create({ order_id: another.order_id, amount: "999.00", refund_reference: reference }), 409, "duplicate_merchant_reference_id")
      // Another account may use it.
      const theirPayment = await theirs.payments.create({
        amount: "5.00", currency: "USD", country: "US", merchant_reference: ref("o"), collect_cvv: false,
        payment_method: { code: "card", details: { card_token: (await theirs.testHelpers.createCardToken({ number: "4242424242424242", exp_month: 1, exp_year: 2035, cvc: "123" })).token } }
      })
      expect(await theirs.refunds.create({ order_id: theirPayment.order_id, refund_reference: reference })).toMatchObject({ status: "succeeded", refund_reference: reference })
      // Two at once, on two orders: one is accepted.
      const [a, b] = [await charge(), await charge()]
      const racing = ref("race")
      const replies = await Promise.all([a, b].map((p) => post("/v1/refunds", { order_id: p.order_id, amount: "1.00", refund_reference: racing })))
      expect(replies.map((r) => r.status).sort()).toEqual([201, 409])
      expect(replies.find((r) => r.status === 409)!.json.code).toBe("duplicate_merchant_reference_id")
      const refunded = await Promise.all([a, b].map(async (p) => (await tender.orders.get({ params: { id: p.order_id } })).transactions.length))
      expect(refunded.sort()).toEqual([1, 2])
    })

    it("contract.md, Sandbox: a settlement of card 0341 refunds pending, then the worker settles it (refund.succeeded); refunds in flight count (refund_in_progress, 409)", async () => {
      const paid = await charge("4000000000000341")
      const pending = await tender.refunds.create({ order_id: paid.order_id, amount: "20.00" })
      expect(pending.status).toBe("pending")
      // spec, Transaction: "pending: Waiting on an external step (queued refund, payout, transfer…)";
      // contract.md: "processing only while a call is in flight".
      expect((await tender.transactions.get({ params: { id: pending.transaction_id } })).status).toBe("pending")
      expect((await tender.orders.get({ params: { id: paid.order_id } }))).not.toHaveProperty("refunded_amount")
      // 10 would fit only if the pending 20 failed: in progress; 26 can never fit.
      await apiError(tender.refunds.create({ order_id: paid.order_id, amount: "10.00" }), 409, "refund_in_progress")
      await apiError(tender.refunds.create({ order_id: paid.order_id, amount: "26.00" }), 400, "refund_amount_exceeds_refundable")
      expect((await tender.refunds.create({ order_id: paid.order_id, amount: "5.00" })).status).toBe("pending")
      await apiError(tender.refunds.create({ order_id: paid.order_id }), 409, "refund_in_progress")
      const settled = await poll(`/v1/refunds/${pending.id}`, (r) => r.status === "succeeded")
      expect(settled.status).toBe("succeeded")
      expect((await tender.transactions.get({ params: { id: pending.transaction_id } })).status).toBe("completed")
      const order = await poll(`/v1/orders/${paid.order_id}`, (o) => o.refunded_amount === 25)
      expect(order.refunded_amount).toBe(25)
      expect((await eventsOf(paid.order_id)).map((e) => e.type)).toEqual(["refund.succeeded", "refund.succeeded"])
    })

    it("GET /v1/refunds/{id}: another account's refund is 404, a malformed id 400 invalid_parameter", async () => {
      const paid = await charge()
      const refund = (await tender.refunds.create({ order_id: paid.order_id, amount: "1.00" }))
      expectError(await get(`/v1/refunds/${refund.id}`, other), 404, "not_found")
      expectError(await get("/v1/refunds/re_doesnotexist1"), 404, "not_found")
      expectError(await get("/v1/refunds/nope"), 400, "invalid_parameter")
    })
  })

  describe("POST /v1/payouts", () => {
    it("spec: reuses the original payment's instrument; 201 {id po_…, order_id, transaction_id, amount, currency, status, payment_instrument}", async () => {
      const paid = await charge()
      const reply = await tender.payouts.create({ order_id: paid.order_id, amount: "10.00", payout_reference: ref("po") })
      const original = (await tender.transactions.get({ params: { id: paid.transaction_id } }))
      expect(reply).toMatchObject({
        id: expect.stringMatching(/^po_/),
        order_id: paid.order_id,
        transaction_id: expect.stringMatching(/^txn_/),
        original_transaction_id: paid.transaction_id,
        amount: 10,
        currency: "USD",
        status: "succeeded",
        payment_instrument: original.payment_instrument
      })
      expect(reply.payment_instrument).toMatchObject({ type: "card", last4_digits: "4242" })
      // On the wire, not only in what the typed client decodes (which drops fields it does not know).
      expect((await get(`/v1/payouts/${reply.id}`)).text).not.toMatch(/tok_|exp_|4242424242424242/)
      expect((await tender.payouts.get({ params: { id: reply.id } }))).toEqual(reply)
      expect((await tender.transactions.get({ params: { id: reply.transaction_id } }))).toMatchObject({ subtype: "payout", kind: "payout", status: "completed", parent_transaction_id: paid.transaction_id })
      const events = await eventsOf(paid.order_id)
      expect(events.map((e) => e.type)).toEqual(["payout.succeeded"])
      expect(events[0].data).toMatchObject({ ...reply, merchant_reference: paid.merchant_reference })
    })

    it("a payout names a settlement as a refund does: an authorization's id or reference stands for its one capture (its instrument); captured in parts, the capture by its transaction_id (refund_requires_transaction_target, 400)", async () => {
      const auth = await authorize()
      const captured = await tender.payments.capture({ order_id: auth.order_id, amount: "30.00" })
      const byAuthorization = await tender.payouts.create({ transaction_id: auth.transaction_id, amount: "1.00" })
      expect(byAuthorization).toMatchObject({ status: "succeeded", original_transaction_id: captured.transaction_id })
      expect(byAuthorization.payment_instrument).toEqual((await tender.transactions.get({ params: { id: auth.transaction_id } })).payment_instrument)
      expect((await tender.transactions.get({ params: { id: byAuthorization.transaction_id } })).parent_transaction_id).toBe(captured.transaction_id)
      expect((await tender.payouts.create({ merchant_reference: auth.merchant_reference, amount: "1.00" })).original_transaction_id).toBe(captured.transaction_id)
      expect((await tender.payouts.create({ transaction_id: captured.transaction_id, amount: "1.00" })).original_transaction_id).toBe(captured.transaction_id)
      const parts = await authorize()
      const first = await tender.payments.capture({ order_id: parts.order_id, amount: "30.00", final: false })
      await tender.payments.capture({ order_id: parts.order_id, amount: "20.00", final: false })
      await apiError(tender.payouts.create({ order_id: parts.order_id, amount: "1.00" }), 400, "refund_requires_transaction_target")
      await apiError(tender.payouts.create({ transaction_id: parts.transaction_id, amount: "1.00" }), 400, "refund_requires_transaction_target")
      expect((await tender.payouts.create({ transaction_id: first.transaction_id, amount: "30.00" })).original_transaction_id).toBe(first.transaction_id)
      // That capture's balance is spent; the other's is its own.
      await apiError(tender.payouts.create({ transaction_id: first.transaction_id, amount: "0.01" }), 400, "validation_failed")
    })

    it("spec: a refund does \"not exceed the remaining refundable balance\"; contract.md, Payouts: \"the original's settled amount less its refunds and earlier payouts\" — one balance per settlement for both: a payout of it all leaves nothing to refund (400 refund_amount_exceeds_refundable), a payout in flight counts, and the reverse", async () => {
      const payoutOver = async (orderId: string, amount: string) => refusedAmount(await post("/v1/payouts", { order_id: orderId, amount }))
      // The review's hole: paid out in full, then refunded in full — twice what arrived went out.
      const paid = await charge()
      expect((await tender.payouts.create({ order_id: paid.order_id, amount: "25.00" })).status).toBe("succeeded")
      for (const amount of ["25.00", "0.01", undefined]) {
        await apiError(tender.refunds.create({ order_id: paid.order_id, amount }), 400, "refund_amount_exceeds_refundable")
      }
      // Part paid out: the rest is refundable, no more; then payouts and refunds together took it all,
      // which is not "fully refunded" (refunds alone did not).
      const part = await charge()
      await tender.payouts.create({ order_id: part.order_id, amount: "10.00" })
      await apiError(tender.refunds.create({ order_id: part.order_id, amount: "15.01" }), 400, "refund_amount_exceeds_refundable")
      expect(await tender.refunds.create({ order_id: part.order_id })).toMatchObject({ status: "succeeded", amount: 15 })
      await apiError(tender.refunds.create({ order_id: part.order_id, amount: "0.01" }), 400, "refund_amount_exceeds_refundable")
      await payoutOver(part.order_id, "0.01")
      // The reverse: refunded in part, the rest paid out, then nothing either way.
      const refundedFirst = await charge()
      await tender.refunds.create({ order_id: refundedFirst.order_id, amount: "20.00" })
      await payoutOver(refundedFirst.order_id, "5.01")
      expect((await tender.payouts.create({ order_id: refundedFirst.order_id, amount: "5.00" })).status).toBe("succeeded")
      await apiError(tender.refunds.create({ order_id: refundedFirst.order_id }), 400, "refund_amount_exceeds_refundable")
      expect((await tender.orders.get({ params: { id: refundedFirst.order_id } })).refunded_amount).toBe(20)
      // Refunds alone taking it all is still refund_already_fully_refunded.
      const refundedAll = await charge()
      await tender.refunds.create({ order_id: refundedAll.order_id })
      await apiError(tender.refunds.create({ order_id: refundedAll.order_id }), 409, "refund_already_fully_refunded")
      // A payout still at the provider counts as gone too, but may yet fail: the next test.
      // Per settlement: a payment captured in parts, one capture paid out; the other refunds in full.
      const auth = await authorize()
      const first = await tender.payments.capture({ order_id: auth.order_id, amount: "30.00", final: false })
      const second = await tender.payments.capture({ order_id: auth.order_id, amount: "20.00", final: false })
      await tender.payouts.create({ transaction_id: first.transaction_id, amount: "30.00" })
      await apiError(tender.refunds.create({ transaction_id: first.transaction_id, amount: "0.01" }), 400, "refund_amount_exceeds_refundable")
      expect(await tender.refunds.create({ transaction_id: second.transaction_id })).toMatchObject({ status: "succeeded", amount: 20 })
    })

    it("spec: payout_in_progress (409) \"Payout already in progress for the transaction\": a refund that fits only if the payout in flight failed waits for it (retry); one that the payouts and refunds that succeeded leave no room for is 400 refund_amount_exceeds_refundable; once the payout settled, 400", async () => {
      // Card 0341: the payout waits pending at the provider until the settlement worker settles it.
      const paid = await charge("4000000000000341")
      const payout = await tender.payouts.create({ order_id: paid.order_id, amount: "20.00" })
      expect(payout.status).toBe("pending")
      for (const amount of ["5.01", "25.00"]) {
        const refused = await post("/v1/refunds", { order_id: paid.order_id, amount })
        expectError(refused, 409, "payout_in_progress")
        expect(refused.json.message).toContain("20.00")
      }
      // More than the settlement took, payout or not: it can never fit.
      await apiError(tender.refunds.create({ order_id: paid.order_id, amount: "25.01" }), 400, "refund_amount_exceeds_refundable")
      expect((await get(`/v1/orders/${paid.order_id}`)).json).not.toHaveProperty("refunded_amount")
      expect((await poll(`/v1/payouts/${payout.id}`, (p) => p.status === "succeeded")).status).toBe("succeeded")
      // Paid out: what it took is gone for good.
      await apiError(tender.refunds.create({ order_id: paid.order_id, amount: "5.01" }), 400, "refund_amount_exceeds_refundable")
      // What neither payout nor refund took (5.00) stays refundable.
      expect(await tender.refunds.create({ order_id: paid.order_id })).toMatchObject({ amount: 5 })
    })

    it("contract.md, Payouts: \"its amount is at most the account's allowance: by default the original's settled amount less its refunds and earlier payouts\"; over → 400 validation_failed naming amount, nothing recorded", async () => {
      const paid = await charge()
      const over = async (amount: string) => refusedAmount(await post("/v1/payouts", { order_id: paid.order_id, amount }))
      // The hole of issue 21: 9,999,999,999,999.99 paid out on a 25.00 payment.
      await over("9999999999999.99")
      await over("25.01")
      expect((await tender.payouts.create({ order_id: paid.order_id, amount: "10.00" })).status).toBe("succeeded")
      await tender.refunds.create({ order_id: paid.order_id, amount: "5.00" })
      // 25.00 − 5.00 refunded − 10.00 paid out
      await over("10.01")
      expect((await tender.payouts.create({ order_id: paid.order_id, amount: "10.00" })).status).toBe("succeeded")
      await over("0.01")
      const order = await tender.orders.get({ params: { id: paid.order_id } })
      const kinds = await Promise.all(order.transactions.map(async (id: string) => (await tender.transactions.get({ params: { id } })).kind))
      expect(kinds).toEqual(["payment", "payout", "refund", "payout"])
      // A manual capture: what was captured and settled, not what was authorized.
      const auth = await authorize()
      await tender.payments.capture({ order_id: auth.order_id, amount: "40.00", final: false })
      const overCapture = await post("/v1/payouts", { order_id: auth.order_id, amount: "40.01" })
      expectError(overCapture, 400, "validation_failed")
      expect((await tender.payouts.create({ order_id: auth.order_id, amount: "40.00" })).status).toBe("succeeded")
    })

    it("contract.md, Payouts: \"a payout needs an original that settled (captured, not voided or fully refunded)\"; else 409 original_transaction_not_eligible", async () => {
      const notEligible = (body: Record<string, unknown>) => apiError(tender.payouts.create(body as never), 409, "original_transaction_not_eligible")
      // authorized, nothing captured
      const held = await authorize()
      await notEligible({ order_id: held.order_id, amount: "1.00" })
      await notEligible({ transaction_id: held.transaction_id, amount: "1.00" })
      // voided whole
      const voided = await authorize()
      await tender.payments.void({ order_id: voided.order_id })
      await notEligible({ order_id: voided.order_id, amount: "1.00" })
      // refunded in full
      const refunded = await charge()
      await tender.refunds.create({ order_id: refunded.order_id })
      await notEligible({ order_id: refunded.order_id, amount: "1.00" })
      // A void behind a capture released the rest: what was captured settled, and may be paid out.
      const partly = await authorize()
      await tender.payments.capture({ order_id: partly.order_id, amount: "30.00", final: false })
      await tender.payments.void({ order_id: partly.order_id })
      await apiError(tender.payouts.create({ order_id: partly.order_id, amount: "30.01" }), 400, "validation_failed")
      expect((await tender.payouts.create({ order_id: partly.order_id, amount: "30.00" })).status).toBe("succeeded")
      for (const id of [held.order_id, voided.order_id, refunded.order_id]) {
        const order = await tender.orders.get({ params: { id } })
        const kinds = await Promise.all(order.transactions.map(async (t: string) => (await tender.transactions.get({ params: { id: t } })).kind))
        expect(kinds).not.toContain("payout")
      }
    })

    it("contract.md, Payouts: an operator may set --max-per-payout and --max-per-day instead (per currency, per UTC day); cleared, the balance rule is back", async () => {
      const { account: limited, chargeOn, payout } = await ownAccount("limited")
      await Effect.runPromise(server.accounts.setPayoutLimit(limited.account_id, { currency: "USD", max_per_payout: "30.00", max_per_day: "50.00" }))
      const small = await chargeOn("1.00")
      // Instead of the balance: 30.00 on a 1.00 payment; not 30.01.
      refusedAmount(await payout(small.order_id, "30.01"))
      expect((await payout(small.order_id, "30.00")).status).toBe(201)
      // 30.00 today; 20.01 more would pass 50.00 (on any order of the account), 20.00 does not.
      const other = await chargeOn("1.00")
      refusedAmount(await payout(other.order_id, "20.01"))
      expect((await payout(other.order_id, "20.00")).status).toBe(201)
      refusedAmount(await payout(small.order_id, "0.01"))
      // Another currency keeps the default rule.
      const euros = await chargeOn("5.00", "EUR")
      refusedAmount(await payout(euros.order_id, "5.01"))
      expect((await payout(euros.order_id, "5.00")).status).toBe(201)
      // Settled still required: the limits replace the balance, not the original's eligibility.
      const held = await chargeOn("5.00", "USD", "US", { capture_method: "manual" })
      expectError(await payout(held.order_id, "1.00"), 409, "original_transaction_not_eligible")
      // Cleared: the balance rule again.
      await Effect.runPromise(server.accounts.clearPayoutLimit(limited.account_id, "USD"))
      const fresh = await chargeOn("2.00")
      refusedAmount(await payout(fresh.order_id, "2.01"))
      expect((await payout(fresh.order_id, "2.00")).status).toBe(201)
    })

    it("contract.md, Operator set-up: `tender accounts payouts ID --max-per-payout A --max-per-day A` with no currency is the account's default for every currency (A in whole units, read in each payout's currency); a currency's own limits take precedence", async () => {
      const { account: limited, chargeOn, payout } = await ownAccount("default-limit")
      await Effect.runPromise(server.accounts.setPayoutLimit(limited.account_id, { max_per_payout: "40", max_per_day: "60" }))
      // In USD: 40.00 per payout (instead of the 1.00 balance), 60.00 a day.
      const dollars = await chargeOn("1.00", "USD", "US")
      refusedAmount(await payout(dollars.order_id, "40.01"))
      expect((await payout(dollars.order_id, "40.00")).status).toBe(201)
      refusedAmount(await payout(dollars.order_id, "20.01"))
      // In JPY (no minor units): 40 yen, its own day.
      const yen = await chargeOn("100", "JPY", "JP")
      refusedAmount(await payout(yen.order_id, "41"))
      expect((await payout(yen.order_id, "40")).status).toBe(201)
      // USD's own limits take precedence over the default; JPY keeps the default.
      await Effect.runPromise(server.accounts.setPayoutLimit(limited.account_id, { currency: "USD", max_per_payout: "0.50", max_per_day: "100.00" }))
      refusedAmount(await payout(dollars.order_id, "0.51"))
      expect((await payout(dollars.order_id, "0.50")).status).toBe(201)
      refusedAmount(await payout(yen.order_id, "21"))
      // The default cleared: JPY is back to the balance rule (100 yen less 40 paid out), USD keeps its own.
      await Effect.runPromise(server.accounts.clearPayoutLimit(limited.account_id, undefined))
      refusedAmount(await payout(yen.order_id, "61"))
      expect((await payout(yen.order_id, "60")).status).toBe(201)
      refusedAmount(await payout(dollars.order_id, "0.51"))
    })

    it("amount is required and positive (validation_failed naming amount); targets as for refunds", async () => {
      const paid = await charge()
      for (const body of [{ order_id: paid.order_id }, { order_id: paid.order_id, amount: "0" }, { order_id: paid.order_id, amount: "-1" }, { order_id: paid.order_id, amount: "x" }]) {
        const reply = await post("/v1/payouts", body)
        expectError(reply, 400, "validation_failed")
        expect(reply.json.errors.map((e: { field: string }) => e.field)).toEqual(["amount"])
      }
      await apiError(tender.payouts.create({ amount: "1.00" }), 400, "ambiguous_original_transaction_target")
      await apiError(tender.payouts.create({ order_id: paid.order_id, merchant_reference: paid.merchant_reference, amount: "1.00" }), 400, "ambiguous_original_transaction_target")
      await apiError(theirs.payouts.create({ order_id: paid.order_id, amount: "1.00" }), 404, "original_transaction_not_found")
    })

    it("original_transaction_not_eligible (409): no stored card (a redirect payment), a declined payment", async () => {
      const paypal = (await post("/v1/payments", {
        amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("pp"), payment_method: { code: "paypal" },
        success_url: "https://merchant.example/ok", cancel_url: "https://merchant.example/cancel"
      })).json
      await tender.testHelpers.simulate({ params: { order_id: paypal.order_id }, payload: { outcome: "succeed" } })
      await apiError(tender.payouts.create({ order_id: paypal.order_id, amount: "1.00" }), 409, "original_transaction_not_eligible")
      const declined = await charge("4000000000000002")
      await apiError(tender.payouts.create({ order_id: declined.order_id, amount: "1.00" }), 409, "original_transaction_not_eligible")
    })

    it("payout_reference is unique per account (409 duplicate_merchant_reference_id)", async () => {
      const paid = await charge()
      const reference = ref("po")
      expect(await tender.payouts.create({ order_id: paid.order_id, amount: "1.00", payout_reference: reference })).toMatchObject({ payout_reference: reference })
      await apiError(tender.payouts.create({ order_id: paid.order_id, amount: "2.00", payout_reference: reference }), 409, "duplicate_merchant_reference_id")
    })

    it("contract.md, Sandbox: card 0341 pays out pending, settled by the worker; meanwhile payout_in_progress (409)", async () => {
      const paid = await charge("4000000000000341")
      const pending = await tender.payouts.create({ order_id: paid.order_id, amount: "3.00" })
      expect(pending.status).toBe("pending")
      // spec, Transaction: "pending: Waiting on an external step (queued refund, payout, transfer…)".
      expect((await tender.transactions.get({ params: { id: pending.transaction_id } })).status).toBe("pending")
      await apiError(tender.payouts.create({ order_id: paid.order_id, amount: "1.00" }), 409, "payout_in_progress")
      expect((await poll(`/v1/payouts/${pending.id}`, (p) => p.status === "succeeded")).status).toBe("succeeded")
      expect((await tender.transactions.get({ params: { id: pending.transaction_id } })).status).toBe("completed")
      expect((await eventsOf(paid.order_id)).map((e) => e.type)).toEqual(["payout.succeeded"])
      // The next payout of the original may go (pending again, on this card).
      expect((await tender.payouts.create({ order_id: paid.order_id, amount: "1.00" })).status).toBe("pending")
    })

    it("contract.md, Sandbox: card 0119 unreachable → 502 provider_unavailable, the payout recorded failed (payout.failed)", async () => {
      const paid = await charge()
      // No payment on the 0119 card can succeed, so the stored card is swapped under a settled order.
      const unreachable = await tokenize("4000000000000119")
      await server.run(Effect.gen(function*() {
        const orders = yield* OrderRepo
        const order = Option.getOrThrow(yield* orders.findAny(paid.order_id))
        yield* Effect.orDie(orders.update(StateMachine.revise(order, { card_token: unreachable }, new Date().toISOString())))
      }))
      await apiError(tender.payouts.create({ order_id: paid.order_id, amount: "2.00" }), 502, "provider_unavailable")
      const order = (await tender.orders.get({ params: { id: paid.order_id } }))
      const txn = (await tender.transactions.get({ params: { id: order.transactions.at(-1)! } }))
      expect(txn).toMatchObject({ kind: "payout", status: "failed", decline_code: "provider_unavailable" })
      const events = await eventsOf(paid.order_id)
      expect(events.map((e) => e.type)).toEqual(["payout.failed"])
      expect(events[0].data).toMatchObject({ status: "failed", decline_code: "provider_unavailable" })
      // Nothing in flight: the next payout goes out (and fails the same way).
      await apiError(tender.payouts.create({ order_id: paid.order_id, amount: "2.00" }), 502, "provider_unavailable")
    })

    it("test helper simulate (docs/decisions.md, tender trigger): on a refund or payout queued at the sandbox (card 0341), fail refuses it (<kind>.failed, nothing moved), succeed pays it; nothing queued → 409", async () => {
      const paid = await charge("4000000000000341")
      const simulate = (outcome: string) => post(`/v1/test_helpers/orders/${paid.order_id}/simulate`, { outcome })
      const refund = await tender.refunds.create({ order_id: paid.order_id, amount: "4.00" })
      expectError(await simulate("expire"), 400, "validation_failed")
      expect((await simulate("fail")).status).toBe(200)
      expect(await tender.refunds.get({ params: { id: refund.id } })).toMatchObject({ status: "failed", decline_code: "refund_failed" })
      expect((await tender.orders.get({ params: { id: paid.order_id } }))).not.toHaveProperty("refunded_amount")
      expectError(await simulate("fail"), 409, "payment_unexpected_state")
      const payout = await tender.payouts.create({ order_id: paid.order_id, amount: "3.00" })
      expect((await simulate("fail")).status).toBe(200)
      expect(await tender.payouts.get({ params: { id: payout.id } })).toMatchObject({ status: "failed", decline_code: "payout_failed" })
      const paidOut = await tender.payouts.create({ order_id: paid.order_id, amount: "3.00" })
      expect((await simulate("succeed")).status).toBe(200)
      expect((await tender.payouts.get({ params: { id: paidOut.id } })).status).toBe("succeeded")
      expect((await eventsOf(paid.order_id)).map((e) => e.type)).toEqual(["refund.failed", "payout.failed", "payout.succeeded"])
    })

    it("GET /v1/payouts/{id}: payout_not_found (404), a malformed id 400 invalid_parameter", async () => {
      expectError(await get("/v1/payouts/po_doesnotexist1"), 404, "payout_not_found")
      expectError(await get("/v1/payouts/nope"), 400, "invalid_parameter")
    })
  })
}
