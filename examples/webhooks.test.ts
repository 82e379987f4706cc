import { signatureHeader } from "@tender/api/Signature"
import { afterEach, describe, expect, it } from "vitest"
import { startReceiver, type Receiver } from "./webhook-receiver.ts"
import {
  boundedSeenEvents,
  createWebhookHandler,
  type Envelope,
  PaymentStatusBook,
  type WebhookHandlerOptions,
  type WebhookResult
} from "./webhooks.ts"

const SECRET = "whsec_test_merchant_a"
const OTHER_SECRET = "whsec_test_merchant_b"
const PATH = "/webhooks/tender"
/** A fixed clock: 2026-11-25T12:00:00Z. */
const NOW_S = 1_795_608_000
const now = () => NOW_S * 1000

let sequence = 0
const envelope = (type: string, data: Record<string, unknown>, overrides: Partial<Envelope> = {}): Envelope => ({
  id: `evt_${++sequence}`,
  type,
  created_at: new Date(now()).toISOString(),
  livemode: false,
  processing_profile: null,
  data,
  ...overrides
})

/** The bytes Tender would send, and their signature at `t`. */
const delivery = (event: Envelope, t = NOW_S, secret = SECRET, path = PATH) => {
  const body = JSON.stringify(event)
  return { body, headers: { "x-signature": signatureHeader(secret, t, path, body), "x-event-id": event.id, "x-event-type": event.type } }
}

const handler = (options: Partial<WebhookHandlerOptions> = {}) => createWebhookHandler({ signingSecret: SECRET, path: PATH, now, ...options })

const succeeded = () => envelope("payment.succeeded", { order_id: "ord_1", order_status: "succeeded", transaction_id: "tr_1", merchant_reference: "order-1001" })

const reasonOf = (result: WebhookResult) => (result.accepted ? "accepted" : result.reason)

describe("createWebhookHandler: signature", () => {
  it("accepts a delivery signed over t + path + raw body, as a string or as bytes", () => {
    const event = succeeded()
    const { body, headers } = delivery(event)
    const result = handler()(body, headers)
    expect(result).toMatchObject({ accepted: true, event })
    expect(handler()(new TextEncoder().encode(body), headers)).toMatchObject({ accepted: true, event })
  })

  it("rejects a tampered body", () => {
    const { body, headers } = delivery(succeeded())
    const tampered = body.replace('"succeeded"', '"failed"')
    expect(tampered).not.toBe(body)
    expect(reasonOf(handler()(tampered, headers))).toBe("invalid_signature")
  })

  it("rejects the same JSON re-serialised with other whitespace: the raw bytes are what is signed", () => {
    const { body, headers } = delivery(succeeded())
    const reserialised = JSON.stringify(JSON.parse(body), null, 2)
    expect(JSON.parse(reserialised)).toEqual(JSON.parse(body))
    expect(reasonOf(handler()(reserialised, headers))).toBe("invalid_signature")
  })

  it("verifies whatever whitespace Tender sent, because it hashes the bytes as they are", () => {
    const body = '{ "id":"evt_ws",\n "type":"payment.failed", "created_at":"2026-11-25T12:00:00Z", "livemode":false,\n "processing_profile":"eu-cards", "data":{"order_id":"ord_ws","order_status":"failed"} }'
    const result = handler()(body, { "x-signature": signatureHeader(SECRET, NOW_S, PATH, body) })
    expect(result).toMatchObject({ accepted: true, event: { id: "evt_ws", processing_profile: "eu-cards" } })
  })

  it("rejects a delivery signed with another account's secret", () => {
    const { body, headers } = delivery(succeeded(), NOW_S, OTHER_SECRET)
    expect(reasonOf(handler()(body, headers))).toBe("invalid_signature")
  })

  it("verifies against its own endpoint path and rejects a delivery signed for another", () => {
    const event = succeeded()
    const handle = handler({ path: "/hooks/shop-eu" })
    const forOther = delivery(event, NOW_S, SECRET, PATH)
    expect(reasonOf(handle(forOther.body, forOther.headers))).toBe("invalid_signature")
    const forThis = delivery(event, NOW_S, SECRET, "/hooks/shop-eu")
    expect(reasonOf(handle(forThis.body, forThis.headers))).toBe("accepted")
  })

  it("rejects a missing or garbled signature header", () => {
    const { body } = delivery(succeeded())
    expect(reasonOf(handler()(body, {}))).toBe("invalid_signature")
    expect(reasonOf(handler()(body, { "x-signature": "v1=abc" }))).toBe("invalid_signature")
  })

  it("accepts 299 s either side, rejects 301 s old and 301 s ahead as expired", () => {
    for (const [offset, expected] of [[-299, "accepted"], [299, "accepted"], [-301, "expired"], [301, "expired"]] as const) {
      const { body, headers } = delivery(succeeded(), NOW_S + offset)
      expect(reasonOf(handler()(body, headers)), `offset ${offset} s`).toBe(expected)
    }
  })

  it("accepts a header with several v1 entries when one of them verifies", () => {
    const event = succeeded()
    const body = JSON.stringify(event)
    const valid = signatureHeader(SECRET, NOW_S, PATH, body).split("v1=")[1]
    const stale = signatureHeader(OTHER_SECRET, NOW_S, PATH, body).split("v1=")[1]
    const header = `t=${NOW_S}, v1=${stale}, v1=${valid}`
    expect(handler()(body, { "x-signature": header })).toMatchObject({ accepted: true, event })
    expect(reasonOf(handler()(body, { "x-signature": `t=${NOW_S}, v1=${stale}, v1=${stale}` }))).toBe("invalid_signature")
  })
})

