/**
 * Stripe notifications: events the fake emitted and signed, verified and read by the adapter;
 * tampered, stale, unsigned and wrongly-keyed ones rejected.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as StripeFake from "../src/providers/stripe/StripeFake.ts"
import * as StripeNotifications from "../src/providers/stripe/StripeNotifications.ts"
import { makeStripeProvider } from "../src/providers/stripe/StripeProvider.ts"
import { signatureHeader } from "../src/providers/stripe/StripeSignature.ts"

const SECRET = "whsec_notifications"
let fake: StripeFake.StripeFake

beforeAll(async () => {
  fake = await StripeFake.start()
})
afterAll(() => fake.close())

const nowSeconds = () => Math.floor(Date.now() / 1000)
const verify = (payload: string, header: string | undefined, nowMs = Date.now()) =>
  Effect.runPromise(Effect.exit(StripeNotifications.verify(payload, header, SECRET, nowMs)))

/** A payment the fake declines, so that it emits payment_intent.payment_failed; its events' payloads. */
const declinedPayment = async () => {
  const provider = makeStripeProvider({ secretKey: "sk_test_n", ...fake.sdkOptions, mode: "test", returnUrl: "https://tender.test/r" })
  const reference = `txn_n_${Date.now().toString(36)}`
  const result = await Effect.runPromise(provider.authorizeCard({
    reference,
    idempotency_key: `${reference}:authorize`,
    card: { number: "4000000000009995", exp_month: 12, exp_year: 2034, cvc: "123" },
    amount: 1500,
    currency: "EUR",
    capture: true,
    authenticated: false
  }))
  const event = fake.events().find((e) => e.type === "payment_intent.payment_failed" && e.payload.includes(reference))!
  return { reference, result, event }
}

describe("Stripe notifications", () => {
  it("verifies a signed event and reads it as a typed notification", async () => {
    const { reference, result, event } = await declinedPayment()
    const exit = await verify(event.payload, signatureHeader(event.payload, SECRET, nowSeconds()))
    if (!Exit.isSuccess(exit)) throw new Error(String(exit.cause))
    expect(exit.value).toMatchObject({
      _tag: "PaymentIntent",
      event_id: event.id,
      type: "payment_failed",
      payment_intent: result._tag === "Declined" ? result.provider_transaction_id : "?",
      amount: 1500,
      currency: "eur",
      decline_code: "insufficient_funds",
      reference
    })
  })

  it("accepts the header when any of several v1 signatures matches (secret rotation)", async () => {
    const { event } = await declinedPayment()
    const t = nowSeconds()
    const other = signatureHeader(event.payload, "whsec_old", t).split(",")[1]
    const exit = await verify(event.payload, `${signatureHeader(event.payload, SECRET, t)},${other}`)
    expect(Exit.isSuccess(exit)).toBe(true)
  })

  it("rejects a tampered body, another secret, a missing header, and an event older than 300 s", async () => {
    const { event } = await declinedPayment()
    const t = nowSeconds()
    const header = signatureHeader(event.payload, SECRET, t)
    const rejected = async (payload: string, signature: string | undefined, nowMs?: number) => {
      const exit = await verify(payload, signature, nowMs)
      if (Exit.isSuccess(exit)) throw new Error("accepted")
      return exit
    }
    await rejected(event.payload.replace("1500", "15"), header)
    await rejected(event.payload, signatureHeader(event.payload, "whsec_other", t))
    await rejected(event.payload, undefined)
    // 301 s after signing: stale; 299 s: still fine.
    await rejected(event.payload, header, (t + 301) * 1000)
    expect(Exit.isSuccess(await verify(event.payload, header, (t + 299) * 1000))).toBe(true)
    // Signed 301 s ahead of the receiver's clock: outside the window too (the SDK checks only the past).
    await rejected(event.payload, header, (t - 301) * 1000)
    expect(Exit.isSuccess(await verify(event.payload, header, (t - 299) * 1000))).toBe(true)
    // The SDK reads the last `t=`: that is the one held to the window.
    await rejected(event.payload, `t=${t},${signatureHeader(event.payload, SECRET, t + 400)}`, t * 1000)
  })

  it("reads refunds, leaves other events as Other, rejects a malformed signed event", async () => {
    const refundEvent = { id: "evt_r", object: "event", created: 1, type: "refund.updated", data: { object: { id: "re_1", object: "refund", amount: 300, currency: "eur", payment_intent: "pi_1", status: "succeeded" } } }
    const payload = JSON.stringify(refundEvent)
    const refund = await verify(payload, signatureHeader(payload, SECRET, nowSeconds()))
    expect(Exit.isSuccess(refund) && refund.value).toEqual({ _tag: "Refund", event_id: "evt_r", created: 1, type: "updated", refund: "re_1", payment_intent: "pi_1", amount: 300, currency: "eur", status: "succeeded" })
    const other = JSON.stringify({ ...refundEvent, type: "charge.refunded" })
    const read = await verify(other, signatureHeader(other, SECRET, nowSeconds()))
    expect(Exit.isSuccess(read) && read.value).toEqual({ _tag: "Other", event_id: "evt_r", created: 1, type: "charge.refunded" })
    // Signed, but not the shape Stripe documents: rejected, never half-read.
    const malformed = JSON.stringify({ ...refundEvent, type: "payment_intent.succeeded", data: { object: { id: "pi_1", currency: "eur" } } })
    const rejected = await verify(malformed, signatureHeader(malformed, SECRET, nowSeconds()))
    expect(Exit.isFailure(rejected)).toBe(true)
  })
})

