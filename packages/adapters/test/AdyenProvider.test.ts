/**
 * The Adyen provider (mapping layer + official library) against the wire-level fake: the domain's
 * PaymentProvider answers for approvals, declines, 3-D Secure, captures, voids, refunds, and the
 * ambiguous cases reconciliation resolves by lookup, never by a second charge.
 */
import Adyen from "@adyen/api-library"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type CardDetails, PaymentProvider } from "@tender/domain"
import { Effect } from "effect"
import { classify } from "../src/providers/adyen/AdyenClient.ts"
import * as AdyenFake from "../src/providers/adyen/AdyenFake.ts"
import { approved, failureOf, run, scenarios, unsupportedCalls } from "../src/providers/fake/ProviderScenarios.ts"
import { verify } from "../src/providers/adyen/AdyenNotifications.ts"
import { type AdyenProvider, layer } from "../src/providers/adyen/AdyenProvider.ts"
import { FENCE_REFERENCE } from "../src/providers/adyen/AdyenReferences.ts"
import { answerChallenge, connect, deliveryOf, observeNotifications, openChallenge, RETURN_URL } from "./AdyenTestKit.ts"

const HMAC_KEY = "0b6f0c2a5d1e4f8a9b3c7d2e1f0a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a"
let fake: AdyenFake.AdyenFake
let provider: AdyenProvider
/** Gives up on an answer after 300 ms: the `timeout` fault's client. */
let impatient: AdyenProvider

beforeAll(async () => {
  fake = await AdyenFake.start()
  provider = connect(fake)
  impatient = connect(fake, { timeoutMs: 300 })
})
afterAll(() => fake.close())

const card = (number: string, expiry: { month: number; year: number } = { month: 3, year: 2030 }): CardDetails => ({
  number,
  exp_month: expiry.month,
  exp_year: expiry.year,
  cvc: "737"
})

const paymentsOf = (reference: string) => fake.payments().filter((payment) => payment.merchantReference === reference)
const { acrossRefusal, authorize, capture, lostAndRetried, lostAuthorization, newReference } = scenarios({
  provider: () => provider,
  card: (number) => card(number),
  held: (reference) => paymentsOf(reference).map((payment) => payment.pspReference)
})

const observe = (via: AdyenProvider, psp: string) => observeNotifications(fake, via, psp, HMAC_KEY)

