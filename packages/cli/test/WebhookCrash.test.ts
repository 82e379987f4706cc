/**
 * Crash safety of webhook delivery: the server is killed (SIGKILL) while deliveries are in flight,
 * started again on the same database, and every committed event still reaches the receiver at
 * least once; a duplicate carries the same envelope id. Nothing is lost.
 */
import { createServer, type Server, type ServerResponse } from "node:http"
import { send } from "@tender/client/Testing"
import { afterAll, beforeAll, expect, it } from "vitest"
import { makeHome, type Served } from "./support/Tender.ts"

const home = makeHome("tender-crash-")
// A short lease so the test need not wait out the production one (the attempt timeout + 15 s).
const ENV = { TENDER_RATE_LIMIT_PER_SECOND: "100000", TENDER_RATE_LIMIT_BURST: "100000", TENDER_WEBHOOK_LEASE_MS: "3000" }

let receiver: Server
let receiverUrl = ""
/** Every request the receiver got: the X-Event-Id header and the envelope id of its body. */
const hits: Array<{ header: string; id: string }> = []
let served: Served | undefined
/**
 * Until the kill, the receiver answers nothing: the deliveries it got are in flight when the server
 * dies, and the others (past the dispatcher's 16 per endpoint) wait. A dispatcher woken as each
 * event commits would otherwise deliver all 20 before the test got to the kill.
 */
let holding = true
const held: Array<ServerResponse> = []

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c) => chunks.push(c))
    request.on("end", () => {
      const envelope = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      hits.push({ header: String(request.headers["x-event-id"]), id: envelope.id })
      if (holding) held.push(response)
      // Slow to answer after the restart too, so its attempts overlap.
      else setTimeout(() => response.writeHead(200).end(), 700)
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const address = receiver.address()
  receiverUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/hooks`
}, 30_000)

afterAll(async () => {
  if (served !== undefined) await served.stop()
  await home.cleanup()
  await new Promise<void>((resolve) => receiver.close(() => resolve()))
}, 120_000)

it("SIGKILL during deliveries, restart: every committed event is delivered at least once", async () => {
  served = await home.serve(ENV)
  const merchant = await home.runJson("accounts", "create", "--name", "crashy")
  const call = async (path: string, body?: unknown) => {
    const reply = await send({ baseUrl: served!.url }, merchant, body === undefined ? "GET" : "POST", path, body === undefined ? {} : { body: JSON.stringify(body) })
    return reply.json
  }
  await call("/v1/webhook_endpoints", { url: receiverUrl, enabled_events: ["payment.succeeded"] })
  const { token } = await call("/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
  const payments = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    call("/v1/payments", {
      amount: "5.00", currency: "USD", country: "US", merchant_reference: `crash-${i}`,
      payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } }
    })))
  expect(payments.every((p) => p.status === "completed")).toBe(true)
  const committed = new Set<string>((await call("/v1/webhook_deliveries?limit=100")).data.map((d: { event_id: string }) => d.event_id))
  expect(committed.size).toBe(20)

  // Kill it while attempts are in flight (the receiver holds every one it got).
  const deadline = Date.now() + 20_000
  while (hits.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  expect(hits.length).toBeGreaterThan(0)
  served.process.kill("SIGKILL")
  await new Promise((r) => served!.process.once("exit", r))
  const beforeRestart = new Set(hits.map((h) => h.id))
  // Their connections died with the server: these answers reach nobody.
  holding = false
  for (const response of held.splice(0)) response.destroy()

  served = await home.serve(ENV)
  const end = Date.now() + 90_000
  while (new Set(hits.map((h) => h.id)).size < committed.size && Date.now() < end) await new Promise((r) => setTimeout(r, 100))

  const delivered = new Set(hits.map((h) => h.id))
  const missing = [...committed].filter((id) => !delivered.has(id))
  // On failure, say why: the delivery log and the restarted server's output.
  const diagnosis = missing.length === 0 ? "" : JSON.stringify((await call("/v1/webhook_deliveries?limit=100")).data, null, 1) + "\n" + served.log().slice(-4000)
  expect(missing, diagnosis).toEqual([])
  expect([...delivered].every((id) => committed.has(id))).toBe(true)
  // Duplicates are the same event: header and body agree, and ids repeat rather than multiply.
  expect(hits.every((h) => h.header === h.id)).toBe(true)
  expect(beforeRestart.size).toBeLessThan(committed.size)
  // Every delivery ends succeeded once the restarted server has recorded its attempts.
  const settle = Date.now() + 30_000
  let statuses: Array<string> = []
  while (Date.now() < settle) {
    statuses = (await call("/v1/webhook_deliveries?limit=100")).data.map((d: { status: string }) => d.status)
    if (statuses.every((s) => s === "succeeded")) break
    await new Promise((r) => setTimeout(r, 200))
  }
  expect(statuses.filter((s) => s !== "succeeded")).toEqual([])
}, 240_000)
