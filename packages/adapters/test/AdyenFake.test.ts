/**
 * The official `@adyen/api-library` against the wire-level fake, unchanged but for its base URL
 * and the certificate it trusts: what the fake answers is what the library reads.
 */
import Adyen from "@adyen/api-library"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createHmac } from "node:crypto"
import * as AdyenFake from "../src/providers/adyen/AdyenFake.ts"
import { make } from "../src/providers/adyen/AdyenClient.ts"
import { answerChallenge, notificationReceiver, openChallenge } from "./AdyenTestKit.ts"

const HMAC_KEY = "44782def547aaa06c910c43932b1eb0c71fc68d9d0c057550c48ec2acf6ba056"
let fake: AdyenFake.AdyenFake
let sdk: ReturnType<typeof make>
let receiver: Awaited<ReturnType<typeof notificationReceiver>>

beforeAll(async () => {
  receiver = await notificationReceiver()
  fake = await AdyenFake.start({ notifications: { url: receiver.url, hmacKey: HMAC_KEY } })
  sdk = make({ apiKey: fake.apiKey, merchantAccount: fake.merchantAccount, environment: "test", endpoint: fake.endpoint, caCertificate: fake.caCertificate })
})
afterAll(async () => {
  await fake.close()
  await receiver.close()
})

let references = 0
const newReference = () => `ref_${Date.now().toString(36)}_${++references}`

const paymentRequest = (number: string, extra: Record<string, unknown> = {}) => ({
  merchantAccount: fake.merchantAccount,
  reference: newReference(),
  amount: { value: 1000, currency: "EUR" },
  paymentMethod: { type: "scheme", number, expiryMonth: "03", expiryYear: "2030", cvc: "737" },
  returnUrl: "https://tender.test/return",
  ...extra
})

/** The library's rejection of a call that must fail. */
const rejection = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (error) {
    return error as InstanceType<typeof Adyen.HttpClientException>
  }
  throw new Error("Expected the call to fail")
}

