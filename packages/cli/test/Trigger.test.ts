/**
 * `tender trigger EVENT` end to end: one `serve` process, a test-mode account whose registered
 * webhook endpoint points at a real local receiver; every event type triggered by a `tender trigger`
 * process, and received, about the objects the command printed. A live-mode account and an unknown
 * event are refused in one line, exit 1.
 */
import { createServer, type Server } from "node:http"
import { EVENT_TYPES } from "@tender/domain/webhooks/Webhook"
import { afterAll, beforeAll, expect, it } from "vitest"
import { makeHome, merchantClient, type Merchant, type Served, untilAnswered } from "./support/Tender.ts"

const home = makeHome("tender-trigger-")

/** Triggers run this many at a time, on one account: each issues and revokes a temporary key of it at once. */
const AT_ONCE = 5

let served: Served
let merchant: Merchant & { readonly account_id: string }
let receiver: Server
/** Every envelope the receiver got. */
const received: Array<{ readonly type: string; readonly data: { readonly id?: string; readonly order_id?: string } }> = []

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c) => chunks.push(c))
    request.on("end", () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const address = receiver.address()
  const port = typeof address === "object" && address !== null ? address.port : 0

  served = await home.serve({ TENDER_RATE_LIMIT_PER_SECOND: "100000", TENDER_RATE_LIMIT_BURST: "100000" })
  merchant = await home.runJson("accounts", "create", "--name", "trigger shop")
  const endpoint = await merchantClient(() => merchant).post(served, "/v1/webhook_endpoints", { url: `http://127.0.0.1:${port}/hooks` })
  expect(endpoint.status).toBe(201)
}, 240_000)

afterAll(async () => {
  await served?.stop()
  await home.cleanup()
  await new Promise<void>((resolve) => receiver.close(() => resolve()))
}, 120_000)

interface Made {
  readonly kind: string
  readonly id: string
  readonly status: string
}

/** `tender trigger EVENT --json`: what it printed. */
const trigger = async (event: string): Promise<{ event: string; account_id: string; objects: ReadonlyArray<Made> }> => {
  const printed = await home.runJson("trigger", event, "--account", merchant.account_id, "--api-url", served.url)
  expect(printed).toMatchObject({ event, account_id: merchant.account_id })
  return printed
}

it("every event type: triggered through the API, and received by the account's endpoint, about what the command printed", async () => {
  // The processes are the slow part: a few at a time, as far as two cores take them.
  const printed = new Map<string, ReadonlyArray<Made>>()
  for (let i = 0; i < EVENT_TYPES.length; i += AT_ONCE) {
    const batch = EVENT_TYPES.slice(i, i + AT_ONCE)
    const results = await Promise.all(batch.map((event) => trigger(event)))
    batch.forEach((event, j) => printed.set(event, results[j]!.objects))
  }
  for (const [event, objects] of printed) {
    expect(objects.length, event).toBeGreaterThan(0)
    for (const made of objects) expect(made, event).toEqual({ kind: expect.any(String), id: expect.stringMatching(/^[a-z]+_\w+$/), status: expect.any(String) })
  }
  // Each event, about one of the objects its command printed (the envelope's data names the object or its order).
  const about = (event: string) =>
    received.find((e) => e.type === event && printed.get(event)!.some((made) => made.id === e.data.id || made.id === e.data.order_id))
  await untilAnswered(async () => EVENT_TYPES.filter((event) => about(event) === undefined), (missing) => missing.length === 0)
  // Every run's temporary key was revoked at its end: the merchant's own key is the only live one.
  const account = await home.runJson("accounts", "get", merchant.account_id)
  expect(account.secret_keys).toHaveLength(1 + EVENT_TYPES.length)
  expect(account.secret_keys.filter((k: { revoked_at: string | null }) => k.revoked_at === null || Date.parse(k.revoked_at) > Date.now())).toHaveLength(1)
  // Distinct runs, distinct objects: each printed its own.
  const ids = [...printed.values()].flatMap((objects) => objects.map((o) => o.id))
  expect(new Set(ids).size).toBe(ids.length)
})

it("a live-mode account: refused in one line before anything is made, exit 1", async () => {
  const live = await home.runJson("accounts", "create", "--name", "live shop", "--mode", "live")
  const before = received.length
  const result = await home.run("trigger", "payment.succeeded", "--account", live.account_id, "--api-url", served.url)
  expect(result).toMatchObject({ code: 1, stdout: "" })
  expect(result.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^error: trigger works in test mode only: account acct_\w+ is live/)])
  const json = await home.runJsonError("trigger", "payment.succeeded", "--account", live.account_id, "--api-url", served.url)
  expect(json.code).toBe("forbidden")
  expect(received.length).toBe(before)
})

it("an unknown event: refused with the list of the valid ones, exit 1; --help lists them with their recipes", async () => {
  const result = await home.run("trigger", "payment.exploded")
  expect(result.code).toBe(1)
  expect(result.stderr.trim().split("\n")).toHaveLength(1)
  for (const event of EVENT_TYPES) expect(result.stderr).toContain(`"${event}"`)
  const help = await home.run("trigger", "--help")
  for (const event of EVENT_TYPES) expect(help.stdout).toMatch(new RegExp(`^\\s+${event.replace(/\./g, "\\.")}\\s+\\S`, "m"))
})
