/**
 * Issue 21, item 10: "webhook endpoints may not name any port of this Tender deployment (API,
 * database, Redis, sibling processes), also from a standalone `tender worker`". Real processes on
 * one data dir: a `serve --no-background` (A), a standalone `tender worker` (W) delivering, and a
 * second `serve --workers 2` (B, a cluster) started after an endpoint on its port was registered.
 * Every `serve` process records its port in the database (ServerListeners), so A refuses B's port
 * at registration and W — which listens on no port and was told none — refuses it at delivery,
 * with no connection made. With TENDER_WEBHOOK_ALLOW_PRIVATE (on for every process here), a server's
 * port is refused on its machine's private address too, not only on loopback (a third `serve`, C,
 * bound to every address). docs/decisions.md, "Webhook endpoints and this deployment's ports".
 */
import { machineAddresses } from "@tender/adapters/webhooks/Deployment"
import { addressKind } from "@tender/domain"
import { freePort } from "@tender/http/testing/TestServer"
import { afterAll, beforeAll, expect, it } from "vitest"
import { makeHome, type Merchant, merchantClient, type Running, type Served } from "./support/Tender.ts"

const home = makeHome("tender-ports-")
const ENV = { TENDER_RATE_LIMIT_PER_SECOND: "100000", TENDER_RATE_LIMIT_BURST: "100000", TENDER_WEBHOOK_ALLOW_PRIVATE: "true" }
const API_ONLY = { ...ENV, TENDER_SERVE_BACKGROUND: "false" }

let a: Served | undefined
let b: Served | undefined
let c: Served | undefined
let worker: Running | undefined
let merchant: Merchant
const { post, get } = merchantClient(() => merchant)

beforeAll(async () => {
  a = await home.serve(API_ONLY)
  merchant = await home.runJson("accounts", "create", "--name", "Ports")
  worker = home.start(["worker"], ENV)
}, 150_000)

afterAll(async () => {
  await Promise.all([b?.stop(), c?.stop(), worker?.stop()])
  await a?.stop()
  await home.cleanup()
}, 150_000)

const portOf = (served: Served) => Number(new URL(served.url).port)

const until = async <A>(what: string, read: () => Promise<A | undefined>, timeoutMs = 60_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\nworker:\n${worker?.log().slice(-3000)}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** A payment (its `payment.succeeded` goes to every endpoint), then `endpoint`'s delivery once the worker has attempted it. */
const firstAttempt = async (endpoint: string) => {
  const { token } = (await post(a!, "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).json
  const paid = await post(a!, "/v1/payments", {
    amount: "5.00", currency: "USD", country: "US", merchant_reference: `ports-${Date.now()}-${Math.random()}`,
    payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } }
  })
  expect(paid.json.status).toBe("completed")
  const delivery = await until("the worker's attempt", async () => {
    const list = (await get(a!, `/v1/webhook_deliveries?endpoint_id=${endpoint}`)).json.data
    return list.find((d: { attempt_count: number }) => d.attempt_count > 0)
  })
  return (await get(a!, `/v1/webhook_deliveries/${delivery.id}`)).json
}

it("a sibling server's port: refused at registration by another server, and at delivery by a standalone worker, no connection made", async () => {
  const siblingPort = await freePort()
  // Before the sibling runs, its port is nobody's: a local receiver may be registered there.
  const early = await post(a!, "/v1/webhook_endpoints", { url: `http://127.0.0.1:${siblingPort}/hooks`, enabled_events: ["payment.succeeded"] })
  expect(early.status).toBe(201)
  // A's own port, as before.
  expect((await post(a!, "/v1/webhook_endpoints", { url: `http://127.0.0.1:${portOf(a!)}/hooks` })).json).toMatchObject({
    code: "validation_failed",
    errors: [{ field: "url", message: `must not point at loopback port ${portOf(a!)} (used by this server)` }]
  })

  b = await home.serve({ ...API_ONLY, TENDER_WORKERS: "2" }, siblingPort)
  // A learned B's port from the database.
  const refused = await post(a!, "/v1/webhook_endpoints", { url: `http://localhost:${siblingPort}/other` })
  expect({ status: refused.status, code: refused.json.code, errors: refused.json.errors }).toEqual({
    status: 400,
    code: "validation_failed",
    errors: [{ field: "url", message: `must not point at loopback port ${siblingPort} (used by this server)` }]
  })

  // An event for the endpoint stored before B started: W (no port of its own, told none) delivers.
  const detail = await firstAttempt(early.json.id)
  expect(detail.status).toBe("failed")
  // Refused before connecting: B would have answered (404 on /hooks), and the attempt would say so.
  expect(detail.attempts[0]).toMatchObject({ status_code: null, error: `endpoint URL must not point at loopback port ${siblingPort} (used by this server)` })
}, 180_000)

it("a server stopped gracefully gives its port back: a local receiver may be registered there again", async () => {
  const port = portOf(b!)
  await b!.stop()
  b = undefined
  const registered = await post(a!, "/v1/webhook_endpoints", { url: `http://127.0.0.1:${port}/hooks` })
  expect(registered.status).toBe(201)
}, 120_000)

/** A private-use or unique-local address of this machine (receivers may be there under TENDER_WEBHOOK_ALLOW_PRIVATE). */
const privateAddress = machineAddresses().find((address) => addressKind(address) === "private")

it.skipIf(privateAddress === undefined)("a server's port on its machine's private address: refused at registration, and at delivery by the standalone worker", async () => {
  const host = privateAddress!.includes(":") ? `[${privateAddress}]` : privateAddress!
  const siblingPort = await freePort()
  // Nobody's yet, on the private address: registered (https, as a receiver inside the operator's network would be).
  const early = await post(a!, "/v1/webhook_endpoints", { url: `https://${host}:${siblingPort}/hooks`, enabled_events: ["payment.succeeded"] })
  expect(early.status).toBe(201)
  // A listens on loopback only, yet its machine's addresses are refused at its port: nothing else may listen there as Tender.
  expect((await post(a!, "/v1/webhook_endpoints", { url: `https://${host}:${portOf(a!)}/hooks` })).json).toMatchObject({
    code: "validation_failed",
    errors: [{ field: "url", message: `must not point at ${privateAddress} port ${portOf(a!)} (used by this server)` }]
  })

  c = await home.serve(API_ONLY, siblingPort, ["--host", "::"])
  const refused = await post(a!, "/v1/webhook_endpoints", { url: `https://${host}:${siblingPort}/other` })
  expect({ status: refused.status, code: refused.json.code, errors: refused.json.errors }).toEqual({
    status: 400,
    code: "validation_failed",
    errors: [{ field: "url", message: `must not point at ${privateAddress} port ${siblingPort} (used by this server)` }]
  })

  const detail = await firstAttempt(early.json.id)
  // Refused before connecting: C would have answered the TLS handshake with plain HTTP, and the attempt would say so.
  expect(detail.attempts[0]).toMatchObject({ status_code: null, error: `endpoint URL must not point at ${privateAddress} port ${siblingPort} (used by this server)` })
}, 180_000)