describe("noticesOf: what an event says of Tender's transactions", () => {
  const base = { event_id: "evt_1", created: 1 }
  const intent = (type: "succeeded" | "payment_failed" | "canceled", reference: string | undefined) => ({
    ...base,
    _tag: "PaymentIntent" as const,
    type,
    payment_intent: "pi_1",
    amount: 2500,
    amount_capturable: 0,
    amount_received: 2500,
    currency: "eur",
    decline_code: type === "payment_failed" ? "insufficient_funds" : undefined,
    reference
  })

  it("a PaymentIntent event answers the attempt's authorization (or its void); amounts in minor units, currency upper case", () => {
    expect(StripeNotifications.noticesOf(intent("succeeded", "txn_a"))).toEqual([{
      reference: "txn_a",
      amount: 2500,
      currency: "EUR",
      answer: { _tag: "Authorize", result: { _tag: "Approved", provider_transaction_id: "pi_1", multicapture: false } }
    }])
    expect(StripeNotifications.noticesOf(intent("payment_failed", "txn_a"))[0]?.answer).toEqual({
      _tag: "Authorize",
      result: { _tag: "Declined", decline_code: "insufficient_funds", provider_transaction_id: "pi_1" }
    })
    expect(StripeNotifications.noticesOf(intent("canceled", "txn_a"))[0]?.answer).toEqual({ _tag: "Void", result: { _tag: "Voided", provider_transaction_id: "pi_1" } })
  })

  it("a refund event answers the refund; only a refund no longer pending settles it", () => {
    const refund = (status: string) => ({ ...base, _tag: "Refund" as const, type: "updated" as const, refund: "re_1", payment_intent: "pi_1", amount: 500, currency: "usd", status, reference: "txn_r" })
    expect(StripeNotifications.noticesOf(refund("pending"))).toEqual([{
      reference: "txn_r", amount: 500, currency: "USD", answer: { _tag: "Refund", result: { _tag: "Pending", provider_transaction_id: "re_1" } }, settlement: undefined
    }])
    expect(StripeNotifications.noticesOf(refund("succeeded"))[0]).toMatchObject({ answer: { result: { _tag: "Paid" } }, settlement: "settled" })
    expect(StripeNotifications.noticesOf(refund("failed"))[0]).toMatchObject({ answer: { result: { _tag: "Refused" } }, settlement: "failed" })
  })

  it("nothing for a payment made outside Tender (no tender_reference: a lookup's fence, the dashboard) or another event type", () => {
    expect(StripeNotifications.noticesOf(intent("succeeded", undefined))).toEqual([])
    expect(StripeNotifications.noticesOf({ ...base, _tag: "Other", type: "charge.refunded" })).toEqual([])
  })
})
