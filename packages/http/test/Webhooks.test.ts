/**
 * Webhook endpoints and deliveries over real HTTP: the endpoint API and its limits, live-mode URL
 * rules (SSRF), delivery of recorded events to a loopback receiver with the spec's headers, the
 * delivery log with its attempts, and manual retries.
 */
import { createServer, type IncomingMessage, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEFAULT_DISPATCH } from "@tender/domain"
import { Effect } from "effect"
import { verifySignature } from "@tender/api/Signature"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, send } from "@tender/client/Testing"
import { expectError, until } from "./support/Webhooks.ts"

let server: TestServer
let merchant: Credentials & { account_id: string }
let receiver: Server
let receiverUrl = ""
/** What the receiver answers, and what it got. */
let answer = 200
const received: Array<{ headers: IncomingMessage["headers"]; body: string; path: string }> = []

const post = (path: string, body: unknown, creds: Credentials = merchant) => send(server, creds, "POST", path, { body: JSON.stringify(body) })
const get = (path: string, creds: Credentials = merchant) => send(server, creds, "GET", path)
const del = (path: string, creds: Credentials = merchant) => send(server, creds, "DELETE", path)

const pay = async (creds: Credentials = merchant) => {
  const token = (await post("/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" }, creds)).json.token
  const reply = await post("/v1/payments", {
    amount: "10.00", currency: "USD", country: "US", merchant_reference: `wh-${Date.now()}-${Math.random()}`,
    payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } }
  }, creds)
  expect(reply.json.status).toBe("completed")
  return reply.json
}

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c) => chunks.push(c))
    request.on("end", () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), path: request.url ?? "" })
      response.writeHead(answer).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const address = receiver.address()
  receiverUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/hooks/tender`
  server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } })
  merchant = await Effect.runPromise(server.accounts.create({ name: "hooks", mode: "test" }))
})
afterAll(async () => {
  await server.close()
  await new Promise<void>((resolve) => receiver.close(() => resolve()))
})

describe("webhook endpoints", () => {
  it("create (201), list, get, update, delete; webhook_not_found after delete", async () => {
    const acct = await Effect.runPromise(server.accounts.create({ name: "crud", mode: "test" }))
    const created = await post("/v1/webhook_endpoints", { url: receiverUrl, enabled_events: ["payment.succeeded"], description: "orders" }, acct)
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ id: expect.stringMatching(/^we_/), url: receiverUrl, enabled_events: ["payment.succeeded"], status: "enabled", created_at: expect.any(String) })
    expect((await get("/v1/webhook_endpoints", acct)).json.data.map((e: { id: string }) => e.id)).toEqual([created.json.id])
    expect((await get(`/v1/webhook_endpoints/${created.json.id}`, acct)).json.description).toBe("orders")
    const updated = await post(`/v1/webhook_endpoints/${created.json.id}`, { enabled_events: ["*"], status: "disabled" }, acct)
    expect(updated.json).toMatchObject({ enabled_events: ["*"], status: "disabled" })
    expect((await del(`/v1/webhook_endpoints/${created.json.id}`, acct)).json).toEqual({ id: created.json.id, deleted: true })
    expectError(await get(`/v1/webhook_endpoints/${created.json.id}`, acct), 404, "webhook_not_found")
    expectError(await del(`/v1/webhook_endpoints/${created.json.id}`, acct), 404, "webhook_not_found")
    // another account never sees it
    expectError(await get(`/v1/webhook_endpoints/${created.json.id}`), 404, "webhook_not_found")
  })

  it("the 17th endpoint is refused with webhook_limit_exceeded", async () => {
    const acct = await Effect.runPromise(server.accounts.create({ name: "many", mode: "test" }))
    for (let i = 0; i < 16; i++) expect((await post("/v1/webhook_endpoints", { url: `${receiverUrl}?n=${i}` }, acct)).status).toBe(201)
    expectError(await post("/v1/webhook_endpoints", { url: receiverUrl }, acct), 400, "webhook_limit_exceeded")
  })

  it("validates URLs and event types: test mode allows http only on loopback", async () => {
    expectError(await post("/v1/webhook_endpoints", { url: "http://merchant.example/hook" }), 400, "validation_failed")
    expectError(await post("/v1/webhook_endpoints", { url: "not a url" }), 400, "validation_failed")
    expectError(await post("/v1/webhook_endpoints", { url: receiverUrl, enabled_events: ["payment.exploded"] }), 400, "validation_failed")
    expect((await post("/v1/webhook_endpoints", { url: "https://merchant.example/hook", enabled_events: ["payment.failed"] })).status).toBe(201)
  })

  it("live mode: https only, never a private, loopback or link-local address (SSRF)", async () => {
    const live = await Effect.runPromise(server.accounts.create({ name: "live hooks", mode: "live" }))
    for (const url of [
      "http://203.0.113.10/hook",
      "https://127.0.0.1/hook",
      "https://10.1.2.3/hook",
      "https://192.168.0.8/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]/hook",
      "https://[fd00::1]/hook",
      "https://localhost/hook"
    ]) {
      const reply = await post("/v1/webhook_endpoints", { url }, live)
      expect({ url, status: reply.status, code: reply.json.code }).toEqual({ url, status: 400, code: "validation_failed" })
    }
    // A public address (203.0.113.0/24 is documentation, refused since issue 12).
    expect((await post("/v1/webhook_endpoints", { url: "https://93.184.215.14/hook" }, live)).status).toBe(201)
  })
})

describe("delivery", () => {
  let endpointId = ""
  beforeAll(async () => {
    endpointId = (await post("/v1/webhook_endpoints", { url: receiverUrl, enabled_events: ["payment.succeeded", "payment.failed"] })).json.id
  })

  it("POSTs each subscribed event, signed over t + endpoint path + body, with X-Event-Id and X-Event-Type", async () => {
    answer = 200
    const payment = await pay()
    const hit = await until(async () => received.find((r) => r.body.includes(payment.order_id)))
    expect(hit.path).toBe("/hooks/tender")
    expect(hit.headers["content-type"]).toBe("application/json")
    expect(hit.headers["x-event-type"]).toBe("payment.succeeded")
    const envelope = JSON.parse(hit.body)
    expect(hit.headers["x-event-id"]).toBe(envelope.id)
    expect(Object.keys(envelope).sort()).toEqual(["created_at", "data", "id", "livemode", "processing_profile", "type"])
    expect(envelope).toMatchObject({ id: expect.stringMatching(/^evt_/), type: "payment.succeeded", livemode: false, processing_profile: null })
    expect(envelope.data).toMatchObject({ order_id: payment.order_id, transaction_id: payment.transaction_id, payment_instrument: { type: "card" } })
    const verdict = verifySignature(merchant.signing_secret, hit.headers["x-signature"] as string, "/hooks/tender", hit.body, Math.floor(Date.now() / 1000))
    expect(verdict).toBe("valid")

    const log = await until(async () => {
      const list = (await get(`/v1/webhook_deliveries?event_id=${envelope.id}`)).json.data
      return list.length === 1 && list[0].status === "succeeded" ? list : undefined
    })
    expect(log[0]).toMatchObject({ endpoint_id: endpointId, event_type: "payment.succeeded", attempt_count: 1, next_attempt_at: null })
    const detail = await get(`/v1/webhook_deliveries/${log[0].id}`)
    expect(detail.json.attempts).toEqual([{ attempted_at: expect.any(String), status_code: 200, duration_ms: expect.any(Number), error: null }])
    expectError(await post(`/v1/webhook_deliveries/${log[0].id}/retry`, {}), 400, "webhook_delivery_not_retryable")
  })

  it("events the endpoint did not subscribe to are not delivered", async () => {
    const before = received.length
    const token = (await post("/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
    const authorized = await post("/v1/payments", {
      amount: "10.00", currency: "USD", country: "US", merchant_reference: `auth-${Date.now()}`, capture_method: "manual",
      payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } }
    })
    await new Promise((r) => setTimeout(r, 400))
    expect(received.slice(before).some((r) => r.body.includes(authorized.json.order_id))).toBe(false)
    expect((await get(`/v1/webhook_deliveries?endpoint_id=${endpointId}`)).json.data.some((d: { event_type: string }) => d.event_type === "payment.authorized")).toBe(false)
  })

  it("a failing endpoint: the attempt is logged and the delivery is failed; a manual retry delivers it", async () => {
    answer = 503
    const payment = await pay()
    const failed = await until(async () => {
      const list = (await get(`/v1/webhook_deliveries?endpoint_id=${endpointId}&status=failed`)).json.data
      return list.find((d: { attempt_count: number }) => d.attempt_count === 1)
    })
    const detail = await get(`/v1/webhook_deliveries/${failed.id}`)
    expect(detail.json.attempts[0]).toMatchObject({ status_code: 503, error: "HTTP 503" })
    expect(Date.parse(detail.json.next_attempt_at) - Date.parse(detail.json.attempts[0].attempted_at)).toBeGreaterThanOrEqual(4_500)
    answer = 200
    const retried = await post(`/v1/webhook_deliveries/${failed.id}/retry`, {})
    expect(retried.status).toBe(200)
    expect(retried.json.status).toBe("pending")
    const done = await until(async () => {
      const d = (await get(`/v1/webhook_deliveries/${failed.id}`)).json
      return d.status === "succeeded" ? d : undefined
    })
    expect(done.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 200])
    expect(received.filter((r) => r.body.includes(payment.order_id)).length).toBe(2)
  })

  it("deliveries to a deleted endpoint end exhausted, the log kept", async () => {
    const acct = await Effect.runPromise(server.accounts.create({ name: "deleter", mode: "test" }))
    answer = 503
    const endpoint = (await post("/v1/webhook_endpoints", { url: receiverUrl }, acct)).json
    await pay(acct)
    const failed = await until(async () => (await get(`/v1/webhook_deliveries?endpoint_id=${endpoint.id}&status=failed`, acct)).json.data[0])
    await del(`/v1/webhook_endpoints/${endpoint.id}`, acct)
    answer = 200
    await post(`/v1/webhook_deliveries/${failed.id}/retry`, {}, acct)
    const done = await until(async () => {
      const d = (await get(`/v1/webhook_deliveries/${failed.id}`, acct)).json
      return d.status === "exhausted" ? d : undefined
    })
    expect(done.attempts.map((a: { error: string }) => a.error)).toEqual(["HTTP 503", "endpoint deleted"])
  })

  it("webhook_delivery_not_found (404), and another account's delivery is not found", async () => {
    expectError(await get("/v1/webhook_deliveries/wd_doesnotexist0000000"), 404, "webhook_delivery_not_found")
    expectError(await post("/v1/webhook_deliveries/wd_doesnotexist0000000/retry", {}), 404, "webhook_delivery_not_found")
    const other = await Effect.runPromise(server.accounts.create({ name: "nosy", mode: "test" }))
    const mine = (await get("/v1/webhook_deliveries")).json.data[0]
    expectError(await get(`/v1/webhook_deliveries/${mine.id}`, other), 404, "webhook_delivery_not_found")
  })
})

describe("one slow endpoint never delays another's", () => {
  it("with its slots taken by a slow endpoint, a fast endpoint's deliveries still arrive at once", async () => {
    const acct = await Effect.runPromise(server.accounts.create({ name: "two endpoints", mode: "test" }))
    const slowHits: Array<number> = []
    const slow = createServer((_req, res) => {
      slowHits.push(Date.now())
      setTimeout(() => res.writeHead(200).end(), 3_000)
    })
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve))
    const slowAddress = slow.address()
    const slowUrl = `http://127.0.0.1:${typeof slowAddress === "object" && slowAddress !== null ? slowAddress.port : 0}/slow`
    try {
      await post("/v1/webhook_endpoints", { url: slowUrl }, acct)
      await post("/v1/webhook_endpoints", { url: receiverUrl }, acct)
      answer = 200
      const started = Date.now()
      const payments = []
      // More events than the slow endpoint's bound, so its bound is what holds them back.
      const bound = DEFAULT_DISPATCH.perEndpoint
      for (let i = 0; i < bound + 4; i++) payments.push(await pay(acct))
      // every event reaches the fast endpoint within a second, while the slow one holds its slots
      for (const p of payments) {
        const hit = await until(async () => received.find((r) => r.body.includes(p.order_id)), 5_000)
        expect(hit).toBeDefined()
      }
      expect(Date.now() - started).toBeLessThan(2_500)
      // the slow endpoint never had more than its bound in flight at once
      expect(slowHits.filter((t) => t - slowHits[0] < 2_000).length).toBeLessThanOrEqual(bound)
    } finally {
      slow.closeAllConnections()
      await new Promise<void>((resolve) => slow.close(() => resolve()))
    }
  })
})
