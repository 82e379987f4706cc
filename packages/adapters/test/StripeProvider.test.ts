/**
 * The Stripe provider (mapping layer + official SDK) against the wire-level fake: the domain's
 * PaymentProvider answers for approvals, declines, 3-D Secure, captures, voids, refunds, and the
 * ambiguous cases reconciliation resolves by lookup, never by a second charge.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type CardDetails, type LookupResult, PaymentProvider } from "@tender/domain"
import { Effect } from "effect"
import Stripe from "stripe"
import { approved, failureOf, run, scenarios, unsupportedCalls } from "../src/providers/fake/ProviderScenarios.ts"
import * as StripeFake from "../src/providers/stripe/StripeFake.ts"
import { layer, makeStripeProvider, tagOf } from "../src/providers/stripe/StripeProvider.ts"

type Port = PaymentProvider["Service"]

const RETURN_URL = "https://tender.test/v1/providers/stripe/3ds-return"
let fake: StripeFake.StripeFake
let provider: Port
/** Gives up on an answer after 300 ms: the `timeout` fault's client. */
let impatient: Port

const connect = (server: StripeFake.StripeFake, timeoutMs = 10_000) =>
  makeStripeProvider({ secretKey: "sk_test_fake", ...server.sdkOptions, timeoutMs, mode: "test", returnUrl: RETURN_URL })

beforeAll(async () => {
  fake = await StripeFake.start()
  provider = connect(fake)
  impatient = connect(fake, 300)
})
afterAll(() => fake.close())

const card = (number: string): CardDetails => ({ number, exp_month: 12, exp_year: 2034, cvc: "123" })
const intentsOf = (reference: string) => fake.paymentIntents().filter((pi) => pi.metadata["tender_reference"] === reference)
const { acrossRefusal, authorize, capture, lostAndRetried, lostAuthorization, newReference } = scenarios({
  provider: () => provider,
  card,
  held: (reference) => intentsOf(reference).map((pi) => pi.id)
})