describe("createWebhookHandler: body", () => {
  const signed = (body: string) => ({ "x-signature": signatureHeader(SECRET, NOW_S, PATH, body) })

  it("rejects a signed body that is not an envelope as malformed", () => {
    for (const body of ["not json", "[]", '{"id":"evt_x","type":"payment.succeeded"}', JSON.stringify({ ...succeeded(), data: null })]) {
      expect(reasonOf(handler()(body, signed(body))), body).toBe("malformed")
    }
  })

  it("rejects bytes that are not UTF-8 as malformed", () => {
    const bytes = new Uint8Array([0x7b, 0xff, 0x7d])
    expect(reasonOf(handler()(bytes, { "x-signature": signatureHeader(SECRET, NOW_S, PATH, bytes) }))).toBe("malformed")
  })

  it("rejects unsigned X-Event-Id or X-Event-Type headers that disagree with the signed envelope", () => {
    const { body, headers } = delivery(succeeded())
    expect(reasonOf(handler()(body, { ...headers, "x-event-id": "evt_other" }))).toBe("malformed")
    expect(reasonOf(handler()(body, { ...headers, "x-event-type": "payment.failed" }))).toBe("malformed")
  })
})

describe("createWebhookHandler: duplicates", () => {
  it("accepts an envelope id once; redeliveries are reported as duplicates with the event", () => {
    const handle = handler()
    const event = succeeded()
    const first = delivery(event)
    // A retry is signed afresh, so only the envelope id tells it is the same event.
    const retry = delivery(event, NOW_S + 5)
    expect(first.headers["x-signature"]).not.toBe(retry.headers["x-signature"])
    expect(handle(first.body, first.headers).accepted).toBe(true)
    expect(handle(retry.body, retry.headers)).toMatchObject({ accepted: false, reason: "duplicate", event: { id: event.id } })
    expect(reasonOf(handle(first.body, first.headers))).toBe("duplicate")
  })

  it("does not let a forged request mark an id as seen", () => {
    const handle = handler()
    const event = succeeded()
    const forged = delivery(event, NOW_S, OTHER_SECRET)
    expect(reasonOf(handle(forged.body, forged.headers))).toBe("invalid_signature")
    const genuine = delivery(event)
    expect(handle(genuine.body, genuine.headers).accepted).toBe(true)
  })

  it("uses an injected store, shared across handlers", () => {
    const seen = boundedSeenEvents()
    const event = succeeded()
    const { body, headers } = delivery(event)
    expect(handler({ seen })(body, headers).accepted).toBe(true)
    expect(reasonOf(handler({ seen })(body, headers))).toBe("duplicate")
  })

  it("the default store is bounded: it forgets the oldest id past its limit", () => {
    const seen = boundedSeenEvents(2)
    expect([seen.add("evt_a"), seen.add("evt_b"), seen.add("evt_a")]).toEqual([true, true, false])
    expect(seen.add("evt_c")).toBe(true)
    expect([seen.add("evt_b"), seen.add("evt_a")]).toEqual([false, true])
  })
})

