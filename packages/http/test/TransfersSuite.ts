/**
 * Transfers over real HTTP (contract.md, Transfers and Sandbox; spec, Payment instrument and the
 * Transfers error table): every destination type and the instrument it returns, unknown fields
 * ignored, every pre-flight error, the card flow (requires_action → execute → succeeded, once),
 * the sandbox's refusals, reads (transfer, order, transaction) and the events recorded; a create or
 * execute answered 502 and retried (contract.md, Idempotency), the sandbox's payouts made
 * unreachable by a simulated outage (SandboxOutage.ts) that no destination could cause.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TenderConfig } from "@tender/adapters/Config"
import { MoneyOut, Order, OrderRepo, type Payment, PaymentProvider, Payments, Transaction, TransactionRepo, TransferRepo, UnitOfWork } from "@tender/domain"
import { SandboxOutage } from "@tender/adapters/providers/sandbox/SandboxOutage"
import { Effect, Layer, Option, Result } from "effect"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, type Reply, send } from "@tender/client/Testing"
import { apiError, type TenderPromiseClient, typedClient } from "./support/Typed.ts"

export const transfersSuite = (storage: Pick<TenderConfig, "storage" | "dataDir">) => {
  let server: TestServer
  let merchant: Credentials & { account_id: string }
  /**
   * The merchant's typed client: reads, executes, card tokens. Creates stay on the raw `transfer`
   * helper, which sends free-form destination details (most tests here are about refusing them).
   */
  let tender: TenderPromiseClient
  let seq = 0
  /** The sandbox's operations that fail as unreachable, switched by the tests of a 502. */
  const down = new Set<string>()

  const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
  const post = (path: string, body: unknown, creds: Credentials = merchant) => send(server, creds, "POST", path, { body: JSON.stringify(body) })
  const get = (path: string, creds: Credentials = merchant) => send(server, creds, "GET", path)
  const eventsOf = (orderId: string) => Effect.runPromise(server.events(orderId))

  const expectError = (reply: Reply, status: number, code: string) => {
    expect({ status: reply.status, code: reply.json?.code, message: reply.json?.message }).toMatchObject({ status, code })
    expect(reply.json.request_id).toMatch(/^req_/)
  }

  const tokenize = async (number: string, holder_name?: string) =>
    (await tender.testHelpers.createCardToken({ number, exp_month: 12, exp_year: 2035, cvc: "123", ...(holder_name ? { holder_name } : {}) })).token

  const transfer = (code: string, details: Record<string, unknown>, extra: Record<string, unknown> = {}, creds: Credentials = merchant) =>
    post("/v1/transfers", { amount: "120.50", currency: "USD", country: "US", merchant_reference: ref(code), payment_method: { code, details }, ...extra }, creds)

  /** No card number, token or expiry may leave in a response (house rule; spec: never returned on an instrument). */
  const expectNoCardSecrets = (reply: Reply) => {
    expect(reply.text).not.toMatch(/tok_|exp_month|exp_year|4242424242424242|"card_token"/)
  }

  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, storage, Layer.succeed(SandboxOutage, { unreachable: (operation) => down.has(operation) }))
    merchant = await Effect.runPromise(server.accounts.create({ name: "transfers", mode: "test" }))
    tender = typedClient(server, merchant)
    await Effect.runPromise(server.accounts.addProfile(merchant.account_id, "eu", "Europe"))
  })
  afterAll(() => server.close())

  describe("destinations (contract.md: code → instrument type; spec: destination fields top level)", () => {
    it("bank_transfer → bank_account: paid at once, 201 succeeded, the bank fields and holder fields top level", async () => {
      const reply = await transfer("bank_transfer", {
        account_number: "000123456789",
        bank_code: "021000021",
        branch_code: "001",
        bank_name: "Sandbox Bank",
        account_type: "checking",
        bic_swift: "CHASUS33",
        holder_name: "Ada Lovelace",
        holder_email: "ada@example.com",
        document_id: "123-45-6789",
        holder_address: { line1: "1 Main St", city: "Springfield", postal_code: "12345", country: "US" }
      }, { processing_profile: "eu" })
      expect(reply.status).toBe(201)
      expect(reply.json).toEqual({
        id: expect.stringMatching(/^tr_/),
        order_id: expect.stringMatching(/^ord_/),
        transaction_id: expect.stringMatching(/^txn_/),
        merchant_reference: expect.stringMatching(/^bank_transfer-/),
        status: "succeeded",
        amount: 120.5,
        currency: "USD",
        country: "US",
        payment_method: "bank_transfer",
        payment_instrument: {
          id: expect.stringMatching(/^pi_/),
          type: "bank_account",
          country_code: "US",
          holder_name: "Ada Lovelace",
          holder_email: "ada@example.com",
          document_id: "123-45-6789",
          holder_address: { line1: "1 Main St", city: "Springfield", postal_code: "12345", country: "US" },
          account_number: "000123456789",
          bic_swift: "CHASUS33",
          bank_code: "021000021",
          branch_code: "001",
          bank_name: "Sandbox Bank",
          account_type: "checking"
        },
        next_action: null,
        processing_profile: "eu",
        created_at: expect.any(String),
        updated_at: expect.any(String)
      })
    })

    it("bank_transfer with an IBAN (DE, EUR)", async () => {
      const reply = await transfer("bank_transfer", { iban: "DE89370400440532013000", holder_name: "Grace Hopper" }, { currency: "EUR", country: "DE" })
      expect(reply.status).toBe(201)
      expect(reply.json.payment_instrument).toEqual({ id: expect.any(String), type: "bank_account", country_code: "DE", holder_name: "Grace Hopper", iban: "DE89370400440532013000" })
    })

    it.each([
      ["paypal", "US", "USD", { holder_email: "ada@example.com" }],
      ["mercadopago", "AR", "ARS", { holder_phone: "+5491122334455" }]
    ])("%s → wallet, identified by holder_email / holder_phone", async (code, country, currency, details) => {
      const reply = await transfer(code, details, { country, currency })
      expect(reply.status).toBe(201)
      expect(reply.json).toMatchObject({ status: "succeeded", payment_method: code })
      expect(reply.json.payment_instrument).toEqual({ id: expect.any(String), type: "wallet", country_code: country, ...details })
    })

    it("holder_name defaults to first, middle and last name joined (spec: request-side first_name, middle_name, last_name)", async () => {
      const reply = await transfer("paypal", { holder_email: "a@example.com", first_name: "Ada", middle_name: "King", last_name: "Lovelace" })
      expect(reply.json.payment_instrument.holder_name).toBe("Ada King Lovelace")
      expect(reply.json.payment_instrument.first_name).toBeUndefined()
    })

    it("crypto → crypto_wallet with wallet_address", async () => {
      const reply = await transfer("crypto", { wallet_address: "tb1qsandboxaddress0000000000000000000" })
      expect(reply.status).toBe(201)
      expect(reply.json.payment_instrument).toEqual({ id: expect.any(String), type: "crypto_wallet", country_code: "US", wallet_address: "tb1qsandboxaddress0000000000000000000" })
    })

    it.each([
      ["pix", "BR", "BRL", "ada@pix.example"],
      ["upi", "IN", "INR", "ada@upi"],
      ["payid", "AU", "AUD", "+61400000000"]
    ])("%s → real_time_payment with account_reference", async (code, country, currency, alias) => {
      const reply = await transfer(code, { account_reference: alias }, { country, currency })
      expect(reply.status).toBe(201)
      expect(reply.json.payment_instrument).toEqual({ id: expect.any(String), type: "real_time_payment", country_code: country, account_reference: alias })
    })

    it("card → requires_action with collect_card; the instrument from the vaulted card and its BIN, never the token or expiry", async () => {
      const token = await tokenize("4242424242424242", "Ada Lovelace")
      const before = Date.now()
      const reply = await transfer("card", { card_token: token })
      expect(reply.status).toBe(201)
      expect(reply.json).toMatchObject({ status: "requires_action", next_action: { type: "collect_card", client_secret: expect.stringContaining("_secret_") } })
      expect(Math.round((Date.parse(reply.json.next_action.expires_at) - before) / 60_000)).toBe(15)
      expect(reply.json.payment_instrument).toEqual({
        id: expect.stringMatching(/^pi_/),
        type: "card",
        country_code: "US",
        holder_name: "Ada Lovelace",
        card_brand: "visa",
        last4_digits: "4242",
        bin: "42424242",
        card_funding: "credit",
        issuer_name: "tender sandbox bank"
      })
      expectNoCardSecrets(reply)
      expect(await eventsOf(reply.json.order_id)).toEqual([])
    })

    it("unused and unknown fields are ignored (spec: \"Unused fields are ignored\")", async () => {
      const reply = await transfer("pix", {
        account_reference: "ada@pix.example",
        iban: "DE89370400440532013000",
        wallet_address: "unused",
        date_of_birth: "1815-12-10",
        bank_address: { line1: "x" },
        favourite_colour: "green"
      }, { country: "BR", currency: "BRL", something_else: { nested: true } })
      expect(reply.status).toBe(201)
      expect(reply.json.payment_instrument).toEqual({ id: expect.any(String), type: "real_time_payment", country_code: "BR", account_reference: "ada@pix.example" })
    })
  })

  describe("pre-flight errors (spec, Transfers and Payments tables): nothing is written", () => {
    it("wrong JSON types → 400 validation_failed naming each field", async () => {
      const reply = await post("/v1/transfers", { amount: 10, currency: "USD", country: "US", merchant_reference: ref("types"), payment_method: { code: "bank_transfer", details: { account_number: 123 } } })
      expectError(reply, 400, "validation_failed")
      expect(reply.json.errors.map((e: { field: string }) => e.field).join(" ")).toMatch(/amount.*account_number|account_number.*amount/)
    })

    it("an invalid amount or currency → 400 validation_failed", async () => {
      expectError(await transfer("bank_transfer", { account_number: "1234" }, { amount: "1.234" }), 400, "validation_failed")
      expectError(await transfer("bank_transfer", { account_number: "1234" }, { currency: "XXX" }), 400, "validation_failed")
      expectError(await transfer("bank_transfer", { account_number: "1234" }, { processing_profile: "nope" }), 400, "validation_failed")
    })

    it("missing reference → merchant_reference_required; missing country → country_required", async () => {
      expectError(await transfer("bank_transfer", { account_number: "1234" }, { merchant_reference: undefined }), 400, "merchant_reference_required")
      expectError(await transfer("bank_transfer", { account_number: "1234" }, { country: undefined }), 400, "country_required")
    })

    it("an unknown code → 400 unknown_payment_method", async () => {
      expectError(await transfer("wire", { account_number: "1234" }), 400, "unknown_payment_method")
    })

    it.each(["ideal", "pse", "boleto", "oxxo", "spei", "mach"])("%s is a payment method, not a destination → 400 payment_method_not_supported_as_destination", async (code) => {
      expectError(await transfer(code, { account_number: "1234" }), 400, "payment_method_not_supported_as_destination")
    })

    it.each([
      ["bank_transfer", {}, ["payment_method.details.iban", "payment_method.details.account_number"]],
      ["paypal", { holder_name: "Ada" }, ["payment_method.details.holder_email", "payment_method.details.holder_phone"]],
      ["crypto", {}, ["payment_method.details.wallet_address"]],
      ["pix", { account_reference: " " }, ["payment_method.details.account_reference"]]
    ])("%s without what identifies it → 400 transfer_destination_invalid naming the fields", async (code, details, fields) => {
      const reply = await transfer(code, details, code === "pix" ? { country: "BR", currency: "BRL" } : {})
      expectError(reply, 400, "transfer_destination_invalid")
      expect(reply.json.errors.map((e: { field: string }) => e.field)).toEqual(fields)
    })

    it("a malformed holder_email → 400 transfer_destination_invalid", async () => {
      const reply = await transfer("paypal", { holder_email: "not-an-email" })
      expectError(reply, 400, "transfer_destination_invalid")
      expect(reply.json.errors).toEqual([{ field: "payment_method.details.holder_email", message: expect.any(String) }])
    })

    it("card without card_token → 400 transfer_card_token_required", async () => {
      expectError(await transfer("card", { holder_name: "Ada" }), 400, "transfer_card_token_required")
    })

    it("card_token not of the account's vault → 400 transfer_destination_invalid", async () => {
      const other = await Effect.runPromise(server.accounts.create({ name: "other", mode: "test" }))
      const foreign = (await post("/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" }, other)).json.token
      expectError(await transfer("card", { card_token: foreign }), 400, "transfer_destination_invalid")
      expectError(await transfer("card", { card_token: "tok_doesnotexist0000" }), 400, "transfer_destination_invalid")
    })

    it("a card whose BIN has no known issuer country (sandbox: BIN 400000) → 400 transfer_destination_country_unknown", async () => {
      const token = await tokenize("4000000000000002")
      const reference = ref("country-unknown")
      expectError(await transfer("card", { card_token: token }, { merchant_reference: reference }), 400, "transfer_destination_country_unknown")
      // nothing was written: the reference is still free
      expectError(await get(`/v1/orders/by-reference/${reference}`), 404, "order_not_found")
    })

    it.each([
      ["pix", "US", "USD", { account_reference: "x" }],
      ["upi", "IN", "USD", { account_reference: "x" }],
      ["crypto", "US", "GBP", { wallet_address: "x" }],
      ["mercadopago", "US", "USD", { holder_email: "a@example.com" }]
    ])("%s outside its countries or currencies (%s, %s) → 400 transfer_unroutable", async (code, country, currency, details) => {
      expectError(await transfer(code, details, { country, currency }), 400, "transfer_unroutable")
    })

    it("a live-mode account → 404 payment_unroutable (contract.md, Providers)", async () => {
      const live = await Effect.runPromise(server.accounts.create({ name: "live", mode: "live" }))
      expectError(await transfer("bank_transfer", { account_number: "1234" }, {}, live), 404, "payment_unroutable")
    })
  })

  describe("idempotency (contract.md: the reference is unique per account across direct payments and transfers)", () => {
    it("a second create with the reference → 409 duplicate_merchant_reference_id, also against a direct payment's", async () => {
      const reference = ref("dup")
      expect((await transfer("bank_transfer", { account_number: "1234" }, { merchant_reference: reference })).status).toBe(201)
      expectError(await transfer("crypto", { wallet_address: "x" }, { merchant_reference: reference }), 409, "duplicate_merchant_reference_id")
      // "whatever its body": even one that would fail validation, or name another destination
      expectError(await post("/v1/transfers", { merchant_reference: reference, amount: "-1" }), 409, "duplicate_merchant_reference_id")
      expectError(await transfer("ideal", {}, { merchant_reference: reference }), 409, "duplicate_merchant_reference_id")
      const paid = ref("paid")
      const payment = await post("/v1/payments", { amount: "5.00", currency: "USD", country: "US", merchant_reference: paid, payment_method: { code: "paypal" }, success_url: "https://m.example/ok", cancel_url: "https://m.example/no" })
      expect(payment.status).toBe(200)
      expectError(await transfer("bank_transfer", { account_number: "1234" }, { merchant_reference: paid }), 409, "duplicate_merchant_reference_id")
    })

    it("10 creates with one reference at once: one 201, nine 409", async () => {
      const reference = ref("race")
      const replies = await Promise.all(Array.from({ length: 10 }, () => transfer("bank_transfer", { account_number: "1234" }, { merchant_reference: reference })))
      expect(replies.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)])
    })
  })

  describe("outcomes and reads", () => {
    it("a bank destination ending 0000 → recorded failed, then 409 transfer_destination_not_registered (contract.md, Sandbox)", async () => {
      const reference = ref("unregistered")
      const reply = await transfer("bank_transfer", { account_number: "987650000" }, { merchant_reference: reference })
      expectError(reply, 409, "transfer_destination_not_registered")
      const order = await get(`/v1/orders/by-reference/${reference}`)
      expect(order.json).toMatchObject({ subtype: "transfer", status: "failed", payment_method: "bank_transfer" })
      expect(order.json.payment_instrument).toBeUndefined()
      const txn = await tender.transactions.get({ params: { id: order.json.transactions[0] } })
      expect(txn).toMatchObject({ kind: "transfer", subtype: "transfer", status: "failed", decline_code: "transfer_destination_not_registered", payment_instrument: { type: "bank_account", account_number: "987650000" } })
      const events = await eventsOf(order.json.id)
      expect(events.map((e) => e.type)).toEqual(["transfer.failed"])
      const shown = await tender.transfers.get({ params: { id: events[0]!.data.id as string } })
      expect(shown).toMatchObject({ status: "failed", decline_code: "transfer_destination_not_registered", order_id: order.json.id })
    })

    it("GET /v1/transfers/{id}, the order (subtype transfer, its instrument once succeeded) and the transaction (kind transfer)", async () => {
      const created = (await transfer("crypto", { wallet_address: "tb1qread" }, { amount: "7", currency: "EUR", country: "FR" })).json
      const shown = await tender.transfers.get({ params: { id: created.id } })
      expect(shown).toEqual(created)
      const order = await tender.orders.get({ params: { id: created.order_id } })
      expect(order).toMatchObject({ id: created.order_id, subtype: "transfer", status: "succeeded", amount: 7, currency: "EUR", country: "FR", payment_method: "crypto", payment_instrument: created.payment_instrument, transactions: [created.transaction_id] })
      const txn = await tender.transactions.get({ params: { id: created.transaction_id } })
      expect(txn).toMatchObject({ kind: "transfer", subtype: "transfer", status: "completed", amount: 7, payment_instrument: created.payment_instrument })
    })

    it("GET of an unknown transfer → 404 transfer_not_found; another account's too; a malformed id → 400 invalid_parameter", async () => {
      expectError(await get("/v1/transfers/tr_doesnotexist0000"), 404, "transfer_not_found")
      const created = (await transfer("crypto", { wallet_address: "x" })).json
      const other = await Effect.runPromise(server.accounts.create({ name: "nosy", mode: "test" }))
      expectError(await get(`/v1/transfers/${created.id}`, other), 404, "transfer_not_found")
      expectError(await get("/v1/transfers/nope"), 400, "invalid_parameter")
    })

    it("events: transfer.succeeded with the transfer view, livemode and processing_profile; never a payment.* event", async () => {
      const created = (await transfer("bank_transfer", { iban: "NL91ABNA0417164300" }, { currency: "EUR", country: "NL", processing_profile: "eu" })).json
      const events = await eventsOf(created.order_id)
      expect(events.map((e) => e.type)).toEqual(["transfer.succeeded"])
      expect(events[0]).toMatchObject({ livemode: false, processing_profile: "eu", order_id: created.order_id })
      expect(events[0]!.data).toEqual({ ...created, livemode: false, processing_profile: "eu" })
    })
  })

  describe("card transfers: execute (spec: 200; transfer_invalid_order_state, transfer_in_progress)", () => {
    const cardTransfer = async (number = "4242424242424242") => (await transfer("card", { card_token: await tokenize(number) })).json

    it("requires_action → execute → 200 succeeded; the order succeeded with the card instrument; transfer.succeeded once", async () => {
      const created = await cardTransfer()
      const executed = await tender.transfers.execute({ params: { order_id: created.order_id }, payload: {} })
      expect(executed).toMatchObject({ id: created.id, status: "succeeded", next_action: null, payment_instrument: created.payment_instrument })
      const order = await tender.orders.get({ params: { id: created.order_id } })
      expect(order).toMatchObject({ status: "succeeded", subtype: "transfer", payment_instrument: { type: "card", last4_digits: "4242" } })
      // On the wire (the typed client's decoding would drop a field it does not know): the same views, raw.
      expectNoCardSecrets(await get(`/v1/transfers/${created.id}`))
      expectNoCardSecrets(await get(`/v1/orders/${created.order_id}`))
      const events = await eventsOf(created.order_id)
      expect(events.map((e) => e.type)).toEqual(["transfer.succeeded"])
      expect(JSON.stringify(events)).not.toMatch(/tok_|exp_month|4242424242424242/)
    })

    it("executed twice → 409 transfer_invalid_order_state; a non-card transfer too", async () => {
      const created = await cardTransfer()
      expect((await tender.transfers.execute({ params: { order_id: created.order_id }, payload: {} })).status).toBe("succeeded")
      await apiError(tender.transfers.execute({ params: { order_id: created.order_id }, payload: {} }), 409, "transfer_invalid_order_state")
      const bank = (await transfer("bank_transfer", { account_number: "1234" })).json
      await apiError(tender.transfers.execute({ params: { order_id: bank.order_id }, payload: {} }), 409, "transfer_invalid_order_state")
    })

    it("10 executes at once → one 200; the others 409 transfer_in_progress or transfer_invalid_order_state; one payout", async () => {
      const created = await cardTransfer()
      const replies = await Promise.all(Array.from({ length: 10 }, () => post(`/v1/transfers/${created.order_id}/execute`, {})))
      expect(replies.filter((r) => r.status === 200)).toHaveLength(1)
      for (const r of replies.filter((r) => r.status !== 200)) {
        expect(r.status).toBe(409)
        expect(["transfer_in_progress", "transfer_invalid_order_state"]).toContain(r.json.code)
      }
      expect((await eventsOf(created.order_id)).map((e) => e.type)).toEqual(["transfer.succeeded"])
    })

    it("execute's card_token replaces the card (same checks as create)", async () => {
      const created = await cardTransfer()
      await apiError(tender.transfers.execute({ params: { order_id: created.order_id }, payload: { card_token: "tok_doesnotexist0000" } }), 400, "transfer_destination_invalid")
      await apiError(tender.transfers.execute({ params: { order_id: created.order_id }, payload: { card_token: await tokenize("4000000000009995") } }), 400, "transfer_destination_country_unknown")
      expectError(await post(`/v1/transfers/${created.order_id}/execute`, { card_token: "" }), 400, "transfer_card_token_required")
      const executed = await tender.transfers.execute({ params: { order_id: created.order_id }, payload: { card_token: await tokenize("5555555555554444") } })
      expect(executed).toMatchObject({ status: "succeeded", payment_instrument: { type: "card", card_brand: "mastercard", last4_digits: "4444", country_code: "US" } })
      const txn = await tender.transactions.get({ params: { id: created.transaction_id } })
      expect(txn.payment_instrument).toMatchObject({ card_brand: "mastercard", last4_digits: "4444" })
    })

    /**
     * The state execute's claim leaves when the process dies before the answer is recorded: the
     * payout call reserved (`pending_call`), everything in flight. `answer` runs before it commits,
     * as the provider's side of a call whose answer was lost.
     */
    const lostAnswer = (orderId: string, answer: (txn: Payment.Transaction) => Effect.Effect<unknown, unknown, PaymentProvider>) =>
      server.run(Effect.gen(function*() {
        const orders = yield* OrderRepo
        const txns = yield* TransactionRepo
        const transfers = yield* TransferRepo
        const transfer = Option.getOrThrow(yield* transfers.findByOrder(orderId))
        const txn = Option.getOrThrow(yield* txns.findAny(transfer.transaction_id))
        const key = `${txn.id}:payout`
        yield* answer({ ...txn, pending_call: { key, operation: "payout", at: txn.created_at } })
        const at = new Date().toISOString()
        yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
          const order = Option.getOrThrow(yield* orders.lock(orderId))
          yield* txns.update(Result.getOrThrow(Transaction.transition(txn, "sent", at, { pending_call: { key, operation: "payout", at } })).next)
          yield* orders.update(Result.getOrThrow(Order.transition(order, "action_completed", at)).next)
          yield* transfers.update(Result.getOrThrow(MoneyOut.transferTransition(transfer, "sent", at, { next_action: null })).next)
        }))
      }).pipe(Effect.orDie))

    /** One reconciliation round with no grace (the server's own worker waits 60 s before asking). */
    const reconcile = () =>
      server.run(Payments.use((p) => p.reconcileDue({ graceMs: 0, horizonMs: 86_400_000 })) as Effect.Effect<number>)

    it("an answer lost and never received: 409 transfer_in_progress meanwhile; reconciliation records it failed (provider_unavailable), transfer.failed", async () => {
      const created = await cardTransfer()
      await lostAnswer(created.order_id, () => Effect.void)
      await apiError(tender.transfers.execute({ params: { order_id: created.order_id }, payload: {} }), 409, "transfer_in_progress")
      expect((await tender.transfers.get({ params: { id: created.id } })).status).toBe("processing")
      expect(await reconcile()).toBeGreaterThanOrEqual(1)
      expect((await tender.transfers.get({ params: { id: created.id } }))).toMatchObject({ status: "failed", decline_code: "provider_unavailable" })
      expect((await tender.orders.get({ params: { id: created.order_id } })).status).toBe("failed")
      expect((await eventsOf(created.order_id)).map((e) => e.type)).toEqual(["transfer.failed"])
    })

    it("an answer lost after the provider accepted it for later: reconciliation records it queued (the transaction pending), the settlement worker pays it", async () => {
      const created = await cardTransfer()
      // The sandbox's settle-later card (…0341) cannot be a destination (its BIN has no issuer
      // country), so the provider's side answers for it directly: a Pending payout under the key.
      await lostAnswer(created.order_id, (txn) =>
        PaymentProvider.use((provider) =>
          provider.payout({
            reference: txn.id,
            idempotency_key: txn.pending_call!.key,
            method: "card",
            destination: txn.payment_instrument!,
            card: { number: "4000000000000341", exp_month: 12, exp_year: 2035, cvc: undefined },
            amount: txn.amount,
            currency: txn.currency,
            country: "US"
          })))
      // contract.md: "processing only while a call is in flight" — as this one is, its answer lost.
      expect((await tender.transactions.get({ params: { id: created.transaction_id } })).status).toBe("processing")
      expect(await reconcile()).toBeGreaterThanOrEqual(1)
      expect((await tender.transfers.get({ params: { id: created.id } })).status).toBe("processing")
      // contract.md: "A refund, payout or transfer transaction waiting at the provider (queued, settling later) reads pending".
      expect((await tender.transactions.get({ params: { id: created.transaction_id } })).status).toBe("pending")
      await apiError(tender.transfers.execute({ params: { order_id: created.order_id }, payload: {} }), 409, "transfer_in_progress")
      const deadline = Date.now() + 15_000
      while ((await tender.transfers.get({ params: { id: created.id } })).status === "processing" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
      expect((await tender.transfers.get({ params: { id: created.id } }))).toMatchObject({ status: "succeeded" })
      expect((await tender.transactions.get({ params: { id: created.transaction_id } })).status).toBe("completed")
      expect((await eventsOf(created.order_id)).map((e) => e.type)).toEqual(["transfer.succeeded"])
    }, 30_000)

    it("execute of an unknown order, or another account's → 404 transfer_not_found", async () => {
      expectError(await post("/v1/transfers/ord_doesnotexist0000/execute", {}), 404, "transfer_not_found")
      const created = await cardTransfer()
      const other = await Effect.runPromise(server.accounts.create({ name: "intruder", mode: "test" }))
      expectError(await post(`/v1/transfers/${created.order_id}/execute`, {}, other), 404, "transfer_not_found")
    })
  })
  describe("a create or execute answered 502 (contract.md, Idempotency; spec: \"502, 503: retry with backoff\")", () => {
    /** The sandbox's payouts refused like a refused connection while `during` runs. */
    const unreachable = async <A>(during: () => Promise<A>) => {
      down.add("payout")
      try {
        return await during()
      } finally {
        down.delete("payout")
      }
    }

    const transferOf = (orderId: string) =>
      server.run(Effect.map(TransferRepo.use((transfers) => transfers.findByOrder(orderId)), Option.getOrThrow))

    it("\"the same body with the same reference attempts again on the same order (a new transaction) and answers as a first create would\"; no transfer.failed for the 502; \"The same reference with another body is 409\"; retries at once: one attempt", async () => {
      const body = {
        amount: "75.00",
        currency: "USD",
        country: "US",
        merchant_reference: ref("unreachable"),
        payment_method: { code: "bank_transfer", details: { account_number: "000123456789", holder_name: "Ada Lovelace" } }
      }
      const byReference = `/v1/orders/by-reference/${encodeURIComponent(body.merchant_reference)}`
      const first = await unreachable(() => post("/v1/transfers", body))
      expectError(first, 502, "provider_unavailable")
      expect(first.json.message).toContain("Retry the same request")
      const pending = (await get(byReference)).json
      expect(pending).toMatchObject({ subtype: "transfer", status: "pending", transactions: [expect.stringMatching(/^txn_/)] })
      expect(await tender.transactions.get({ params: { id: pending.transactions[0] } })).toMatchObject({ kind: "transfer", status: "failed", decline_code: "provider_unavailable" })
      expect(await transferOf(pending.id)).toMatchObject({ status: "pending", transaction_id: pending.transactions[0], decline_code: null })
      expect(await eventsOf(pending.id)).toEqual([])

      // The same request again (keys in another order), still unreachable: 502 again, a second attempt.
      const { payment_method, ...rest } = body
      expectError(await unreachable(() => post("/v1/transfers", { payment_method, ...rest })), 502, "provider_unavailable")
      const again = (await get(byReference)).json
      expect(again).toMatchObject({ id: pending.id, status: "pending", transactions: [pending.transactions[0], expect.stringMatching(/^txn_/)] })
      expect(again.transactions[1]).not.toBe(pending.transactions[0])

      // Another body with the reference: 409, nothing attempted.
      expectError(await post("/v1/transfers", { ...body, amount: "75.01" }), 409, "duplicate_merchant_reference_id")
      expectError(await post("/v1/transfers", { merchant_reference: body.merchant_reference }), 409, "duplicate_merchant_reference_id")
      expectError(await post("/v1/payments", body), 409, "duplicate_merchant_reference_id")
      expect((await get(byReference)).json.transactions).toHaveLength(2)

      // The provider is back; the retry arrives ten times at once: one attempt, answered 201 as a first create.
      const replies = await Promise.all(Array.from({ length: 10 }, () => post("/v1/transfers", body)))
      const answers = replies.map((r) => (r.status < 300 ? String(r.status) : `${r.status} ${r.json.code}`))
      expect(answers.filter((a) => a === "201"), answers.join(", ")).toHaveLength(1)
      expect(answers.filter((a) => a !== "201"), answers.join(", ")).toEqual(Array(9).fill("409 duplicate_merchant_reference_id"))
      const created = replies.find((r) => r.status === 201)!.json
      expect(created).toMatchObject({ id: expect.stringMatching(/^tr_/), order_id: pending.id, status: "succeeded", merchant_reference: body.merchant_reference, payment_method: "bank_transfer" })
      expect(await tender.transfers.get({ params: { id: created.id } })).toEqual(created)
      const order = await tender.orders.get({ params: { id: pending.id } })
      expect(order).toMatchObject({ status: "succeeded", transactions: [...again.transactions, created.transaction_id] })
      expect((await eventsOf(pending.id)).map((e) => e.type)).toEqual(["transfer.succeeded"])
      expectError(await post("/v1/transfers", body), 409, "duplicate_merchant_reference_id")
    })

    it("execute answered 502: the card transfer awaits its execute again (requires_action), no transfer.failed; execute then pays it on a new transaction", async () => {
      const created = (await transfer("card", { card_token: await tokenize("4242424242424242") })).json
      const refused = await unreachable(() => post(`/v1/transfers/${created.order_id}/execute`, {}))
      expectError(refused, 502, "provider_unavailable")
      expect(refused.json.message).toContain("Execute the transfer again")
      // docs/decisions.md, "Execute answered 502 may be called again": the card is collected, only execute is
      // left, which no next_action type of the spec describes; so requires_action with next_action null.
      expect(created.next_action).toMatchObject({ type: "collect_card", client_secret: expect.any(String) })
      expect(await tender.transfers.get({ params: { id: created.id } })).toMatchObject({ status: "requires_action", transaction_id: created.transaction_id, next_action: null })
      expect((await tender.orders.get({ params: { id: created.order_id } })).status).toBe("requires_action")
      expect(await tender.transactions.get({ params: { id: created.transaction_id } })).toMatchObject({ status: "failed", decline_code: "provider_unavailable" })
      expect(await eventsOf(created.order_id)).toEqual([])

      const executed = await tender.transfers.execute({ params: { order_id: created.order_id }, payload: {} })
      expect(executed).toMatchObject({ id: created.id, status: "succeeded", payment_instrument: created.payment_instrument })
      expect(executed.transaction_id).not.toBe(created.transaction_id)
      expect(await tender.orders.get({ params: { id: created.order_id } })).toMatchObject({ status: "succeeded", transactions: [created.transaction_id, executed.transaction_id] })
      expect((await eventsOf(created.order_id)).map((e) => e.type)).toEqual(["transfer.succeeded"])
      await apiError(tender.transfers.execute({ params: { order_id: created.order_id }, payload: {} }), 409, "transfer_invalid_order_state")
    })
  })
}