describe("Adyen provider on the fake", () => {
  it("approves a card, automatic capture captured at once", async () => {
    const reference = newReference()
    const result = await run(authorize("4111111111111111", { capture: true, reference }))
    expect(paymentsOf(reference)).toMatchObject([{ status: "Authorised", captured: 1000, manualCapture: false, amount: { value: 1000, currency: "EUR" } }])
    expect(result).toEqual({ _tag: "Approved", provider_transaction_id: paymentsOf(reference)[0]!.pspReference, multicapture: false })
  })

  it("serves as the PaymentProvider service through its layer", async () => {
    const config = { apiKey: fake.apiKey, merchantAccount: fake.merchantAccount, environment: "test" as const, endpoint: fake.endpoint, caCertificate: fake.caCertificate, mode: "live" as const, returnUrl: RETURN_URL }
    const [name, mode] = await run(Effect.provide(Effect.map(Effect.service(PaymentProvider), (p) => [p.name, p.mode] as const), layer(config)))
    expect([name, mode]).toEqual(["adyen", "live"])
  })

  it("maps refusals to the normalized decline codes, keeping the pspReference", async () => {
    for (const [code, normalized] of [["12", "insufficient_funds"], ["2", "card_declined"], ["20", "card_declined"], ["24", "incorrect_cvc"], ["27", "do_not_honor"], ["6", "expired_card"]] as const) {
      const reference = newReference()
      const result = await run(authorize(AdyenFake.refusalCard(code), { reference }))
      expect(result, code).toEqual({ _tag: "Declined", decline_code: normalized, provider_transaction_id: paymentsOf(reference)[0]!.pspReference })
    }
    const expired = await run(authorize("4111111111111111", { card: card("4111111111111111", { month: 1, year: 2021 }) }))
    expect(expired).toMatchObject({ _tag: "Declined", decline_code: "expired_card" })
    // A number Adyen rejects as invalid (422 101) is declined without a payment.
    const reference = newReference()
    expect(await run(authorize("4111111111111112", { reference }))).toEqual({ _tag: "Declined", decline_code: "invalid_number", provider_transaction_id: null })
    expect(paymentsOf(reference)).toEqual([])
  })

  it("3-D Secure: a challenge URL on the fake; approved, the authorization after it is Approved on the same payment", async () => {
    const reference = newReference()
    const challenge = await run(authorize(AdyenFake.CHALLENGE_CARD, { reference }))
    if (challenge._tag !== "ChallengeRequired") throw new Error(JSON.stringify(challenge))
    expect((await openChallenge(challenge.challenge_url, fake.caCertificate)).body).toContain("Authenticate")
    const back = await answerChallenge(challenge.challenge_url, fake.caCertificate, "approve")
    expect(back.startsWith(RETURN_URL)).toBe(true)
    expect(new URL(back).searchParams.get("tender_reference")).toBe(reference)
    await run(provider.challengeReturned(back))
    const after = await run(authorize(AdyenFake.CHALLENGE_CARD, { reference, key: `${reference}:authorize:2`, authenticated: true }))
    expect(after).toEqual({ _tag: "Approved", provider_transaction_id: challenge.provider_transaction_id, multicapture: true })
    expect(paymentsOf(reference)).toHaveLength(1)
    expect(await run(provider.lookup(`${reference}:authorize:2`))).toEqual({ _tag: "Authorize", result: after })
  })

  it("3-D Secure: denied, the authorization after it is declined authentication_failed", async () => {
    const reference = newReference()
    const challenge = await run(authorize(AdyenFake.CHALLENGE_CARD, { reference }))
    if (challenge._tag !== "ChallengeRequired") throw new Error(JSON.stringify(challenge))
    await run(provider.challengeReturned(await answerChallenge(challenge.challenge_url, fake.caCertificate, "deny")))
    const after = await run(authorize(AdyenFake.CHALLENGE_CARD, { reference, key: `${reference}:authorize:2`, authenticated: true }))
    expect(after).toEqual({ _tag: "Declined", decline_code: "authentication_failed", provider_transaction_id: challenge.provider_transaction_id })
  })

  it("an authorization after a challenge the shopper has not come back from sends nothing: ProviderUnavailable", async () => {
    const reference = newReference()
    const failure = await failureOf(authorize(AdyenFake.CHALLENGE_CARD, { reference, key: `${reference}:authorize:2`, authenticated: true }))
    expect(failure._tag).toBe("ProviderUnavailable")
    expect(paymentsOf(reference)).toEqual([])
  })

  it("manual capture: a partial then a final capture are received (Settling) and settle by their CAPTURE notifications", async () => {
    const reference = newReference()
    const auth = approved(await run(authorize("4111111111111111", { reference })))
    expect(auth.multicapture).toBe(true)
    const partial = await run(capture(auth.provider_transaction_id, 300, false).answer)
    if (partial._tag !== "Settling") throw new Error(JSON.stringify(partial))
    expect(partial.provider_transaction_id.startsWith(`${auth.provider_transaction_id}/`)).toBe(true)
    const last = await run(capture(auth.provider_transaction_id, 500, true, provider, 1).answer)
    if (last._tag !== "Settling") throw new Error(JSON.stringify(last))
    expect(paymentsOf(reference)[0]).toMatchObject({ captured: 800, captures: 2 })
    expect(await run(provider.settlement(partial.provider_transaction_id))).toBe("pending")
    await observe(provider, auth.provider_transaction_id)
    expect(await run(provider.settlement(partial.provider_transaction_id))).toBe("settled")
    expect(await run(provider.settlement(last.provider_transaction_id))).toBe("settled")
    // More than is left is received too (Adyen checks modifications later); its failed notification fails it.
    const over = await run(capture(auth.provider_transaction_id, 300, true, provider, 2).answer)
    if (over._tag !== "Settling") throw new Error(JSON.stringify(over))
    expect(await run(provider.settlement(over.provider_transaction_id))).toBe("pending")
    await observe(provider, auth.provider_transaction_id)
    expect(await run(provider.settlement(over.provider_transaction_id))).toBe("failed")
  })

  it("without multiple partial captures, a second capture is refused multicapture_not_supported before sending", async () => {
    const single = connect(fake, { multipleCaptures: false })
    const reference = newReference()
    const auth = approved(await run(authorize("4111111111111111", { reference, via: single })))
    expect(auth.multicapture).toBe(false)
    expect((await run(capture(auth.provider_transaction_id, 300, true, single).answer))._tag).toBe("Settling")
    expect(await run(capture(auth.provider_transaction_id, 300, true, single, 1).answer)).toEqual({ _tag: "Refused", decline_code: "multicapture_not_supported" })
    expect(paymentsOf(reference)[0]?.captures).toBe(1)
  })

  it("voids an authorization (a cancel received)", async () => {
    const reference = newReference()
    const auth = approved(await run(authorize("4111111111111111", { reference })))
    const voided = await run(provider.voidCard({ reference, idempotency_key: `${reference}:void`, authorization: auth.provider_transaction_id, amount: 1000 }))
    expect(voided._tag).toBe("Voided")
    expect(paymentsOf(reference)[0]?.status).toBe("Cancelled")
  })

  it("refunds: received → Pending, settled by its REFUND notification; refunds a manual capture through the capture's id", async () => {
    const auth = approved(await run(authorize("4111111111111111", { capture: true })))
    const reference = newReference()
    const refunded = await run(provider.refund({ reference, idempotency_key: `${reference}:refund`, payment: auth.provider_transaction_id, amount: 400, currency: "EUR" }))
    if (refunded._tag !== "Pending") throw new Error(JSON.stringify(refunded))
    expect(await run(provider.settlement(refunded.provider_transaction_id))).toBe("pending")
    await observe(provider, auth.provider_transaction_id)
    expect(await run(provider.settlement(refunded.provider_transaction_id))).toBe("settled")

    const manual = approved(await run(authorize("4111111111111111")))
    const captured = await run(capture(manual.provider_transaction_id, 1000, true).answer)
    if (captured._tag !== "Settling") throw new Error(JSON.stringify(captured))
    const second = newReference()
    const back = await run(provider.refund({ reference: second, idempotency_key: `${second}:refund`, payment: captured.provider_transaction_id, amount: 250, currency: "EUR" }))
    expect(back._tag).toBe("Pending")
    expect(fake.payments().find((p) => p.pspReference === manual.provider_transaction_id)?.refunded).toBe(250)
  })

  it("timeout after sending → Unknown; lookup finds exactly one payment; a retry replays it", async () => {
    fake.fault("payments", "timeout")
    // The lookup from the same process, whose journal knows the call asked for multicapture.
    const outcome = await lostAndRetried("4111111111111111", { via: impatient, lookupVia: impatient })
    const approval = { _tag: "Approved", provider_transaction_id: outcome.held[0], multicapture: true }
    expect(outcome).toEqual({ lost: "Unknown", found: { _tag: "Authorize", result: approval }, retried: approval, held: [approval.provider_transaction_id] })
  })

  it("connection refused → ProviderUnavailable for calls and lookups, until it listens again", async () => {
    const down = await AdyenFake.start()
    const unavailable = { _tag: "ProviderUnavailable" }
    expect(await acrossRefusal(down, connect(down), "4111111111111111")).toMatchObject({ refused: [unavailable, unavailable], after: { _tag: "Approved" } })
    // Only the authorization made once it listened again reached the fake.
    expect(down.payments()).toHaveLength(1)
  })

  it("an unresolvable host → ProviderUnavailable (nothing was sent)", async () => {
    const nowhere = connect(fake, { endpoint: "https://checkout.tender-nowhere.invalid/v72", timeoutMs: 5_000 })
    const failure = await failureOf(authorize("4111111111111111", { via: nowhere }))
    expect(failure._tag).toBe("ProviderUnavailable")
    expect(failure.message).toMatch(/ENOTFOUND|EAI_AGAIN/)
  })

  it("classifies what the library raises: 401/403 not sent, 5xx and 704 unknown, other 4xx rejected, socket errors by code", () => {
    const http = (statusCode: number, errorCode: string) =>
      classify(new Adyen.HttpClientException({ message: "x", statusCode, errorCode, apiError: { status: statusCode, errorCode, message: "m", errorType: "validation" } as never }))
    expect(http(401, "000")._tag).toBe("NotSent")
    expect(http(403, "901")._tag).toBe("NotSent")
    expect(http(500, "000")._tag).toBe("Unknown")
    expect(http(503, "000")._tag).toBe("Unknown")
    expect(http(422, "704")._tag).toBe("Unknown")
    expect(http(422, "101")).toEqual({ _tag: "Rejected", error: { status: 422, errorCode: "101", message: "m", errorType: "validation" } })
    // The library's ApiException for socket errors is a plain object with a message.
    expect(classify({ name: "ApiException", message: "connect ECONNREFUSED 127.0.0.1:9", statusCode: 500 })._tag).toBe("NotSent")
    expect(classify({ name: "ApiException", message: "socket hang up", statusCode: 500 })._tag).toBe("Unknown")
    expect(classify(new Error("The connection was terminated while the message was still being sent"))._tag).toBe("Unknown")
  })

  it("applyThenDrop → Unknown → lookup: approved, captured, refunded, voided; never applied twice", async () => {
    fake.fault("payments", "applyThenDrop")
    const { found: authorized, lost, reference } = await lostAuthorization("4111111111111111")
    expect(lost._tag).toBe("Unknown")
    if (authorized._tag !== "Authorize" || authorized.result._tag !== "Approved") throw new Error(JSON.stringify(authorized))
    const psp = authorized.result.provider_transaction_id
    expect(paymentsOf(reference)).toHaveLength(1)

    fake.fault("captures", "applyThenDrop")
    const partial = capture(psp, 400, false)
    expect((await run(partial.answer))._tag).toBe("Unknown")
    const captured = await run(provider.lookup(partial.key))
    const [made] = fake.modifications().filter((m) => m.paymentPspReference === psp && m.kind === "capture")
    expect(captured).toEqual({ _tag: "Capture", result: { _tag: "Settling", provider_transaction_id: `${psp}/${made!.pspReference}` } })
    expect(paymentsOf(reference)[0]?.captured).toBe(400)

    fake.fault("refunds", "applyThenDrop")
    const refundKey = `${newReference()}:refund`
    expect((await run(provider.refund({ reference, idempotency_key: refundKey, payment: psp, amount: 150, currency: "EUR" })))._tag).toBe("Unknown")
    const refunds = fake.modifications().filter((m) => m.paymentPspReference === psp && m.kind === "refund")
    expect(refunds).toHaveLength(1)
    expect(await run(provider.lookup(refundKey))).toEqual({ _tag: "Refund", result: { _tag: "Pending", provider_transaction_id: refunds[0]!.pspReference } })

    // A second authorization, voided with its answer lost.
    const other = approved(await run(authorize("4111111111111111")))
    fake.fault("cancels", "applyThenDrop")
    const voidKey = `${newReference()}:void`
    expect((await run(provider.voidCard({ reference, idempotency_key: voidKey, authorization: other.provider_transaction_id, amount: 1000 })))._tag).toBe("Unknown")
    const voided = await run(provider.lookup(voidKey))
    expect(voided).toMatchObject({ _tag: "Void", result: { _tag: "Voided" } })
    expect(fake.payments().find((p) => p.pspReference === other.provider_transaction_id)?.status).toBe("Cancelled")
  })

  it("5xx → Unknown; lookup: nothing was applied → NotReceived, and the key is fenced for every process", async () => {
    const reference = newReference()
    const key = `${reference}:authorize`
    fake.fault("payments", "5xx")
    expect((await run(authorize("4111111111111111", { reference })))._tag).toBe("Unknown")
    expect(await run(provider.lookup(key))).toEqual({ _tag: "NotReceived" })
    expect(await run(provider.lookup(key))).toEqual({ _tag: "NotReceived" })
    // Another process (no memory of the fence) asking again, or sending the late call, gets the fence back.
    const elsewhere = connect(fake)
    expect(await run(elsewhere.lookup(key))).toEqual({ _tag: "NotReceived" })
    expect((await failureOf(authorize("4111111111111111", { reference, via: elsewhere })))._tag).toBe("ProviderUnavailable")
    expect((await failureOf(authorize("4111111111111111", { reference })))._tag).toBe("ProviderUnavailable")
    expect(paymentsOf(reference)).toEqual([])
    // The probe's own (failed) CANCELLATION notification concerns no payment: read as Other.
    const probe = fake.notifications().filter((item) => item.merchantReference === FENCE_REFERENCE).at(-1)!
    const [read] = await run(verify(deliveryOf(probe, HMAC_KEY), HMAC_KEY))
    expect(read).toMatchObject({ _tag: "Other", event_code: "CANCELLATION", success: false })
  })

  it("lookup from a process without the call's journal: an authorization and a cancel are told by their answer", async () => {
    const reference = newReference()
    const auth = approved(await run(authorize("4111111111111111", { reference })))
    const fresh = connect(fake)
    expect(await run(fresh.lookup(`${reference}:authorize`))).toEqual({ _tag: "Authorize", result: { _tag: "Approved", provider_transaction_id: auth.provider_transaction_id, multicapture: false } })
    const voided = await run(provider.voidCard({ reference, idempotency_key: `${reference}:void`, authorization: auth.provider_transaction_id, amount: 1000 }))
    expect(await run(fresh.lookup(`${reference}:void`))).toEqual({ _tag: "Void", result: voided })
    // A capture and a refund answer alike: without the journal, ask again later (the notification tells).
    const other = approved(await run(authorize("4111111111111111")))
    const captured = capture(other.provider_transaction_id, 100, true)
    expect((await run(captured.answer))._tag).toBe("Settling")
    expect((await failureOf(fresh.lookup(captured.key)))._tag).toBe("ProviderUnavailable")
  })

  it("refuses what an Adyen card channel cannot do; BIN facts from /cardDetails, none where unknown", async () => {
    const { payout, start } = await run(unsupportedCalls(provider, card("4111111111111111"), { method: "ideal", currency: "EUR", country: "NL" }))
    expect(payout).toEqual({ _tag: "Refused", decline_code: "transfer_not_supported_by_provider" })
    expect(start.message).toContain("payment_method_not_supported_by_provider")
    expect(await run(provider.binLookup("411111"))).toEqual({ country_code: "US" })
    expect(await run(provider.binLookup("601100"))).toEqual({})
  })
})