describe("PaymentStatusBook: forward-only", () => {
  const at = (seconds: number) => new Date(now() + seconds * 1000).toISOString()
  const event = (type: string, order_status: string, seconds: number, order_id = "ord_1") =>
    envelope(type, { order_id, order_status }, { created_at: at(seconds) })

  it("ignores an in-flight status after a final one", () => {
    const book = new PaymentStatusBook()
    expect(book.apply(event("payment.succeeded", "succeeded", 10))).toMatchObject({ applied: true, current: "succeeded" })
    expect(book.apply(event("payment.requires_action", "processing", 20))).toEqual({
      orderId: "ord_1",
      reported: "processing",
      current: "succeeded",
      applied: false,
      ignored: "final"
    })
    expect(book.get("ord_1")).toBe("succeeded")
  })

  it("applies a final status once: a later final one is ignored", () => {
    const book = new PaymentStatusBook()
    book.apply(event("payment.succeeded", "succeeded", 10))
    expect(book.apply(event("payment.failed", "failed", 20))).toMatchObject({ applied: false, ignored: "final", current: "succeeded" })
    expect(book.get("ord_1")).toBe("succeeded")
  })

  it("handles out-of-order arrival: a final status emitted last but delivered first stands", () => {
    const book = new PaymentStatusBook()
    // Emitted: requires_action (t1), authorized (t2), succeeded (t3). Delivered: t3, t1, t2.
    expect(book.apply(event("payment.succeeded", "succeeded", 3))?.applied).toBe(true)
    expect(book.apply(event("payment.requires_action", "requires_action", 1))?.applied).toBe(false)
    expect(book.apply(event("payment.authorized", "authorized", 2))?.applied).toBe(false)
    expect(book.get("ord_1")).toBe("succeeded")
  })

  it("between in-flight statuses, a late older event does not undo a newer one", () => {
    const book = new PaymentStatusBook()
    expect(book.apply(event("payment.authorized", "authorized", 2))?.applied).toBe(true)
    expect(book.apply(event("payment.requires_action", "requires_action", 1))).toMatchObject({ applied: false, ignored: "stale", current: "authorized" })
    expect(book.apply(event("payment.partially_captured", "authorized", 3))?.applied).toBe(true)
    // A final status is applied even when its created_at is older than the in-flight one kept.
    expect(book.apply(event("payment.canceled", "canceled", 0))?.applied).toBe(true)
    expect(book.get("ord_1")).toBe("canceled")
  })

  it("keeps orders apart and passes over events without an order status", () => {
    const book = new PaymentStatusBook()
    book.apply(event("payment.succeeded", "succeeded", 1, "ord_a"))
    expect(book.apply(event("payment.requires_action", "requires_action", 2, "ord_b"))?.applied).toBe(true)
    expect(book.apply(envelope("refund.succeeded", { refund_id: "rf_1", order_id: "ord_a" }))).toBeUndefined()
    expect(book.apply(envelope("payment.succeeded", { order_id: "ord_a", order_status: "settled_somehow" }))).toBeUndefined()
    expect([book.get("ord_a"), book.get("ord_b")]).toEqual(["succeeded", "requires_action"])
  })

  it("is applied by the handler to accepted events, and not again for duplicates", () => {
    const statuses = new PaymentStatusBook()
    const handle = handler({ statuses })
    const late = event("payment.requires_action", "requires_action", 1)
    const final = event("payment.succeeded", "succeeded", 2)
    const first = delivery(final)
    expect(handle(first.body, first.headers)).toMatchObject({ accepted: true, status: { applied: true, current: "succeeded" } })
    const second = delivery(late)
    expect(handle(second.body, second.headers)).toMatchObject({ accepted: true, status: { applied: false, current: "succeeded" } })
    expect(statuses.get("ord_1")).toBe("succeeded")
  })
})

