/**
 * The official `stripe` SDK, unchanged but for host/port/protocol, against the fake: the wire
 * behaviour our adapter relies on (idempotent replay, idempotency errors, error bodies, search,
 * expansion, signed webhooks).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import Stripe from "stripe"
import * as StripeFake from "../src/providers/stripe/StripeFake.ts"

const SECRET = "whsec_test_fake"
let fake: StripeFake.StripeFake
let stripe: Stripe
let receiver: http.Server
const received: Array<{ body: string; signature: string | undefined }> = []

let keys = 0
const newKey = () => `sdk-key-${++keys}`

const cardParams = (number: string, extra: Record<string, unknown> = {}) => ({
  amount: 1000,
  currency: "eur",
  confirm: true,
  capture_method: "manual",
  payment_method_data: { type: "card", card: { number, exp_month: 12, exp_year: 2034, cvc: "123" } },
  ...extra
}) as unknown as Stripe.PaymentIntentCreateParams

/** The SDK's error for a call that must fail. */
const failure = async (call: Promise<unknown>) => {
  try {
    await call
  } catch (error) {
    return error as InstanceType<typeof Stripe.errors.StripeError>
  }
  throw new Error("The call succeeded")
}

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      received.push({ body: Buffer.concat(chunks).toString("utf8"), signature: req.headers["stripe-signature"] as string | undefined })
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  fake = await StripeFake.start({ webhook: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, secret: SECRET } })
  stripe = new Stripe("sk_test_fake", { ...fake.sdkOptions, maxNetworkRetries: 0, telemetry: false })
})

afterAll(async () => {
  await fake.close()
  await new Promise((resolve) => receiver.close(resolve))
})