describe("@adyen/api-library against the Adyen fake", () => {
  it("authorises a test card; the raw card fields and the amount arrive as sent", async () => {
    const answer = await sdk.payments.payments(paymentRequest("4111111111111111") as never, { idempotencyKey: `${newReference()}:k` })
    expect(answer.resultCode).toBe("Authorised")
    expect(answer.pspReference).toMatch(/^[0-9A-F]{16}$/)
    const held = fake.payments().find((p) => p.pspReference === answer.pspReference)
    expect(held).toMatchObject({ amount: { value: 1000, currency: "EUR" }, brand: "visa", last4: "1111", captured: 1000, manualCapture: false })
  })

  it("refuses a refusal card with Adyen's refusalReason and refusalReasonCode", async () => {
    const answer = await sdk.payments.payments(paymentRequest(AdyenFake.refusalCard("12")) as never)
    expect(answer.resultCode).toBe("Refused")
    expect(answer.refusalReason).toBe("Not enough balance")
    expect(answer.refusalReasonCode).toBe("12")
  })

  it("refuses by Adyen's test holder names (docs.adyen.com, testing refusal reasons), whatever the number", async () => {
    const answer = await sdk.payments.payments(paymentRequest("4242424242424242", { paymentMethod: { type: "scheme", number: "4242424242424242", expiryMonth: "03", expiryYear: "2030", cvc: "737", holderName: "NOT_ENOUGH_BALANCE" } }) as never)
    expect({ resultCode: answer.resultCode, code: answer.refusalReasonCode }).toEqual({ resultCode: "Refused", code: "12" })
  })

  it("checks a stored card's shopperInteraction and recurringProcessingModel: ContAuth needs a model, both from Adyen's enums", async () => {
    const ok = await sdk.payments.payments(paymentRequest("4111111111111111", { shopperInteraction: "ContAuth", recurringProcessingModel: "Subscription" }) as never)
    expect(fake.payments().find((p) => p.pspReference === ok.pspReference)).toMatchObject({ shopperInteraction: "ContAuth", recurringProcessingModel: "Subscription" })
    for (const extra of [{ shopperInteraction: "ContAuth" }, { shopperInteraction: "ContAuth", recurringProcessingModel: "Whenever" }, { shopperInteraction: "Later" }]) {
      const refused = await rejection(sdk.payments.payments(paymentRequest("4111111111111111", extra) as never))
      expect(refused.statusCode).toBe(422)
    }
  })

  it("answers validation errors with Adyen's error body, which the library raises", async () => {
    const invalid = await rejection(sdk.payments.payments(paymentRequest("4111111111111112") as never))
    expect(invalid).toBeInstanceOf(Adyen.HttpClientException)
    expect(invalid.statusCode).toBe(422)
    expect(invalid.apiError).toMatchObject({ status: 422, errorCode: "101", message: "Invalid card number", errorType: "validation" })
    const wrongAccount = await rejection(sdk.payments.payments(paymentRequest("4111111111111111", { merchantAccount: "Other" }) as never))
    expect(wrongAccount.statusCode).toBe(403)
  })

  it("refuses a wrong API key with 401", async () => {
    const other = make({ apiKey: "AQE_wrong", merchantAccount: fake.merchantAccount, environment: "test", endpoint: fake.endpoint, caCertificate: fake.caCertificate })
    const refused = await rejection(other.payments.payments(paymentRequest("4111111111111111") as never))
    expect(refused.statusCode).toBe(401)
    expect(refused.apiError?.errorType).toBe("security")
  })

  it("replays the first response for a repeated Idempotency-Key, whatever the endpoint or body", async () => {
    const key = `${newReference()}:authorize`
    const first = await sdk.payments.payments(paymentRequest("4111111111111111", { additionalData: { manualCapture: "true" } }) as never, { idempotencyKey: key })
    const again = await sdk.payments.payments(paymentRequest("5555341244441115", { amount: { value: 5, currency: "EUR" } }) as never, { idempotencyKey: key })
    expect(again).toEqual(first)
    const elsewhere = await sdk.post("/payments/ANYTHING/cancels", { merchantAccount: fake.merchantAccount }, key) as Record<string, unknown>
    expect(elsewhere["pspReference"]).toBe(first.pspReference)
    expect(elsewhere["resultCode"]).toBe("Authorised")
    expect(fake.payments().filter((p) => p.pspReference === first.pspReference)).toHaveLength(1)
  })

  it("3-D Secure: RedirectShopper with a redirect action; the page sends the shopper back with redirectResult; /payments/details authorises", async () => {
    const answer = await sdk.payments.payments(paymentRequest(AdyenFake.CHALLENGE_CARD) as never)
    expect(answer.resultCode).toBe("RedirectShopper")
    const action = answer.action as { type?: string; url?: string; method?: string }
    expect(action).toMatchObject({ type: "redirect", method: "GET" })
    const page = await openChallenge(action.url!, fake.caCertificate)
    expect(page.status).toBe(200)
    expect(page.body).toContain("Authenticate")
    const location = await answerChallenge(action.url!, fake.caCertificate, "approve")
    const back = new URL(location)
    expect(`${back.origin}${back.pathname}`).toBe("https://tender.test/return")
    const details = await sdk.payments.paymentsDetails({ details: { redirectResult: back.searchParams.get("redirectResult")! } })
    expect(details.resultCode).toBe("Authorised")
    expect(details.pspReference).toBe(answer.pspReference)
  })

  it("captures, cancels and refunds answer 201 received; the outcome arrives as HMAC-signed notifications", async () => {
    const auth = await sdk.payments.payments(paymentRequest("4111111111111111", { additionalData: { manualCapture: "true" } }) as never)
    const psp = auth.pspReference!
    const capture = await sdk.modifications.captureAuthorisedPayment(psp, { merchantAccount: fake.merchantAccount, amount: { value: 400, currency: "EUR" }, reference: "cap-1" })
    expect(capture).toMatchObject({ status: "received", paymentPspReference: psp, reference: "cap-1", amount: { value: 400, currency: "EUR" } })
    const tooMuch = await sdk.modifications.captureAuthorisedPayment(psp, { merchantAccount: fake.merchantAccount, amount: { value: 700, currency: "EUR" }, reference: "cap-2" })
    expect(tooMuch.status).toBe("received")
    const refund = await sdk.modifications.refundCapturedPayment(psp, { merchantAccount: fake.merchantAccount, amount: { value: 100, currency: "EUR" }, reference: "ref-1" })
    expect(refund.status).toBe("received")
    const cancel = await sdk.modifications.cancelAuthorisedPaymentByPspReference(psp, { merchantAccount: fake.merchantAccount, reference: "can-1" })
    expect(cancel.status).toBe("received")
    await fake.delivered()
    const items = receiver.bodies
      .flatMap((body) => (JSON.parse(body) as { notificationItems: Array<{ NotificationRequestItem: Record<string, unknown> }> }).notificationItems)
      .map((item) => item.NotificationRequestItem)
      .filter((item) => item["pspReference"] === psp || item["originalReference"] === psp)
    expect(items.map((item) => [item["eventCode"], item["success"]])).toEqual([
      ["AUTHORISATION", "true"],
      ["CAPTURE", "true"],
      ["CAPTURE", "false"],
      ["REFUND", "true"],
      ["CANCELLATION", "false"]
    ])
    const validator = new Adyen.hmacValidator()
    for (const item of items) expect(validator.validateHMAC(item as never, HMAC_KEY)).toBe(true)
    // The signature is Adyen's documented concatenation, computed independently here.
    const first = items[1]!
    const amount = first["amount"] as { value: number; currency: string }
    const data = [first["pspReference"], first["originalReference"], first["merchantAccountCode"], first["merchantReference"], amount.value, amount.currency, first["eventCode"], first["success"]].join(":")
    expect((first["additionalData"] as Record<string, string>)["hmacSignature"]).toBe(createHmac("sha256", Buffer.from(HMAC_KEY, "hex")).update(data).digest("base64"))
  })

  it("5xx: answered 500 unapplied and not kept under the key; a retry with it is processed", async () => {
    const key = `${newReference()}:k`
    fake.fault("payments", "5xx")
    const failed = await rejection(sdk.payments.payments(paymentRequest("4111111111111111") as never, { idempotencyKey: key }))
    expect(failed.statusCode).toBe(500)
    const retried = await sdk.payments.payments(paymentRequest("4111111111111111") as never, { idempotencyKey: key })
    expect(retried.resultCode).toBe("Authorised")
  })

  it("cardDetails: the issuing country of a known BIN, none for an unknown one", async () => {
    expect((await sdk.payments.cardDetails({ merchantAccount: fake.merchantAccount, cardNumber: "411111" })).issuingCountryCode).toBe("US")
    expect((await sdk.payments.cardDetails({ merchantAccount: fake.merchantAccount, cardNumber: "601100" })).issuingCountryCode).toBeUndefined()
  })
})
