/**
 * Adyen notifications as the fake delivers them (HMAC-signed, POSTed), verified and read by the
 * adapter's verifier: valid, tampered, signed with another key, unsigned, malformed.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import * as AdyenFake from "../src/providers/adyen/AdyenFake.ts"
import { type AdyenNotification, noticesOf, verify } from "../src/providers/adyen/AdyenNotifications.ts"
import { sign } from "../src/providers/adyen/AdyenSignature.ts"
import type { AdyenProvider } from "../src/providers/adyen/AdyenProvider.ts"
import { connect, notificationReceiver } from "./AdyenTestKit.ts"

const HMAC_KEY = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
const OTHER_KEY = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
let fake: AdyenFake.AdyenFake
/** Receives the fake's deliveries: the raw bodies, as a notification route gets them. */
let receiver: Awaited<ReturnType<typeof notificationReceiver>>
let bodies: Array<string>

beforeAll(async () => {
  receiver = await notificationReceiver()
  bodies = receiver.bodies
  fake = await AdyenFake.start({ notifications: { url: receiver.url, hmacKey: HMAC_KEY } })
})
afterAll(async () => {
  await fake.close()
  await receiver.close()
})

const provider = () => connect(fake)

const authorize = (via: AdyenProvider, reference: string, number: string, amount: number, capture: boolean) =>
  Effect.runPromise(via.authorizeCard({
    reference,
    idempotency_key: `${reference}:authorize`,
    card: { number, exp_month: 3, exp_year: 2030, cvc: "737" },
    amount,
    currency: "EUR",
    capture,
    authenticated: false
  }))

const rejected = async (effect: Effect.Effect<unknown, unknown>) => {
  const exit = await Effect.runPromise(Effect.exit(effect))
  if (Exit.isSuccess(exit)) throw new Error("Expected the notification to be rejected")
  return Cause.squash(exit.cause) as { _tag: string; message: string }
}

/** The deliveries whose item concerns `psp`. */
const deliveriesAbout = async (psp: string) => {
  await fake.delivered()
  return bodies.filter((body) => body.includes(psp))
}

describe("Adyen notifications", () => {
  it("a delivered AUTHORISATION verifies and reads; a refusal carries the normalized decline code", async () => {
    const via = provider()
    const approved = await authorize(via, "txn_n1", "4111111111111111", 1250, false)
    if (approved._tag !== "Approved") throw new Error(JSON.stringify(approved))
    const [body] = await deliveriesAbout(approved.provider_transaction_id)
    const [item, ...rest] = await Effect.runPromise(verify(body!, HMAC_KEY))
    expect(rest).toEqual([])
    expect(item).toMatchObject({
      _tag: "Authorisation",
      event_code: "AUTHORISATION",
      success: true,
      psp_reference: approved.provider_transaction_id,
      merchant_reference: "txn_n1",
      merchant_account: fake.merchantAccount,
      amount: 1250,
      currency: "EUR",
      decline_code: undefined
    })

    const refused = await authorize(via, "txn_n2", AdyenFake.refusalCard("12"), 500, true)
    if (refused._tag !== "Declined") throw new Error(JSON.stringify(refused))
    const [refusal] = await deliveriesAbout(refused.provider_transaction_id!)
    expect(await Effect.runPromise(verify(refusal!, HMAC_KEY))).toMatchObject([{ _tag: "Authorisation", success: false, decline_code: "insufficient_funds" }])
  })

  it("a CAPTURE notification read by the provider settles its capture", async () => {
    const via = provider()
    const auth = await authorize(via, "txn_n3", "5555341244441115", 1000, false)
    if (auth._tag !== "Approved") throw new Error(JSON.stringify(auth))
    const captured = await Effect.runPromise(via.captureCard({
      reference: "txn_n4",
      idempotency_key: "txn_n4:capture",
      authorization: auth.provider_transaction_id,
      amount: 1000,
      currency: "EUR",
      final: true,
      previousCaptures: 0
    }))
    if (captured._tag !== "Settling") throw new Error(JSON.stringify(captured))
    expect(await Effect.runPromise(via.settlement(captured.provider_transaction_id))).toBe("pending")
    for (const body of await deliveriesAbout(auth.provider_transaction_id)) await Effect.runPromise(Effect.flatMap(verify(body, HMAC_KEY), Effect.forEach(via.observe)))
    expect(await Effect.runPromise(via.settlement(captured.provider_transaction_id))).toBe("settled")
  })

  it("rejects a tampered amount, another key's signature, an unsigned item, and a body that is no notification", async () => {
    const body = bodies[0]!
    const tampered = body.replace(/"value":(\d+)/, (_, value: string) => `"value":${Number(value) + 1}`)
    expect(tampered).not.toBe(body)
    expect((await rejected(verify(tampered, HMAC_KEY)))._tag).toBe("NotificationRejected")
    expect((await rejected(verify(body, OTHER_KEY))).message).toContain("HMAC signature does not match")
    const unsigned = JSON.parse(body) as { notificationItems: Array<{ NotificationRequestItem: { additionalData: Record<string, string> } }> }
    unsigned.notificationItems[0]!.NotificationRequestItem.additionalData = {}
    expect((await rejected(verify(JSON.stringify(unsigned), HMAC_KEY))).message).toContain("not signed")
    expect((await rejected(verify("{", HMAC_KEY))).message).toContain("not JSON")
    expect((await rejected(verify(JSON.stringify({ notificationItems: [{ NotificationRequestItem: { eventCode: "AUTHORISATION" } }] }), HMAC_KEY))).message)
      .toContain("Not an Adyen notification")
    expect((await rejected(verify(JSON.stringify({ live: "false", notificationItems: [] }), HMAC_KEY))).message).toContain("no items")
  })

  it("CAPTURE_FAILED reads as a failed Capture, though Adyen sends it with success true", async () => {
    const item = {
      amount: { value: 300, currency: "EUR" },
      eventCode: "CAPTURE_FAILED",
      eventDate: "2026-11-26T10:00:00+01:00",
      merchantAccountCode: fake.merchantAccount,
      merchantReference: "txn_cf",
      originalReference: "8815000000000001",
      pspReference: "8825000000000002",
      reason: "Capture Failed",
      success: "true" as const
    }
    const body = JSON.stringify({ live: "false", notificationItems: [{ NotificationRequestItem: { ...item, additionalData: { hmacSignature: sign(item, HMAC_KEY) } } }] })
    expect(await Effect.runPromise(verify(body, HMAC_KEY))).toMatchObject([{ _tag: "Capture", success: false, psp_reference: "8825000000000002", original_reference: "8815000000000001" }])
  })

  it("one bad item rejects the whole batch", async () => {
    const good = JSON.parse(bodies[0]!) as { notificationItems: Array<unknown> }
    const bad = JSON.parse(bodies[0]!.replace(/"success":"(true|false)"/, (_, s: string) => `"success":"${s === "true" ? "false" : "true"}"`)) as { notificationItems: Array<unknown> }
    const batch = JSON.stringify({ live: "false", notificationItems: [...good.notificationItems, ...bad.notificationItems] })
    expect((await rejected(verify(batch, HMAC_KEY)))._tag).toBe("NotificationRejected")
  })
})