describe("Stripe fake, spoken to by the official SDK", () => {
  it("creates and confirms a card PaymentIntent, encoded as Stripe's bracket forms, with expansion", async () => {
    const intent = await stripe.paymentIntents.create(cardParams("4242424242424242", { metadata: { order: "o_1" }, expand: ["latest_charge"] }))
    expect(intent.status).toBe("requires_capture")
    expect(intent.amount_capturable).toBe(1000)
    expect(intent.metadata).toEqual({ order: "o_1" })
    const charge = intent.latest_charge as Stripe.Charge
    expect(charge.object).toBe("charge")
    expect(charge.payment_method_details?.card?.last4).toBe("4242")
    expect(charge.payment_method_details?.card?.country).toBe("US")
    // The raw card number never comes back.
    expect(JSON.stringify(intent)).not.toContain("4242424242424242")
  })

  it("replays the saved response for the same key and parameters, marked Idempotent-Replayed", async () => {
    const key = newKey()
    const before = fake.paymentIntents().length
    const first = await stripe.paymentIntents.create(cardParams("4242424242424242"), { idempotencyKey: key })
    const second = await stripe.paymentIntents.create(cardParams("4242424242424242"), { idempotencyKey: key })
    expect(second.id).toBe(first.id)
    expect(second.lastResponse.headers["idempotent-replayed"]).toBe("true")
    expect(first.lastResponse.headers["idempotent-replayed"]).toBeUndefined()
    expect(fake.paymentIntents().length).toBe(before + 1)
  })

  it("answers idempotency_error for the same key with other parameters or on another endpoint", async () => {
    const key = newKey()
    const intent = await stripe.paymentIntents.create(cardParams("4242424242424242"), { idempotencyKey: key })
    const changed = await failure(stripe.paymentIntents.create(cardParams("4242424242424242", { amount: 999 }), { idempotencyKey: key }))
    expect(changed).toBeInstanceOf(Stripe.errors.StripeIdempotencyError)
    expect(changed.statusCode).toBe(400)
    expect(changed.message).toContain("same parameters")
    const elsewhere = await failure(stripe.paymentIntents.cancel(intent.id, {}, { idempotencyKey: key }))
    expect(elsewhere.type).toBe("StripeIdempotencyError")
    expect(elsewhere.message).toContain("same endpoint")
    expect(fake.paymentIntents().find((pi) => pi.id === intent.id)?.status).toBe("requires_capture")
  })

  it("saves no result for a request that failed validation: the key stays usable", async () => {
    const key = newKey()
    const invalid = await failure(stripe.paymentIntents.create({ currency: "eur" } as Stripe.PaymentIntentCreateParams, { idempotencyKey: key }))
    expect(invalid).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
    expect(invalid.code).toBe("parameter_missing")
    expect(invalid.param).toBe("amount")
    const intent = await stripe.paymentIntents.create(cardParams("4242424242424242"), { idempotencyKey: key })
    expect(intent.status).toBe("requires_capture")
  })

  it("answers a decline with HTTP 402 card_error, its decline_code and the PaymentIntent; replayed as is", async () => {
    const key = newKey()
    const declined = await failure(stripe.paymentIntents.create(cardParams("4000000000009995"), { idempotencyKey: key }))
    expect(declined).toBeInstanceOf(Stripe.errors.StripeCardError)
    expect(declined.statusCode).toBe(402)
    expect(declined.code).toBe("card_declined")
    expect(declined.decline_code).toBe("insufficient_funds")
    expect(declined.payment_intent?.status).toBe("requires_payment_method")
    expect(declined.payment_intent?.last_payment_error?.decline_code).toBe("insufficient_funds")
    const again = await failure(stripe.paymentIntents.create(cardParams("4000000000009995"), { idempotencyKey: key }))
    expect(again.payment_intent?.id).toBe(declined.payment_intent?.id)
    expect(again.headers?.["idempotent-replayed"]).toBe("true")
  })

  it("answers a card number failing Luhn with incorrect_number", async () => {
    const error = await failure(stripe.paymentIntents.create(cardParams("4242424242424241")))
    expect(error.code).toBe("incorrect_number")
    expect(error.statusCode).toBe(402)
  })

  it("takes an off-session charge's stored_credential_usage among Stripe's values (installment, recurring, unscheduled) and refuses another", async () => {
    const options = (usage: string) => ({ off_session: true, payment_method_options: { card: { stored_credential_usage: usage } } })
    const intent = await stripe.paymentIntents.create(cardParams("4242424242424242", options("recurring")) as Stripe.PaymentIntentCreateParams)
    const held = fake.paymentIntents().find((pi) => pi.id === intent.id)!
    expect({ off_session: held.off_session, usage: held.payment_method_options.card.stored_credential_usage }).toEqual({ off_session: true, usage: "recurring" })
    const error = await failure(stripe.paymentIntents.create(cardParams("4242424242424242", options("whenever")) as Stripe.PaymentIntentCreateParams))
    expect({ status: error.statusCode, type: error.type, param: error.param }).toEqual({
      status: 400,
      type: "StripeInvalidRequestError",
      param: "payment_method_options[card][stored_credential_usage]"
    })
  })

  it("refuses a capture in the wrong state with payment_intent_unexpected_state, and too large an amount with amount_too_large", async () => {
    const intent = await stripe.paymentIntents.create(cardParams("4242424242424242"))
    const tooLarge = await failure(stripe.paymentIntents.capture(intent.id, { amount_to_capture: 5000 }))
    expect(tooLarge.code).toBe("amount_too_large")
    await stripe.paymentIntents.cancel(intent.id)
    const canceled = await failure(stripe.paymentIntents.capture(intent.id))
    expect(canceled.code).toBe("payment_intent_unexpected_state")
    const missing = await failure(stripe.paymentIntents.retrieve("pi_nope"))
    expect(missing.statusCode).toBe(404)
    expect(missing.code).toBe("resource_missing")
  })

  it("multicaptures when asked for, refunds up to what was captured, and finds intents by metadata search", async () => {
    const intent = await stripe.paymentIntents.create(cardParams("4242424242424242", {
      payment_method_options: { card: { request_multicapture: "if_available" } },
      metadata: { search_me: "yes-1" }
    }))
    const partial = await stripe.paymentIntents.capture(intent.id, { amount_to_capture: 300, final_capture: false })
    expect(partial.status).toBe("requires_capture")
    expect(partial.amount_capturable).toBe(700)
    const final = await stripe.paymentIntents.capture(intent.id, { amount_to_capture: 200 })
    expect(final.status).toBe("succeeded")
    expect(final.amount_received).toBe(500)
    const tooMuch = await failure(stripe.refunds.create({ payment_intent: intent.id, amount: 600 }))
    expect(tooMuch.code).toBe("amount_too_large")
    const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 500, metadata: { r: "1" } })
    expect(refund.status).toBe("succeeded")
    expect((await failure(stripe.refunds.create({ payment_intent: intent.id }))).code).toBe("charge_already_refunded")
    const listed = await stripe.refunds.list({ payment_intent: intent.id })
    expect(listed.data.map((r) => r.id)).toEqual([refund.id])
    const found = await stripe.paymentIntents.search({ query: "metadata['search_me']:'yes-1' OR metadata['search_me']:'other'" })
    expect(found.data.map((pi) => pi.id)).toEqual([intent.id])
  })

  it("answers a 5xx fault with api_error, saved under the key like Stripe's 500s", async () => {
    const key = newKey()
    const before = fake.paymentIntents().length
    fake.fault("create", "5xx")
    const first = await failure(stripe.paymentIntents.create(cardParams("4242424242424242"), { idempotencyKey: key }))
    expect(first).toBeInstanceOf(Stripe.errors.StripeAPIError)
    expect(first.statusCode).toBe(500)
    const replay = await failure(stripe.paymentIntents.create(cardParams("4242424242424242"), { idempotencyKey: key }))
    expect(replay.statusCode).toBe(500)
    expect(fake.paymentIntents().length).toBe(before)
  })

  it("POSTs events signed t=…,v1=… that the SDK's verifier accepts", async () => {
    const intent = await stripe.paymentIntents.create(cardParams("4242424242424242", { capture_method: "automatic" }))
    await fake.delivered()
    const delivery = received.find((r) => r.body.includes(intent.id) && r.body.includes("payment_intent.succeeded"))
    expect(delivery?.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    const event = stripe.webhooks.constructEvent(delivery!.body, delivery!.signature!, SECRET)
    expect(event.type).toBe("payment_intent.succeeded")
    expect((event.data.object as Stripe.PaymentIntent).id).toBe(intent.id)
    expect(() => stripe.webhooks.constructEvent(delivery!.body, delivery!.signature!, "whsec_other")).toThrow()
  })
})
