/**
 * Adyen notifications as the fake delivers them (HMAC-signed, POSTed), verified and read by the
 * adapter's verifier: valid, tampered, signed with another key, unsigned, malformed.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as AdyenFake from "../src/providers/adyen/AdyenFake.ts"
import { ACCEPTED, verify } from "../src/providers/adyen/AdyenNotifications.ts"
import { makeAdyenProvider } from "../src/providers/adyen/AdyenProvider.ts"

const HMAC_KEY = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
const OTHER_KEY = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
let fake: AdyenFake.AdyenFake
let receiver: http.Server
/** The raw bodies the fake POSTed, as a notification route receives them. */
const bodies: Array<string> = []

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = ""
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
    req.on("end", () => {
      bodies.push(body)
      res.end(ACCEPTED)
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  fake = await AdyenFake.start({ notifications: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, hmacKey: HMAC_KEY } })
})
afterAll(async () => {
  await fake.close()
  await new Promise<void>((resolve) => receiver.close(() => resolve()))
})

const provider = () =>
  makeAdyenProvider({
    apiKey: fake.apiKey,
    merchantAccount: fake.merchantAccount,
    environment: "test",
    endpoint: fake.endpoint,
    caCertificate: fake.caCertificate,
    mode: "test",
    returnUrl: "https://tender.test/return",
    multipleCaptures: true
  })

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
    const approved = await Effect.runPromise(via.authorizeCard({
      reference: "txn_n1",
      idempotency_key: "txn_n1:authorize",
      card: { number: "4111111111111111", exp_month: 3, exp_year: 2030, cvc: "737" },
      amount: 1250,
      currency: "EUR",
      capture: false,
      authenticated: false
    }))
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

    const refused = await Effect.runPromise(via.authorizeCard({
      reference: "txn_n2",
      idempotency_key: "txn_n2:authorize",
      card: { number: AdyenFake.refusalCard("12"), exp_month: 3, exp_year: 2030, cvc: "737" },
      amount: 500,
      currency: "EUR",
      capture: true,
      authenticated: false
    }))
    if (refused._tag !== "Declined") throw new Error(JSON.stringify(refused))
    const [refusal] = await deliveriesAbout(refused.provider_transaction_id!)
    expect(await Effect.runPromise(verify(refusal!, HMAC_KEY))).toMatchObject([{ _tag: "Authorisation", success: false, decline_code: "insufficient_funds" }])
  })

  it("a CAPTURE notification read by the provider settles its capture", async () => {
    const via = provider()
    const auth = await Effect.runPromise(via.authorizeCard({
      reference: "txn_n3",
      idempotency_key: "txn_n3:authorize",
      card: { number: "5555341244441115", exp_month: 3, exp_year: 2030, cvc: "737" },
      amount: 1000,
      currency: "EUR",
      capture: false,
      authenticated: false
    }))
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
    for (const body of await deliveriesAbout(auth.provider_transaction_id)) (await Effect.runPromise(verify(body, HMAC_KEY))).forEach(via.observe)
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

  it("one bad item rejects the whole batch", async () => {
    const good = JSON.parse(bodies[0]!) as { notificationItems: Array<unknown> }
    const bad = JSON.parse(bodies[0]!.replace(/"success":"(true|false)"/, (_, s: string) => `"success":"${s === "true" ? "false" : "true"}"`)) as { notificationItems: Array<unknown> }
    const batch = JSON.stringify({ live: "false", notificationItems: [...good.notificationItems, ...bad.notificationItems] })
    expect((await rejected(verify(batch, HMAC_KEY)))._tag).toBe("NotificationRejected")
  })
})