describe("noticesOf: what an item says of Tender's transactions", () => {
  const item = (over: Partial<AdyenNotification>) => ({
    _tag: "Other" as const,
    event_code: "X",
    success: true,
    psp_reference: "MODPSP0000000001",
    original_reference: "PAYPSP0000000001",
    merchant_reference: "txn_abc",
    merchant_account: "TenderECOM",
    amount: 1250,
    currency: "eur",
    reason: "",
    decline_code: undefined,
    ...over
  })

  it("CAPTURE: the capture settled under the adapter's own id (payment/capture), and a settlement", () => {
    expect(noticesOf(item({ _tag: "Capture", event_code: "CAPTURE" }))).toEqual([{
      reference: "txn_abc",
      amount: 1250,
      currency: "EUR",
      answer: { _tag: "Capture", result: { _tag: "Settled", provider_transaction_id: "PAYPSP0000000001/MODPSP0000000001" } },
      settlement: "settled",
      provider_transaction_id: "PAYPSP0000000001/MODPSP0000000001"
    }])
  })

  it("REFUND_FAILED: the refund refused, and its settlement failed; a refused AUTHORISATION carries its decline code and no settlement", () => {
    const [refund] = noticesOf(item({ _tag: "Refund", event_code: "REFUND_FAILED", success: false }))
    // A refusal carries no id of its own: the notice names the refund by it, for the settlement step.
    expect(refund).toMatchObject({ answer: { _tag: "Refund", result: { _tag: "Refused", decline_code: "refund_refused" } }, settlement: "failed", provider_transaction_id: "MODPSP0000000001" })
    const [auth] = noticesOf(item({ _tag: "Authorisation", event_code: "AUTHORISATION", success: false, psp_reference: "PAYPSP0000000001", original_reference: undefined, decline_code: "insufficient_funds" }))
    expect(auth).toEqual({
      reference: "txn_abc",
      amount: 1250,
      currency: "EUR",
      answer: { _tag: "Authorize", result: { _tag: "Declined", decline_code: "insufficient_funds", provider_transaction_id: "PAYPSP0000000001" } }
    })
  })

  it("other event codes (and a lookup's probe) say nothing", () => {
    expect(noticesOf(item({ _tag: "Other", event_code: "REPORT_AVAILABLE" }))).toEqual([])
  })
})