describe("Stripe provider on the fake", () => {
  it("approves a card, automatic capture settling at once", async () => {
    const reference = newReference()
    const result = await run(authorize("4242424242424242", { capture: true, reference }))
    expect(intentsOf(reference)).toMatchObject([{ status: "succeeded", amount_received: 1000, currency: "eur" }])
    expect(result).toEqual({ _tag: "Approved", provider_transaction_id: intentsOf(reference)[0]!.id, multicapture: false })
  })

  it("serves as the PaymentProvider service through its layer", async () => {
    const config = { secretKey: "sk_test_layer", ...fake.sdkOptions, mode: "live" as const, returnUrl: RETURN_URL }
    const [name, mode] = await run(Effect.provide(Effect.map(Effect.service(PaymentProvider), (p) => [p.name, p.mode] as const), layer(config)))
    expect([name, mode]).toEqual(["stripe", "live"])
  })

  it("maps declines to the normalized decline codes, keeping the PaymentIntent's id", async () => {
    for (const [number, code] of [
      ["4000000000009995", "insufficient_funds"],
      ["4000000000000002", "card_declined"],
      ["4000000000009987", "card_declined"],
      ["4000000000000069", "expired_card"],
      ["4000000000000127", "incorrect_cvc"],
      ["4242424242424241", "invalid_number"]
    ] as const) {
      const reference = newReference()
      const result = await run(authorize(number, { reference }))
      expect(result, number).toEqual({ _tag: "Declined", decline_code: code, provider_transaction_id: intentsOf(reference)[0]!.id })
    }
  })

  it("3-D Secure: a challenge URL on the fake; approved, the authorization after it is approved", async () => {
    const reference = newReference()
    const challenge = await run(authorize("4000000000003220", { reference }))
    if (challenge._tag !== "ChallengeRequired") throw new Error(JSON.stringify(challenge))
    const page = await fetch(challenge.challenge_url)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain("Complete authentication")
    const answered = await fetch(new URL(`/3ds/${challenge.provider_transaction_id}`, fake.url), {
      method: "POST",
      body: new URLSearchParams({ answer: "approve" }),
      redirect: "manual"
    })
    expect(answered.status).toBe(303)
    const back = new URL(answered.headers.get("location")!)
    expect(`${back.origin}${back.pathname}`).toBe(RETURN_URL)
    expect(back.searchParams.get("payment_intent")).toBe(challenge.provider_transaction_id)
    expect(back.searchParams.get("redirect_status")).toBe("succeeded")
    const after = await run(authorize("4000000000003220", { reference, key: `${reference}:authorize:2`, authenticated: true }))
    expect(after).toEqual({ _tag: "Approved", provider_transaction_id: challenge.provider_transaction_id, multicapture: true })
    expect(intentsOf(reference)).toHaveLength(1)
    // The second round's call is one lookup can answer for.
    expect(await run(provider.lookup(`${reference}:authorize:2`))).toEqual({ _tag: "Authorize", result: after })
  })

  it("3-D Secure: denied, the authorization after it is declined authentication_failed", async () => {
    const reference = newReference()
    const challenge = await run(authorize("4000000000003220", { reference }))
    if (challenge._tag !== "ChallengeRequired") throw new Error(JSON.stringify(challenge))
    const answered = await fetch(new URL(`/3ds/${challenge.provider_transaction_id}`, fake.url), {
      method: "POST",
      body: new URLSearchParams({ answer: "deny" }),
      redirect: "manual"
    })
    expect(new URL(answered.headers.get("location")!).searchParams.get("redirect_status")).toBe("failed")
    const after = await run(authorize("4000000000003220", { reference, key: `${reference}:authorize:2`, authenticated: true }))
    expect(after).toEqual({ _tag: "Declined", decline_code: "authentication_failed", provider_transaction_id: challenge.provider_transaction_id })
  })

  it("an authorization after a challenge with no PaymentIntent to find is not applied: ProviderUnavailable", async () => {
    const reference = newReference()
    const exit = await failureOf(authorize("4000000000003220", { reference, key: `${reference}:authorize:2`, authenticated: true }))
    expect(exit._tag).toBe("ProviderUnavailable")
    expect(intentsOf(reference)).toEqual([])
  })

  it("a declined authorization retried under its key replays the decline: one PaymentIntent", async () => {
    const reference = newReference()
    const first = await run(authorize("4000000000000002", { reference }))
    expect(await run(authorize("4000000000000002", { reference }))).toEqual(first)
    expect(intentsOf(reference)).toHaveLength(1)
  })

  it("manual capture: a partial capture keeps the rest authorized (multicapture), the final one settles it", async () => {
    const reference = newReference()
    const auth = approved(await run(authorize("4242424242424242", { reference })))
    expect(auth.multicapture).toBe(true)
    expect(await run(capture(auth.provider_transaction_id, 300, false).answer)).toEqual({ _tag: "Settled", provider_transaction_id: auth.provider_transaction_id })
    expect(intentsOf(reference)[0]).toMatchObject({ status: "requires_capture", amount_received: 300, amount_capturable: 700 })
    expect((await run(capture(auth.provider_transaction_id, 800, true).answer))).toEqual({ _tag: "Refused", decline_code: "amount_too_large" })
    expect((await run(capture(auth.provider_transaction_id, 500, true).answer))._tag).toBe("Settled")
    expect(intentsOf(reference)[0]).toMatchObject({ status: "succeeded", amount_received: 800, amount_capturable: 0 })
    expect((await run(capture(auth.provider_transaction_id, 100, true).answer))).toEqual({ _tag: "Refused", decline_code: "capture_refused" })
  })

  it("a non-final capture of an authorization without multicapture is refused multicapture_not_supported", async () => {
    // Created past the adapter (which always asks for multicapture) to get an authorization without it.
    const sdk = new Stripe("sk_test_fake", { ...fake.sdkOptions, maxNetworkRetries: 0, telemetry: false })
    const intent = await sdk.paymentIntents.create({
      amount: 1000,
      currency: "eur",
      confirm: true,
      capture_method: "manual",
      payment_method_data: { type: "card", card: card("4242424242424242") }
    } as unknown as Stripe.PaymentIntentCreateParams)
    expect(await run(capture(intent.id, 300, false).answer)).toEqual({ _tag: "Refused", decline_code: "multicapture_not_supported" })
    expect(await run(capture(intent.id, 300, true).answer)).toEqual({ _tag: "Settled", provider_transaction_id: intent.id })
  })

  it("voids an authorization; a second void (another key) is refused", async () => {
    const reference = newReference()
    const auth = approved(await run(authorize("4242424242424242", { reference })))
    const voidIt = (key: string) => provider.voidCard({ reference, idempotency_key: key, authorization: auth.provider_transaction_id, amount: 1000 })
    expect(await run(voidIt(`${reference}:void`))).toEqual({ _tag: "Voided", provider_transaction_id: auth.provider_transaction_id })
    expect(intentsOf(reference)[0]?.status).toBe("canceled")
    expect(await run(voidIt(`${reference}:void:2`))).toEqual({ _tag: "Refused", decline_code: "void_refused" })
  })

  it("refunds part, then the rest; a further refund is refused; a pending refund settles later", async () => {
    const auth = approved(await run(authorize("4242424242424242", { capture: true })))
    const refund = (amount: number) => {
      const reference = newReference()
      return provider.refund({ reference, idempotency_key: `${reference}:refund`, payment: auth.provider_transaction_id, amount, currency: "EUR" })
    }
    const first = await run(refund(400))
    expect(first._tag).toBe("Paid")
    expect((await run(refund(600)))._tag).toBe("Paid")
    expect(await run(refund(1))).toEqual({ _tag: "Refused", decline_code: "already_refunded" })
    expect(fake.refunds().filter((r) => r.payment_intent === auth.provider_transaction_id).map((r) => r.amount).sort()).toEqual([400, 600])

    const slow = approved(await run(authorize("4000000000007726", { capture: true })))
    const reference = newReference()
    const pending = await run(provider.refund({ reference, idempotency_key: `${reference}:refund`, payment: slow.provider_transaction_id, amount: 1000, currency: "EUR" }))
    if (pending._tag !== "Pending") throw new Error(JSON.stringify(pending))
    expect(await run(provider.settlement(pending.provider_transaction_id))).toBe("pending")
    fake.settleRefund(pending.provider_transaction_id)
    expect(await run(provider.settlement(pending.provider_transaction_id))).toBe("settled")
  })

  it("timeout after sending → Unknown; lookup finds the charge; a retry replays it: one PaymentIntent", async () => {
    fake.fault("create", "timeout")
    const outcome = await lostAndRetried("4242424242424242", { via: impatient })
    const approval = { _tag: "Approved", provider_transaction_id: outcome.held[0], multicapture: true }
    expect(outcome).toEqual({ lost: "Unknown", found: { _tag: "Authorize", result: approval }, retried: approval, held: [approval.provider_transaction_id] })
  })

  it("one dropped answer is absorbed: the SDK resends a closed connection once, under the same key, and Stripe replays", async () => {
    const reference = newReference()
    fake.fault("create", "applyThenDrop")
    approved(await run(authorize("4242424242424242", { reference })))
    expect(intentsOf(reference)).toHaveLength(1)
  })

  // Twice: the call and the SDK's one resend (stripe-node #1040) both lose their answer.
  it("applyThenDrop → Unknown → lookup: approved, captured, voided, refunded; never applied twice", async () => {
    fake.fault("create", "applyThenDrop", 2)
    const { found: authorized, lost, reference } = await lostAuthorization("4242424242424242")
    expect(lost._tag).toBe("Unknown")
    if (authorized._tag !== "Authorize" || authorized.result._tag !== "Approved") throw new Error(JSON.stringify(authorized))
    const pi = authorized.result.provider_transaction_id
    expect(intentsOf(reference)).toHaveLength(1)

    fake.fault("capture", "applyThenDrop", 2)
    const partial = capture(pi, 400, false)
    expect((await run(partial.answer))._tag).toBe("Unknown")
    expect(await run(provider.lookup(partial.key))).toEqual({ _tag: "Capture", result: { _tag: "Settled", provider_transaction_id: pi } })
    expect(intentsOf(reference)[0]).toMatchObject({ amount_received: 400, status: "requires_capture" })

    fake.fault("refund", "applyThenDrop", 2)
    const refundKey = `${newReference()}:refund`
    expect((await run(provider.refund({ reference, idempotency_key: refundKey, payment: pi, amount: 150, currency: "EUR" })))._tag).toBe("Unknown")
    const refunded = await run(provider.lookup(refundKey))
    const [made, ...others] = fake.refunds().filter((r) => r.payment_intent === pi)
    expect(others).toEqual([])
    expect(refunded).toEqual({ _tag: "Refund", result: { _tag: "Paid", provider_transaction_id: made!.id } })

    fake.fault("cancel", "applyThenDrop", 2)
    const voidKey = `${newReference()}:void`
    expect((await run(provider.voidCard({ reference, idempotency_key: voidKey, authorization: pi, amount: 600 })))._tag).toBe("Unknown")
    expect(await run(provider.lookup(voidKey))).toEqual({ _tag: "Void", result: { _tag: "Voided", provider_transaction_id: pi } })
    expect(intentsOf(reference)[0]?.status).toBe("canceled")
  })

  it("lookup of a key Stripe never received fences it: NotReceived, again NotReceived, and the late call is refused unapplied", async () => {
    const reference = newReference()
    const key = `${reference}:authorize`
    const first: LookupResult = await run(provider.lookup(key))
    expect(first).toEqual({ _tag: "NotReceived" })
    expect(await run(provider.lookup(key))).toEqual({ _tag: "NotReceived" })
    const late = await failureOf(authorize("4242424242424242", { reference }))
    expect(late._tag).toBe("ProviderUnavailable")
    expect(intentsOf(reference)).toEqual([])
    const fences = fake.paymentIntents().filter((pi) => pi.metadata["tender_fence"] === "true")
    expect(fences.every((pi) => pi.status === "canceled" && pi.latest_charge === null)).toBe(true)
  })

  it("a 5xx → Unknown; lookup cannot tell yet (received, nothing found) → ProviderUnavailable, asked again later", async () => {
    const reference = newReference()
    fake.fault("create", "5xx")
    expect((await run(authorize("4242424242424242", { reference })))._tag).toBe("Unknown")
    expect((await failureOf(provider.lookup(`${reference}:authorize`)))._tag).toBe("ProviderUnavailable")
    expect(intentsOf(reference)).toEqual([])
  })

  it("connection refused → ProviderUnavailable for calls and lookups, until it listens again", async () => {
    const down = await StripeFake.start()
    const unavailable = { _tag: "ProviderUnavailable" }
    expect(await acrossRefusal(down, connect(down), "4242424242424242")).toMatchObject({ refused: [unavailable, unavailable], after: { _tag: "Approved" } })
    // Only the authorization made once it listened again reached the fake.
    expect(down.paymentIntents()).toHaveLength(1)
  })

  it("tags each call's PaymentIntent with a metadata key Stripe accepts (≤ 40 characters)", () => {
    const tag = tagOf("txn_0123456789abcdef0123456789abcdef:authorize:12")
    expect(tag).toMatch(/^tk_[0-9a-f]{37}$/)
    expect(tagOf("a")).not.toBe(tagOf("b"))
  })

  it("refuses what a Stripe card channel cannot do: payouts, local methods; knows no BIN facts", async () => {
    const { payout, start } = await run(unsupportedCalls(provider, card("4242424242424242"), { method: "pix", currency: "BRL", country: "BR" }))
    expect(payout).toEqual({ _tag: "Refused", decline_code: "transfer_not_supported_by_provider" })
    expect(start.message).toContain("payment_method_not_supported_by_provider")
    expect(await run(provider.binLookup("424242"))).toEqual({})
  })
})
