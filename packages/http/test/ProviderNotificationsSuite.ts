/**
 * Provider notifications over real HTTP (contract.md, Providers): the Stripe and Adyen wire-level
 * fakes take Tender's real calls through the official SDKs; the events and notification items they
 * build are signed with each channel's own secret and POSTed to `/providers/{channel_id}/notifications`,
 * as Stripe and Adyen would. Each provider: unverified → 401 and nothing changes; a notification that
 * arrives while the call's answer is lost records the payment (no reconciliation: its grace is a
 * minute); one that arrives after the answer, or again, changes nothing (same version, no event);
 * a disagreeing amount → 422, nothing applied. Adyen's CAPTURE settles a settling capture.
 */
import * as AdyenFake from "@tender/adapters/providers/adyen/AdyenFake"
import * as AdyenSignature from "@tender/adapters/providers/adyen/AdyenSignature"
import type { TenderConfig } from "@tender/adapters/Config"
import * as StripeFake from "@tender/adapters/providers/stripe/StripeFake"
import { signatureHeader } from "@tender/adapters/providers/stripe/StripeSignature"
import { Accounts, Channels, TransactionRepo } from "@tender/domain"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ProviderFakes, startWithProviderFakes } from "../src/testing/ProviderFakes.ts"
import type { TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, send } from "@tender/client/Testing"
import { type TenderPromiseClient, typedClient } from "./support/Typed.ts"

const WEBHOOK_SECRET = "whsec_notifysuite0123456789"
const HMAC_KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"

