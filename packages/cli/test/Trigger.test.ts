/**
 * `tender trigger EVENT` end to end, received by `tender listen` (issue 25's "Done when"): one
 * `serve` process, a test-mode account, a listener forwarding its events to a real local receiver
 * that verifies each signature with the listen secret; every event type triggered by a `tender
 * trigger` process and received, about the objects the command printed — with the listener killed
 * (SIGKILL) part of the way and started again, missing nothing. A live-mode account and an unknown
 * event are refused in one line, exit 1.
 */
import { createServer, type Server } from "node:http"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { EVENT_TYPES } from "@tender/domain/webhooks/Webhook"
import { afterAll, beforeAll, expect, it } from "vitest"
import { makeHome, type Merchant, type Running, type Served, untilAnswered, verifiesWebhook } from "./support/Tender.ts"

const home = makeHome("tender-trigger-")

/** Triggers run this many at a time, on one account: each issues and revokes a temporary key of it at once. */
const AT_ONCE = 5

let served: Served
let merchant: Merchant & { readonly account_id: string }
let receiver: Server
let receiverUrl = ""
let listener: Running | undefined
/** The listen secret the listener printed; the receiver verifies with it. */
let secret = ""
/** Every envelope the receiver got, and whether its signature verified. */
const received: Array<{ readonly id: string; readonly type: string; readonly verified: boolean; readonly data: { readonly id?: string; readonly order_id?: string } }> = []

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c) => chunks.push(c))
    request.on("end", () => {
      const body = Buffer.concat(chunks)
      received.push({ ...JSON.parse(body.toString("utf8")), verified: verifiesWebhook(secret, request.headers["x-signature"] as string | undefined, "/hooks", body) })
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const address = receiver.address()
  receiverUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`

  served = await home.serve({ TENDER_RATE_LIMIT_PER_SECOND: "100000", TENDER_RATE_LIMIT_BURST: "100000" })
  merchant = await home.runJson("accounts", "create", "--name", "trigger shop")
}, 240_000)

afterAll(async () => {
  await listener?.stop()
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

/** `tender listen` forwarding the account's events to the receiver; resolves once it has its position. */
const listen = async () => {
  listener = home.start(["listen", "--forward-to", `${receiverUrl}/hooks`, "--account", merchant.account_id, "--api-url", served.url])
  await untilAnswered(async () => /listen secret (whsec_\w+)/.exec(listener!.log()), (found) => found !== null, 30_000)
  secret = /listen secret (whsec_\w+)/.exec(listener.log())![1]!
  // Past its first read: the listener saves its position once it has one.
  // (<data-dir>/listen/<account>/<hash>.json: the position of this account, URL and filter, the only one here.)
  const dir = join(home.dataDir, "listen", merchant.account_id)
  const saved = () => readdirSync(dir).filter((n) => n.endsWith(".json")).map((n) => JSON.parse(readFileSync(join(dir, n), "utf8")).cursor)
  await untilAnswered(async () => { try { return saved()[0] ?? null } catch { return null } }, (cursor) => cursor != null, 30_000)
}

it("every event type: triggered through the API and received by a listener (killed and restarted on the way), about what the command printed", async () => {
  await listen()
  const firstSecret = secret
  // The processes are the slow part: a few at a time, as far as two cores take them.
  const printed = new Map<string, ReadonlyArray<Made>>()
  for (let i = 0, batchNo = 0; i < EVENT_TYPES.length; i += AT_ONCE, batchNo++) {
    // Killed outright before the second batch, started again after the third: it must miss nothing.
    if (batchNo === 1) {
      listener!.process.kill("SIGKILL")
      await new Promise((r) => listener!.process.once("exit", r))
    }
    if (batchNo === 3) await listen()
    const batch = EVENT_TYPES.slice(i, i + AT_ONCE)
    const results = await Promise.all(batch.map((event) => trigger(event)))
    batch.forEach((event, j) => printed.set(event, results[j]!.objects))
  }
  expect(secret).toBe(firstSecret)
  for (const [event, objects] of printed) {
    expect(objects.length, event).toBeGreaterThan(0)
    for (const made of objects) expect(made, event).toEqual({ kind: expect.any(String), id: expect.stringMatching(/^[a-z]+_\w+$/), status: expect.any(String) })
  }
  // Each event, about one of the objects its command printed (the envelope's data names the object or its order).
  const about = (event: string) =>
    received.find((e) => e.type === event && printed.get(event)!.some((made) => made.id === e.data.id || made.id === e.data.order_id))
  await untilAnswered(async () => EVENT_TYPES.filter((event) => about(event) === undefined), (missing) => missing.length === 0, 60_000)
  expect(received.every((e) => e.verified)).toBe(true)
  // At least once, and nothing twice here: the restarted listener resumed after the last event it forwarded.
  expect(new Set(received.map((e) => e.id)).size).toBe(received.length)
  // Every trigger's temporary key went at its end; what is left is the merchant's own key, the
  // running listener's, and the killed listener's (it could not revoke it: it ends in a day).
  const account = await home.runJson("accounts", "get", merchant.account_id)
  expect(account.secret_keys.map((k: { revoked_at: string | null; expires_at: string | null }) => [k.revoked_at, k.expires_at === null ? null : "temporary"]))
    .toEqual([[null, null], [null, "temporary"], [null, "temporary"]])
  // Distinct runs, distinct objects: each printed its own.
  const ids = [...printed.values()].flatMap((objects) => objects.map((o) => o.id))
  expect(new Set(ids).size).toBe(ids.length)
})

it("with no flag: the database's only test-mode account, through the server of this database on this machine", async () => {
  const printed = await home.runJson("trigger", "payment.failed")
  expect(printed).toMatchObject({ event: "payment.failed", account_id: merchant.account_id })
  await untilAnswered(async () => received.some((e) => e.type === "payment.failed" && e.data.order_id === printed.objects.at(-1)?.id), (found) => found, 30_000)
})

it("a live-mode account: refused in one line before anything is made, exit 1", async () => {
  const live = await home.runJson("accounts", "create", "--name", "live shop", "--mode", "live")
  const liveBefore = await home.runJson("accounts", "get", live.account_id)
  const before = received.length
  const result = await home.run("trigger", "payment.succeeded", "--account", live.account_id, "--api-url", served.url)
  expect(result).toMatchObject({ code: 1, stdout: "" })
  expect(result.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^error: trigger works in test mode only: account acct_\w+ is live/)])
  const json = await home.runJsonError("trigger", "payment.succeeded", "--account", live.account_id, "--api-url", served.url)
  expect(json.code).toBe("forbidden")
  // Refused before the CLI issued the live account a key: the account is as it was created.
  expect(await home.runJson("accounts", "get", live.account_id)).toMatchObject({ updated_at: liveBefore.updated_at, secret_keys: liveBefore.secret_keys })
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