describe("startReceiver over loopback HTTP", () => {
  let receiver: Receiver | undefined
  const lines: Array<string> = []
  afterEach(async () => {
    await receiver?.close()
    receiver = undefined
    lines.length = 0
  })

  const start = async () => {
    receiver = await startReceiver({ signingSecret: SECRET, port: 0, path: PATH, log: (line) => lines.push(line) })
    return receiver
  }
  const post = (url: string, body: string, headers: Record<string, string>) =>
    fetch(url, { method: "POST", body, headers: { "content-type": "application/json", ...headers } })

  it("accepts a delivery signed by signatureHeader, answers 200 to it and its duplicate, 400 to a forgery", async () => {
    const { url, accepted, statuses } = await start()
    const event = succeeded()
    // Real wall-clock time: the receiver uses Date.now by default.
    const t = Math.floor(Date.now() / 1000)
    const body = JSON.stringify(event, null, 1)
    const headers = { "x-signature": signatureHeader(SECRET, t, PATH, body), "x-event-id": event.id, "x-event-type": event.type }

    const ok = await post(url, body, headers)
    expect(ok.status).toBe(200)
    const again = await post(url, body, headers)
    expect(again.status).toBe(200)
    const forged = await post(url, body, { ...headers, "x-signature": signatureHeader(OTHER_SECRET, t, PATH, body) })
    expect([forged.status, await forged.json()]).toEqual([400, { error: "invalid_signature" }])
    const stale = await post(url, body, { ...headers, "x-signature": signatureHeader(SECRET, t - 301, PATH, body) })
    expect([stale.status, await stale.json()]).toEqual([400, { error: "expired" }])

    expect(accepted).toEqual([event])
    expect(statuses.get("ord_1")).toBe("succeeded")
    expect(lines).toEqual([
      `accepted ${event.id} payment.succeeded ord_1 → succeeded`,
      `duplicate ${event.id} payment.succeeded (already handled)`,
      "rejected invalid_signature",
      "rejected expired"
    ])
  })

  it("logs an ignored late status and keeps the final one", async () => {
    const { url } = await start()
    const t = Math.floor(Date.now() / 1000)
    const final = envelope("payment.succeeded", { order_id: "ord_9", order_status: "succeeded" }, { created_at: new Date().toISOString() })
    const late = envelope("payment.requires_action", { order_id: "ord_9", order_status: "requires_action" }, { created_at: new Date(Date.now() - 60_000).toISOString() })
    for (const event of [final, late]) {
      const body = JSON.stringify(event)
      expect((await post(url, body, { "x-signature": signatureHeader(SECRET, t, PATH, body) })).status).toBe(200)
    }
    expect(lines).toEqual([
      `accepted ${final.id} payment.succeeded ord_9 → succeeded`,
      `accepted ${late.id} payment.requires_action ord_9 → succeeded (requires_action ignored: already final)`
    ])
  })

  it("answers 404 off the endpoint path and 405 to other methods", async () => {
    const { url } = await start()
    const base = new URL(url)
    expect((await post(new URL("/elsewhere", base).href, "{}", {})).status).toBe(404)
    expect((await fetch(url)).status).toBe(405)
  })

  it("accepts a delivery to the endpoint URL with a query, signed over the path alone", async () => {
    const { url, accepted } = await start()
    const event = succeeded()
    const body = JSON.stringify(event)
    const response = await post(`${url}?shop=eu`, body, { "x-signature": signatureHeader(SECRET, Math.floor(Date.now() / 1000), PATH, body) })
    expect(response.status).toBe(200)
    expect(accepted).toEqual([event])
  })

  it("answers 413 to an oversized body without reading it as JSON", async () => {
    const { url } = await start()
    const response = await post(url, "x".repeat(1024 * 1024 + 1), { "x-signature": "t=1, v1=" + "0".repeat(64) })
    expect(response.status).toBe(413)
    expect(lines).toEqual(["rejected body_too_large"])
  })

  it("calls onEvent after answering, and a failing onEvent does not change the answer", async () => {
    const seen: Array<string> = []
    receiver = await startReceiver({
      signingSecret: SECRET,
      port: 0,
      path: PATH,
      log: (line) => lines.push(line),
      onEvent: (event) => {
        seen.push(event.id)
        throw new Error("fulfilment down")
      }
    })
    const event = succeeded()
    const body = JSON.stringify(event)
    const response = await post(receiver.url, body, { "x-signature": signatureHeader(SECRET, Math.floor(Date.now() / 1000), PATH, body) })
    expect(response.status).toBe(200)
    await expect.poll(() => seen).toEqual([event.id])
    await expect.poll(() => lines.at(-1)).toBe(`onEvent failed for ${event.id}: Error: fulfilment down`)
  })
})