export const providerNotificationsSuite = (storage: Pick<TenderConfig, "storage" | "dataDir">) => {
  let server: TestServer
  let stripe: StripeFake.StripeFake
  let adyen: AdyenFake.AdyenFake
  let fakes: ProviderFakes | undefined
  let seq = 0
  const ref = (label: string) => `${label}-${Date.now()}-${++seq}`

  interface Shop {
    readonly merchant: Credentials & { account_id: string }
    readonly tender: TenderPromiseClient
    readonly channelId: string
  }
  let stripeShop: Shop
  let adyenShop: Shop

  const openShop = async (name: string, provider: "stripe" | "adyen", credentials: unknown): Promise<Shop> => {
    const merchant = await Effect.runPromise(server.accounts.create({ name, mode: "test" }))
    const channel = await server.run(
      Effect.gen(function*() {
        return yield* (yield* Channels).add(merchant.account_id, { provider, mode: "test", methods: null, currencies: null, countries: null, priority: null, credentials })
      }).pipe(Effect.provide(Channels.layer), Effect.provideService(Accounts, server.accounts))
    )
    return { merchant, tender: typedClient(server, merchant), channelId: channel.id }
  }

  /**
   * A customer-present card payment with its CVC collected at tokenization (`collect_cvv: false`):
   * it authorizes (and captures, unless manual) in the create itself.
   */
  const charge = async (shop: Shop, number: string, extra: { capture_method?: "manual"; amount?: string } = {}) => {
    const { token } = await shop.tender.testHelpers.createCardToken({ number, exp_month: 12, exp_year: 2035, cvc: "123", holder_name: "Ada Lovelace" })
    return fetchJson(shop, "/v1/payments", {
      amount: extra.amount ?? "25.00",
      currency: "EUR",
      country: "NL",
      merchant_reference: ref("notify"),
      ...(extra.capture_method === undefined ? {} : { capture_method: extra.capture_method }),
      collect_cvv: false,
      payment_method: { code: "card", details: { card_token: token } }
    })
  }
  const fetchJson = (shop: Shop, path: string, body: unknown) => send(server, shop.merchant, "POST", path, { body: JSON.stringify(body) })

  const deliver = (channelId: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${server.baseUrl}/providers/${channelId}/notifications`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })

  const transaction = (id: string) =>
    server.run(Effect.gen(function*() {
      return Option.getOrThrow(yield* (yield* TransactionRepo).findAny(id))
    }))
  const transactionsOf = (orderId: string) =>
    server.run(Effect.gen(function*() {
      return yield* (yield* TransactionRepo).listByOrder(orderId)
    }))
  const eventsOf = async (orderId: string) => (await Effect.runPromise(server.events(orderId))).map((e) => e.type)

  /** Everything a notification could change about an order: its transactions as stored, and its events. */
  /**
   * What a refused notification must leave as it was: the transactions and the events. Without the
   * settlement worker's own bookkeeping, which moves on its schedule (every second it may ask about
   * a settling capture and record when to ask next: `settlement_check_at`, and with it
   * `updated_at` and `version`), whatever the notifications do.
   */
  const stateOf = async (orderId: string) => ({
    transactions: (await transactionsOf(orderId)).map(({ settlement_check_at: _, updated_at: __, version: ___, ...rest }) => rest),
    events: await eventsOf(orderId)
  })

  const expectEnvelope = async (response: Response, status: number, code: string) => {
    const body = await response.json() as { code: string; request_id: string }
    expect({ status: response.status, code: body.code }).toEqual({ status, code })
    expect(body.request_id).toMatch(/^req_/)
  }

  // --- Stripe ---------------------------------------------------------------------------------

  const stripeEvent = (type: string, reference: string) => {
    const found = stripe.events().filter((e) => e.type === type && JSON.parse(e.payload).data.object.metadata?.tender_reference === reference).at(-1)
    if (found === undefined) throw new Error(`The Stripe fake emitted no ${type} for ${reference}`)
    return found.payload
  }
  const signedStripe = (payload: string, secret = WEBHOOK_SECRET) => ({ "stripe-signature": signatureHeader(payload, secret, Math.floor(Date.now() / 1000)) })
  const deliverStripe = (payload: string, secret = WEBHOOK_SECRET, channelId = stripeShop.channelId) => deliver(channelId, payload, signedStripe(payload, secret))

  /**
   * A charge whose answer the fake drops after applying it: the attempt stays in doubt. Twice: the
   * Stripe SDK resends a closed connection once under the same key (stripe-node #1040).
   */
  const dropStripeAnswer = () => stripe.fault("create", "applyThenDrop", 2)
  const stripeInDoubt = async (extra: { capture_method?: "manual" } = {}) => {
    dropStripeAnswer()
    const reply = await charge(stripeShop, "4242424242424242", extra)
    expect({ status: reply.status, code: reply.json?.code }).toEqual({ status: 409, code: "card_payment_in_progress" })
    const intent = stripe.paymentIntents().at(-1)!
    const txn = await transaction(intent.metadata["tender_reference"]!)
    expect(txn.pending_call?.operation).toBe("authorize")
    return { txn, intent }
  }

  // --- Adyen ----------------------------------------------------------------------------------

  type Item = ReturnType<AdyenFake.AdyenFake["notifications"]>[number]
  const adyenItem = (eventCode: string, pspReference: string) => {
    const found = adyen.notifications().filter((n) => n.eventCode === eventCode && (n.pspReference === pspReference || n.originalReference === pspReference)).at(-1)
    if (found === undefined) throw new Error(`The Adyen fake sent no ${eventCode} for ${pspReference}`)
    return found
  }
  const adyenBody = (item: Item, key = HMAC_KEY) => {
    const { additionalData: _unsigned, ...fields } = item
    return JSON.stringify({ live: "false", notificationItems: [{ NotificationRequestItem: { ...fields, additionalData: { hmacSignature: AdyenSignature.sign(fields, key) } } }] })
  }
  const deliverAdyen = (item: Item, key = HMAC_KEY) => deliver(adyenShop.channelId, adyenBody(item, key))

  const adyenInDoubt = async () => {
    adyen.fault("payments", "applyThenDrop")
    const reply = await charge(adyenShop, "4242424242424242")
    expect({ status: reply.status, code: reply.json?.code }).toEqual({ status: 409, code: "card_payment_in_progress" })
    const payment = adyen.payments().at(-1)!
    const txn = await transaction(payment.merchantReference)
    expect(txn.pending_call?.operation).toBe("authorize")
    return { txn, payment }
  }

  beforeAll(async () => {
    fakes = await startWithProviderFakes(storage)
    ;({ server, stripe, adyen } = fakes)
    stripeShop = await openShop("stripe shop", "stripe", { secret_key: "sk_test_notifysuite", webhook_secret: WEBHOOK_SECRET })
    adyenShop = await openShop("adyen shop", "adyen", {
      api_key: adyen.apiKey,
      merchant_account: adyen.merchantAccount,
      hmac_key: HMAC_KEY
    })
  }, 60_000)

  afterAll(() => fakes?.close())

  describe("the route", () => {
    it("is outside /v1 (no API key), POST only (405 with Allow), and caps the body (413) before verifying anything", async () => {
      const read = await fetch(`${server.baseUrl}/providers/${stripeShop.channelId}/notifications`)
      expect({ status: read.status, allow: read.headers.get("allow") }).toEqual({ status: 405, allow: "POST" })
      await expectEnvelope(read, 405, "method_not_allowed")
      const huge = JSON.stringify({ padding: "x".repeat(1024 * 1024 + 1) })
      await expectEnvelope(await deliver(stripeShop.channelId, huge, signedStripe(huge)), 413, "payload_too_large")
    })
  })

  describe("Stripe channel", () => {
    it("unverified (wrong secret, no signature, unknown channel) → 401 invalid_signature, nothing applied; the signed event then records the payment in doubt", async () => {
      const { txn, intent } = await stripeInDoubt()
      const payload = stripeEvent("payment_intent.succeeded", txn.id)
      const before = await stateOf(txn.order_id)

      await expectEnvelope(await deliverStripe(payload, "whsec_someoneelse0000"), 401, "invalid_signature")
      await expectEnvelope(await deliver(stripeShop.channelId, payload), 401, "invalid_signature")
      // A channel that does not exist answers exactly as a bad signature does.
      await expectEnvelope(await deliverStripe(payload, WEBHOOK_SECRET, "ch_doesnotexist00000000"), 401, "invalid_signature")
      // Signed, but a byte of the body changed.
      await expectEnvelope(await deliver(stripeShop.channelId, payload.replace("\"amount\": 2500", "\"amount\": 2501"), signedStripe(payload)), 401, "invalid_signature")
      expect(await stateOf(txn.order_id)).toEqual(before)

      const accepted = await deliverStripe(payload)
      expect(accepted.status).toBe(200)
      expect(await accepted.json()).toEqual({ received: true })
      const recorded = await transaction(txn.id)
      expect(recorded).toMatchObject({ status: "completed", pending_call: null, provider_transaction_id: intent.id })
      expect(await eventsOf(txn.order_id)).toContain("payment.succeeded")
    })

    // contract.md, Providers: "Provider notifications arrive at `POST /providers/{channel_id}/notifications`,
    // verified with that provider's own signature scheme (unverified: 401, nothing applied)."
    it("Stripe's signature scheme (tolerance 300 s): a `t` beyond it in the past or in the future → 401 invalid_signature, nothing applied; 200 s ahead is within it", async () => {
      const { txn, intent } = await stripeInDoubt()
      const payload = stripeEvent("payment_intent.succeeded", txn.id)
      const before = await stateOf(txn.order_id)
      const now = Math.floor(Date.now() / 1000)
      const at = (t: number) => deliver(stripeShop.channelId, payload, { "stripe-signature": signatureHeader(payload, WEBHOOK_SECRET, t) })
      for (const t of [now - 400, now + 400, now + 86_400]) {
        await expectEnvelope(await at(t), 401, "invalid_signature")
      }
      expect(await stateOf(txn.order_id)).toEqual(before)
      expect((await at(now + 200)).status).toBe(200)
      expect(await transaction(txn.id)).toMatchObject({ status: "completed", pending_call: null, provider_transaction_id: intent.id })
    })

    it("a redelivered notification changes nothing: same version, no second event", async () => {
      const { txn } = await stripeInDoubt()
      const payload = stripeEvent("payment_intent.succeeded", txn.id)
      expect((await deliverStripe(payload)).status).toBe(200)
      const once = await stateOf(txn.order_id)
      expect(once.transactions.find((t) => t.id === txn.id)?.status).toBe("completed")
      expect((await deliverStripe(payload)).status).toBe(200)
      expect(await stateOf(txn.order_id)).toEqual(once)
    })

    it("after the response recorded the payment, its notifications change nothing", async () => {
      const reply = await charge(stripeShop, "4242424242424242", { capture_method: "manual" })
      expect(reply.status).toBe(200)
      const orderId = reply.json.order_id as string
      const before = await stateOf(orderId)
      const txnId = reply.json.transaction_id as string
      const response = await deliverStripe(stripeEvent("payment_intent.amount_capturable_updated", txnId))
      expect(response.status).toBe(200)
      expect(await stateOf(orderId)).toEqual(before)
    })

    it("a declined payment in doubt is recorded declined from payment_intent.payment_failed", async () => {
      dropStripeAnswer()
      const reply = await charge(stripeShop, "4000000000009995")
      expect(reply.status).toBe(409)
      const txnId = stripe.paymentIntents().at(-1)!.metadata["tender_reference"]!
      expect((await deliverStripe(stripeEvent("payment_intent.payment_failed", txnId))).status).toBe(200)
      expect(await transaction(txnId)).toMatchObject({ status: "failed", decline_code: "insufficient_funds", pending_call: null })
    })

    it("a refund whose answer was lost is recorded from refund.created (its metadata names the refund)", async () => {
      const reply = await charge(stripeShop, "4242424242424242", { amount: "12.00" })
      expect(reply.status).toBe(200)
      const orderId = reply.json.order_id as string
      stripe.fault("refund", "applyThenDrop", 2)
      await fetchJson(stripeShop, "/v1/refunds", { order_id: orderId, amount: "2.00" })
      const refundTxn = (await transactionsOf(orderId)).find((t) => t.kind === "refund")!
      expect(refundTxn.pending_call?.operation).toBe("refund")
      const made = stripe.refunds().find((r) => r.metadata["tender_reference"] === refundTxn.id)!

      const created = stripe.events().filter((e) => e.type === "refund.created" && JSON.parse(e.payload).data.object.id === made.id).at(-1)!
      expect((await deliverStripe(created.payload)).status).toBe(200)
      expect(await transaction(refundTxn.id)).toMatchObject({ status: "completed", pending_call: null, provider_transaction_id: made.id })
    })

    it("an amount that disagrees → 422 validation_error, nothing applied", async () => {
      const { txn } = await stripeInDoubt()
      const payload = stripeEvent("payment_intent.succeeded", txn.id)
      const event = JSON.parse(payload)
      event.data.object.amount = 9999
      const forged = JSON.stringify(event)
      const before = await stateOf(txn.order_id)
      await expectEnvelope(await deliverStripe(forged), 422, "validation_error")
      event.data.object.amount = 2500
      event.data.object.currency = "usd"
      await expectEnvelope(await deliverStripe(JSON.stringify(event)), 422, "validation_error")
      expect(await stateOf(txn.order_id)).toEqual(before)
    })

    it("an event about a payment made outside Tender, or another account's, is acknowledged and applies nothing", async () => {
      const { txn } = await stripeInDoubt()
      const payload = stripeEvent("payment_intent.succeeded", txn.id)
      const before = await stateOf(txn.order_id)
      const other = await openShop("other stripe shop", "stripe", { secret_key: "sk_test_othershop", webhook_secret: WEBHOOK_SECRET })
      expect((await deliverStripe(payload, WEBHOOK_SECRET, other.channelId)).status).toBe(200)
      const outside = JSON.parse(payload)
      delete outside.data.object.metadata.tender_reference
      expect((await deliverStripe(JSON.stringify(outside))).status).toBe(200)
      expect(await stateOf(txn.order_id)).toEqual(before)
    })
  })

  describe("Adyen channel", () => {
    it("unverified (wrong key, unsigned, unknown channel) → 401 invalid_signature, nothing applied; the signed AUTHORISATION then records the payment in doubt", async () => {
      const { txn, payment } = await adyenInDoubt()
      const item = adyenItem("AUTHORISATION", payment.pspReference)
      const before = await stateOf(txn.order_id)

      await expectEnvelope(await deliverAdyen(item, "00FF".repeat(16)), 401, "invalid_signature")
      await expectEnvelope(await deliver(adyenShop.channelId, JSON.stringify({ live: "false", notificationItems: [{ NotificationRequestItem: item }] })), 401, "invalid_signature")
      await expectEnvelope(await deliver("ch_doesnotexist00000000", adyenBody(item)), 401, "invalid_signature")
      expect(await stateOf(txn.order_id)).toEqual(before)

      const accepted = await deliverAdyen(item)
      expect(accepted.status).toBe(200)
      expect(await accepted.text()).toBe("[accepted]")
      expect(await transaction(txn.id)).toMatchObject({ status: "completed", pending_call: null, provider_transaction_id: payment.pspReference })
      expect(await eventsOf(txn.order_id)).toContain("payment.succeeded")

      const once = await stateOf(txn.order_id)
      expect(await (await deliverAdyen(item)).text()).toBe("[accepted]")
      expect(await stateOf(txn.order_id)).toEqual(once)
    })

    it("after the response recorded the payment, its AUTHORISATION changes nothing", async () => {
      const reply = await charge(adyenShop, "4242424242424242", { capture_method: "manual" })
      expect(reply.status).toBe(200)
      const orderId = reply.json.order_id as string
      const before = await stateOf(orderId)
      const payment = adyen.payments().find((p) => p.merchantReference === reply.json.transaction_id)!
      expect(await (await deliverAdyen(adyenItem("AUTHORISATION", payment.pspReference))).text()).toBe("[accepted]")
      expect(await stateOf(orderId)).toEqual(before)
      // Only what would be applied is checked against the transaction: a notice about what is recorded
      // already is acknowledged whatever amount it reports (Adyen's refused CANCELLATION after a
      // partial capture reports the payment's whole amount), never refused for Adyen to retry for ever.
      const item = adyenItem("AUTHORISATION", payment.pspReference)
      expect(await (await deliverAdyen({ ...item, amount: { value: item.amount.value + 1, currency: item.amount.currency } })).text()).toBe("[accepted]")
      expect(await stateOf(orderId)).toEqual(before)
    })

    it("an amount that disagrees → 422 validation_error, nothing applied", async () => {
      const { txn, payment } = await adyenInDoubt()
      const item = adyenItem("AUTHORISATION", payment.pspReference)
      const before = await stateOf(txn.order_id)
      await expectEnvelope(await deliverAdyen({ ...item, amount: { value: item.amount.value + 1, currency: item.amount.currency } }), 422, "validation_error")
      await expectEnvelope(await deliverAdyen({ ...item, amount: { value: item.amount.value, currency: "USD" } }), 422, "validation_error")
      expect(await stateOf(txn.order_id)).toEqual(before)
    })

    // contract.md: "A notification whose amount or currency disagrees with the transaction is 422 and is not
    // applied"; a void releases "what remains" (spec) and Adyen's /cancels takes no amount, so its
    // CANCELLATION reports the payment's whole amount: it agrees with a void from what the void releases
    // up to what the authorization held.
    it("a void in doubt while a capture settles is recorded from its CANCELLATION, which carries the payment's whole amount (once); beyond the authorization, below the void, or another currency → 422", async () => {
      const reply = await charge(adyenShop, "4242424242424242", { capture_method: "manual", amount: "40.00" })
      expect(reply.status).toBe(200)
      const orderId = reply.json.order_id as string
      expect((await fetchJson(adyenShop, "/v1/payments/capture", { order_id: orderId, amount: "15.00", final: false })).status).toBe(200)
      adyen.fault("cancels", "applyThenDrop")
      const lost = await fetchJson(adyenShop, "/v1/payments/void", { order_id: orderId })
      expect({ status: lost.status, code: lost.json?.code }).toEqual({ status: 409, code: "card_payment_in_progress" })
      const voidTxn = (await transactionsOf(orderId)).find((t) => t.kind === "void")!
      expect([voidTxn.amount, voidTxn.pending_call?.operation]).toEqual([2500, "void"])
      const payment = adyen.payments().find((p) => p.merchantReference === reply.json.transaction_id)!
      const item = adyenItem("CANCELLATION", payment.pspReference)
      expect(item.amount).toEqual({ value: 4000, currency: "EUR" })

      const before = await stateOf(orderId)
      for (const amount of [{ value: 4001, currency: "EUR" }, { value: 2499, currency: "EUR" }, { value: 4000, currency: "USD" }]) {
        await expectEnvelope(await deliverAdyen({ ...item, amount }), 422, "validation_error")
      }
      expect(await stateOf(orderId)).toEqual(before)

      // Applied as it says: here Adyen's refusal (the fake, as Adyen, cancels no payment once part of it is captured).
      expect(item.success).toBe("false")
      expect(await (await deliverAdyen(item)).text()).toBe("[accepted]")
      expect(await transaction(voidTxn.id)).toMatchObject({ status: "failed", decline_code: "void_refused", pending_call: null })
      const after = await stateOf(orderId)
      expect(await (await deliverAdyen(item)).text()).toBe("[accepted]")
      expect(await stateOf(orderId)).toEqual(after)
    })

    it("CAPTURE settles a settling capture (once: a redelivery changes nothing)", async () => {
      const reply = await charge(adyenShop, "4242424242424242", { capture_method: "manual", amount: "40.00" })
      expect(reply.status).toBe(200)
      const orderId = reply.json.order_id as string
      const captured = await fetchJson(adyenShop, "/v1/payments/capture", { order_id: orderId })
      expect(captured.status).toBe(200)
      const capture = (await transactionsOf(orderId)).find((t) => t.kind === "capture")!
      expect(capture).toMatchObject({ status: "processing", pending_call: null })
      const payment = adyen.payments().find((p) => p.merchantReference === reply.json.transaction_id)!
      const item = adyenItem("CAPTURE", payment.pspReference)

      // A refused delivery leaves nothing behind: the settlement worker (every second) finds nothing to settle from.
      await expectEnvelope(await deliverAdyen({ ...item, amount: { value: item.amount.value + 1, currency: item.amount.currency } }), 422, "validation_error")
      await new Promise((resolve) => setTimeout(resolve, 2_500))
      expect(await transaction(capture.id)).toMatchObject({ status: "processing" })

      expect(await (await deliverAdyen(item)).text()).toBe("[accepted]")
      expect(await transaction(capture.id)).toMatchObject({ status: "completed" })
      const settled = await stateOf(orderId)
      expect(settled.events).toContain("payment.succeeded")
      expect(await (await deliverAdyen(item)).text()).toBe("[accepted]")
      expect(await stateOf(orderId)).toEqual(settled)
    })

    it("a capture whose answer was lost is recorded from its CAPTURE notification (Adyen names it by the payment's reference)", async () => {
      const reply = await charge(adyenShop, "4242424242424242", { capture_method: "manual", amount: "30.00" })
      expect(reply.status).toBe(200)
      const orderId = reply.json.order_id as string
      adyen.fault("captures", "applyThenDrop")
      const lost = await fetchJson(adyenShop, "/v1/payments/capture", { order_id: orderId })
      expect({ status: lost.status, code: lost.json?.code }).toEqual({ status: 409, code: "card_payment_in_progress" })
      const capture = (await transactionsOf(orderId)).find((t) => t.kind === "capture")!
      expect(capture.pending_call?.operation).toBe("capture")
      const payment = adyen.payments().find((p) => p.merchantReference === reply.json.transaction_id)!
      const item = adyenItem("CAPTURE", payment.pspReference)
      expect(item.merchantReference).toBe(reply.json.transaction_id)

      expect(await (await deliverAdyen(item)).text()).toBe("[accepted]")
      expect(await transaction(capture.id)).toMatchObject({
        status: "completed",
        pending_call: null,
        provider_transaction_id: `${payment.pspReference}/${item.pspReference}`
      })
    })

    it("REFUND settles a pending refund (once: a redelivery changes nothing)", async () => {
      const reply = await charge(adyenShop, "4242424242424242", { amount: "20.00" })
      expect(reply.status).toBe(200)
      const orderId = reply.json.order_id as string
      const refund = await fetchJson(adyenShop, "/v1/refunds", { order_id: orderId, amount: "5.00" })
      expect({ status: refund.status, state: refund.json.status }).toEqual({ status: 201, state: "pending" })
      const refundTxn = await transaction(refund.json.transaction_id as string)
      // contract.md: a refund "waiting at the provider (queued, settling later) reads pending".
      expect(refundTxn).toMatchObject({ status: "pending", pending_call: null })
      const item = adyenItem("REFUND", refundTxn.provider_transaction_id!)
      expect(item.amount).toEqual({ value: 500, currency: "EUR" })

      expect(await (await deliverAdyen(item)).text()).toBe("[accepted]")
      expect(await transaction(refundTxn.id)).toMatchObject({ status: "completed" })
      const settled = await stateOf(orderId)
      expect(await (await deliverAdyen(item)).text()).toBe("[accepted]")
      expect(await stateOf(orderId)).toEqual(settled)
    })

    it("CAPTURE_FAILED fails a settling capture (capture_failed); the authorization stands and captures again", async () => {
      const reply = await charge(adyenShop, "4242424242424242", { capture_method: "manual", amount: "35.00" })
      expect(reply.status).toBe(200)
      const orderId = reply.json.order_id as string
      expect((await fetchJson(adyenShop, "/v1/payments/capture", { order_id: orderId })).status).toBe(200)
      const capture = (await transactionsOf(orderId)).find((t) => t.kind === "capture")!
      const payment = adyen.payments().find((p) => p.merchantReference === reply.json.transaction_id)!
      // The scheme rejected the capture after Adyen accepted it: Adyen reports CAPTURE_FAILED (success "true").
      const failed = { ...adyenItem("CAPTURE", payment.pspReference), eventCode: "CAPTURE_FAILED" }
      expect(await (await deliverAdyen(failed)).text()).toBe("[accepted]")
      expect(await transaction(capture.id)).toMatchObject({ status: "failed", decline_code: "capture_failed", pending_call: null })
      const after = await stateOf(orderId)
      expect(after.events).not.toContain("payment.succeeded")
      expect(await (await deliverAdyen(failed)).text()).toBe("[accepted]")
      expect(await stateOf(orderId)).toEqual(after)
      // Nothing was captured: the authorization can be captured again.
      expect((await fetchJson(adyenShop, "/v1/payments/capture", { order_id: orderId })).status).toBe(200)
    })

    it("REFUND_FAILED fails a pending refund (refund_failed): nothing refunded", async () => {
      const reply = await charge(adyenShop, "4242424242424242", { amount: "22.00" })
      expect(reply.status).toBe(200)
      const orderId = reply.json.order_id as string
      const refund = await fetchJson(adyenShop, "/v1/refunds", { order_id: orderId, amount: "5.00" })
      expect(refund.status).toBe(201)
      const refundTxn = await transaction(refund.json.transaction_id as string)
      const failed = { ...adyenItem("REFUND", refundTxn.provider_transaction_id!), eventCode: "REFUND_FAILED" }
      expect(await (await deliverAdyen(failed)).text()).toBe("[accepted]")
      expect(await transaction(refundTxn.id)).toMatchObject({ status: "failed", decline_code: "refund_failed" })
      const read = await send(server, adyenShop.merchant, "GET", `/v1/refunds/${refund.json.id as string}`)
      expect(read.json).toMatchObject({ status: "failed" })
    })
  })
}
