/**
 * `tender listen` end to end (issue 25): a `serve` process, a receiver (a real HTTP server that
 * verifies each request's signature with the secret the listener printed), and `tender listen` as a
 * child. Every event reaches the receiver signed; a listener killed (SIGKILL) and started again keeps
 * its secret and gets exactly the events it missed; a server restarted under a running listener
 * loses nothing. Then `tender events list|get|resend` on the same account; two listeners of the
 * account to different URLs (one killed meanwhile: it still gets what it missed); the account's keys
 * rolled under a listener (its temporary key renewed); a TENDER_SECRET_KEY refused (exit 1).
 */
import { readdirSync, readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { join } from "node:path"
import { send } from "@tender/client/Testing"
import { afterAll, beforeAll, expect, it } from "vitest"
import { makeHome, type Running, type Served, verifiesWebhook } from "./support/Tender.ts"

const home = makeHome("tender-listen-")
const ENV = { TENDER_RATE_LIMIT_PER_SECOND: "100000", TENDER_RATE_LIMIT_BURST: "100000" }

interface Hit {
  readonly path: string
  readonly id: string
  readonly type: string
  readonly headerId: string
  readonly headerType: string
  readonly contentType: string
  /** Whether the signature verified under the secret expected for this path. */
  readonly verified: boolean
}

let receiver: Server
let receiverUrl = ""
const hits: Array<Hit> = []
/** The secret each receiving path verifies with: the listen secret, or an endpoint's account signing secret. */
const secrets = new Map<string, string>()

let served: Served | undefined
let listener: Running | undefined
let merchant: { account_id: string; secret_key: string; signing_secret: string }

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c) => chunks.push(c))
    request.on("end", () => {
      const body = Buffer.concat(chunks)
      const envelope = JSON.parse(body.toString("utf8"))
      const path = new URL(request.url ?? "/", "http://x").pathname
      hits.push({
        path,
        id: envelope.id,
        type: envelope.type,
        headerId: String(request.headers["x-event-id"]),
        headerType: String(request.headers["x-event-type"]),
        contentType: String(request.headers["content-type"]),
        verified: verifiesWebhook(secrets.get(path), request.headers["x-signature"] as string | undefined, path, body)
      })
      // A declined payment's event is refused: the listener prints the status and does not retry.
      response.writeHead(envelope.type === "payment.failed" ? 503 : 200).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const address = receiver.address()
  receiverUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
  served = await home.serve(ENV)
  merchant = await home.runJson("accounts", "create", "--name", "listening shop")
}, 180_000)

afterAll(async () => {
  if (listener !== undefined) await listener.stop()
  if (served !== undefined) await served.stop()
  await home.cleanup()
  await new Promise<void>((resolve) => receiver.close(() => resolve()))
}, 120_000)

const call = async (path: string, body?: unknown) =>
  (await send({ baseUrl: served!.url }, merchant, body === undefined ? "GET" : "POST", path, body === undefined ? {} : { body: JSON.stringify(body) })).json

let seq = 0
/** A sandbox card payment (`4242…` succeeds, `…0002` is declined). */
const pay = async (number: string) => {
  const { token } = await call("/v1/test_helpers/card_tokens", { number, exp_month: 12, exp_year: 2035, cvc: "123" })
  const paid = await call("/v1/payments", {
    amount: "5.00", currency: "USD", country: "US", merchant_reference: `listen-${++seq}`,
    payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } }
  })
  expect(paid.order_id).toMatch(/^ord_/)
}

/** Every event of the account, oldest first, as the operator's log lists them. */
const accountEvents = async (): Promise<Array<{ id: string; type: string }>> =>
  (await home.runJson("events", "list", "--account", merchant.account_id, "--limit", "100")).data.reverse()

const until = async (what: string, done: () => boolean, ms = 30_000) => {
  const deadline = Date.now() + ms
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}\nlistener:\n${listener?.log()}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** What the account's listener forwarding every event to `path` saved (undefined: nothing yet). */
const savedAt = (path: string): { cursor: string | null; forwarded: Array<string> } | undefined => {
  const dir = join(home.dataDir, "listen", merchant.account_id)
  try {
    for (const name of readdirSync(dir).filter((n) => n.endsWith(".json"))) {
      const saved = JSON.parse(readFileSync(join(dir, name), "utf8"))
      if (saved.forward_to === `${receiverUrl}${path}` && saved.events === "*") return saved
    }
  } catch {
    // Not yet written.
  }
  return undefined
}
const positionAt = (path: string) => savedAt(path)?.cursor

const startListener = (json: boolean, extra: ReadonlyArray<string> = []) => {
  listener = home.start(["listen", "--forward-to", `${receiverUrl}/hooks`, "--account", merchant.account_id, "--api-url", served!.url, ...(json ? ["--json"] : []), ...extra])
  return listener
}

const receivedAtListener = () => hits.filter((h) => h.path === "/hooks")

it("forwards every event signed with the printed secret; killed and restarted, it gets exactly what it missed; a server restart loses nothing", async () => {
  // First start: a new secret, from now.
  startListener(true)
  await until("the ready line", () => listener!.log().includes("\"type\":\"ready\""))
  const ready = JSON.parse(listener!.log().split("\n").find((l) => l.includes("\"type\":\"ready\""))!)
  expect(ready).toMatchObject({ type: "ready", account: merchant.account_id, forward_to: `${receiverUrl}/hooks`, secret: expect.stringMatching(/^whsec_[0-9a-f]{48}$/), events: "*" })
  secrets.set("/hooks", ready.secret)
  // Past its first read (the position is "now"), so what happens next is what it must forward.
  await until("the listener's first position", () => positionAt("/hooks") != null)

  await pay("4242424242424242")
  await pay("4000000000000002")
  await pay("4242424242424242")
  let expected = await accountEvents()
  expect(expected.map((e) => e.type)).toEqual(["payment.succeeded", "payment.failed", "payment.succeeded"])
  await until("the first three events", () => receivedAtListener().length >= 3)
  expect(receivedAtListener().map((h) => h.id)).toEqual(expected.map((e) => e.id))
  for (const hit of receivedAtListener()) {
    expect(hit).toMatchObject({ verified: true, headerId: hit.id, headerType: hit.type, contentType: "application/json" })
  }
  // One JSON line per event: its type, id, the receiver's status and the latency.
  await until("three event lines", () => listener!.log().split("\n").filter((l) => l.includes("\"type\":\"event\"")).length >= 3)
  const lines = listener!.log().split("\n").filter((l) => l.includes("\"type\":\"event\"")).map((l) => JSON.parse(l))
  expect(lines.map((l) => [l.event_type, l.event_id, l.status])).toEqual(expected.map((e) => [e.type, e.id, e.type === "payment.failed" ? 503 : 200]))
  for (const line of lines) expect(line.latency_ms).toBeGreaterThanOrEqual(0)

  // Killed outright; events happen meanwhile; started again (text output this time).
  listener!.process.kill("SIGKILL")
  await new Promise((r) => listener!.process.once("exit", r))
  await pay("4242424242424242")
  await pay("4242424242424242")
  const missed = (await accountEvents()).slice(3)
  expect(missed).toHaveLength(2)
  startListener(false)
  await until("the ready line again", () => /listen secret whsec_/.test(listener!.log()))
  expect(listener!.log()).toContain(`listen secret ${ready.secret}`)
  expect(listener!.log()).toContain(merchant.account_id)
  expect(listener!.log()).toContain(`${receiverUrl}/hooks`)
  await until("the missed events", () => receivedAtListener().length >= 5)
  expect(receivedAtListener().slice(3).map((h) => h.id)).toEqual(missed.map((e) => e.id))
  // A line per event, printed once its forward is done: time, type, id, → status, latency.
  const lineOf = (id: string) => new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\s+payment\\.succeeded\\s+${id}\\s+→ 200\\s+\\d+ ms$`, "m")
  await until("the missed events' lines", () => missed.every((e) => lineOf(e.id).test(listener!.log())))

  // The server goes away under the running listener, and comes back on the same port.
  const port = new URL(served!.url).port
  const stopping = Date.now()
  expect((await served!.stop()).signal).toBeNull()
  // The listener's waiting read answered at the signal rather than holding the graceful stop (20 s).
  expect(Date.now() - stopping, listener!.log()).toBeLessThan(15_000)
  await until("the disconnected line", () => /disconnected: /.test(listener!.log()))
  served = await home.serve(ENV, Number(port))
  await pay("4242424242424242")
  await pay("4000000000000002")
  expected = await accountEvents()
  expect(expected).toHaveLength(7)
  await until("the events after the restart", () => receivedAtListener().length >= 7)
  expect(listener!.log()).toMatch(/connected again to /)
  // Each event exactly once, in the order recorded, every one signed with the listen secret.
  expect(receivedAtListener().map((h) => h.id)).toEqual(expected.map((e) => e.id))
  expect(receivedAtListener().every((h) => h.verified)).toBe(true)

  // Ctrl-C (SIGTERM here) ends it cleanly.
  expect(await listener!.stop()).toEqual({ code: 0, signal: null })
  listener = undefined
}, 240_000)

it("refuses an unknown event type and a URL that is not http(s), naming them", async () => {
  const wrongType = await home.runJsonError("listen", "--forward-to", `${receiverUrl}/hooks`, "--events", "payment.succeeded,payment.teleported", "--account", merchant.account_id)
  expect(wrongType).toMatchObject({ code: "validation_failed", message: expect.stringContaining("payment.teleported") })
  const wrongUrl = await home.runJsonError("listen", "--forward-to", "ftp://example.com/x", "--account", merchant.account_id)
  expect(wrongUrl).toMatchObject({ code: "validation_failed", message: expect.stringContaining("--forward-to") })
}, 60_000)

it("tender events list|get|resend: a new delivery to the named endpoint or to every subscribed one; another account's endpoint is refused", async () => {
  const endpoint = await call("/v1/webhook_endpoints", { url: `${receiverUrl}/endpoint`, enabled_events: ["payment.succeeded"] })
  secrets.set("/endpoint", merchant.signing_secret)
  const listed = await home.runJson("events", "list", "--account", merchant.account_id, "--type", "payment.succeeded")
  expect(listed.data).toHaveLength(5)
  const [event] = listed.data

  const toOne = await home.runJson("events", "resend", event.id, "--endpoint", endpoint.id)
  expect(toOne.event).toMatchObject({ id: event.id, account_id: merchant.account_id })
  expect(toOne.deliveries).toEqual([expect.objectContaining({ endpoint_id: endpoint.id, event_id: event.id, status: "pending" })])
  const toSubscribed = await home.run("events", "resend", event.id)
  expect(toSubscribed.code).toBe(0)
  expect(toSubscribed.stdout).toContain(`${event.id} (payment.succeeded) sent again to 1 endpoint subscribed to it`)
  await until("both resends delivered", () => hits.filter((h) => h.path === "/endpoint").length >= 2)
  expect(hits.filter((h) => h.path === "/endpoint").map((h) => [h.id, h.verified])).toEqual([[event.id, true], [event.id, true]])

  const shown = await home.runJson("events", "get", event.id)
  expect(shown.event).toEqual(event)
  expect(shown.deliveries).toHaveLength(2)
  // A declined payment's event: no endpoint takes it, so a resend without --endpoint sends nothing, and says so.
  const failed = (await home.runJson("events", "list", "--account", merchant.account_id, "--type", "payment.failed")).data[0]
  expect((await home.run("events", "resend", failed.id)).stdout).toContain(`No enabled endpoint of ${merchant.account_id} takes payment.failed`)

  const stranger = await home.runJson("accounts", "create", "--name", "someone else")
  const theirs = (await send({ baseUrl: served!.url }, stranger, "POST", "/v1/webhook_endpoints", { body: JSON.stringify({ url: `${receiverUrl}/theirs` }) })).json
  const refused = await home.runJsonError("events", "resend", event.id, "--endpoint", theirs.id)
  expect(refused).toMatchObject({ code: "validation_failed", message: expect.stringContaining(`belongs to account ${stranger.account_id}`) })
  expect(await home.runJsonError("events", "resend", "evt_doesnotexist0000")).toMatchObject({ code: "not_found" })
  expect(await home.runJsonError("events", "resend", event.id, "--endpoint", "we_doesnotexist0000")).toMatchObject({ code: "webhook_not_found" })
}, 120_000)

it("with tender trigger: --events forwards the types named and no other", async () => {
  const named = ["payment.partially_captured", "refund.succeeded"]
  const before = receivedAtListener().length
  startListener(true, ["--events", named.join(",")])
  await until("the ready line", () => listener!.log().includes("\"type\":\"ready\""))
  const ready = JSON.parse(listener!.log().split("\n").find((l) => l.includes("\"type\":\"ready\""))!)
  // The same secret as before: the state of the account's listener is kept in the data dir.
  expect(ready).toMatchObject({ events: named, secret: secrets.get("/hooks") })
  const start = (await accountEvents()).length
  await Promise.all(named.map((event) => home.runJson("trigger", event, "--account", merchant.account_id, "--api-url", served!.url)))
  // The triggers made other events too (a capture's payment.succeeded, …): the listener passes them over.
  const made = (await accountEvents()).slice(start)
  expect(made.length).toBeGreaterThan(named.length)
  const wanted = made.filter((e) => named.includes(e.type))
  await until("the named events", () => receivedAtListener().length >= before + wanted.length)
  await until("the named events' lines", () => listener!.log().split("\n").filter((l) => l.includes("\"type\":\"event\"")).length >= wanted.length)
  expect(receivedAtListener().slice(before).map((h) => h.id).sort()).toEqual(wanted.map((e) => e.id).sort())
  expect(receivedAtListener().slice(before).every((h) => h.verified)).toBe(true)
  expect(await listener!.stop()).toEqual({ code: 0, signal: null })
  listener = undefined
}, 120_000)

const readyLine = (running: Running) => running.log().split("\n").find((l) => l.includes("\"type\":\"ready\""))

it("two listeners of one account to different URLs keep apart positions: one killed and started again gets what it missed, though the other forwarded it meanwhile", async () => {
  const startSecond = () =>
    home.start(["listen", "--forward-to", `${receiverUrl}/second`, "--account", merchant.account_id, "--api-url", served!.url, "--json"])
  startListener(true)
  let second = startSecond()
  await until("both ready", () => readyLine(listener!) !== undefined && readyLine(second) !== undefined)
  // One secret per account: a receiver configures it once, whichever listener sends.
  expect(JSON.parse(readyLine(second)!).secret).toBe(secrets.get("/hooks"))
  expect(JSON.parse(readyLine(listener!)!).secret).toBe(secrets.get("/hooks"))
  secrets.set("/second", secrets.get("/hooks")!)
  await until("both positions", () => positionAt("/hooks") != null && positionAt("/second") != null)

  second.process.kill("SIGKILL")
  await new Promise((r) => second.process.once("exit", r))
  await pay("4242424242424242")
  const [missed] = (await accountEvents()).slice(-1)
  // The first listener forwarded it and saved its position past it (its page done): a position
  // shared by the account's listeners would lose the event for the second.
  await until("the first listener's position past it", () =>
    listener!.log().includes(`"event_id":"${missed!.id}"`) && savedAt("/hooks")?.forwarded.includes(missed!.id) === false)

  second = startSecond()
  try {
    await until("the missed event at the second URL", () => hits.some((h) => h.path === "/second" && h.id === missed!.id))
    expect(hits.filter((h) => h.path === "/second").map((h) => [h.id, h.verified])).toEqual([[missed!.id, true]])
  } finally {
    expect(await second.stop()).toEqual({ code: 0, signal: null })
  }
  expect(await listener!.stop()).toEqual({ code: 0, signal: null })
  listener = undefined
}, 120_000)

it("the account's keys rolled under a running listener (its temporary key revoked): it renews the key and forwards what comes after", async () => {
  startListener(true)
  await until("the ready line", () => readyLine(listener!) !== undefined)
  await until("a position", () => positionAt("/hooks") != null)
  // `keys roll` revokes every live key of the account, the listener's temporary one too.
  const rolled = await home.runJson("accounts", "keys", "roll", merchant.account_id)
  merchant = { ...merchant, secret_key: rolled.secret_key }
  // Two events one after the other: the read after the first is surely made after the roll.
  for (let i = 0; i < 2; i++) {
    await pay("4242424242424242")
    const [latest] = (await accountEvents()).slice(-1)
    await until(`event ${i + 1} after the roll`, () => receivedAtListener().some((h) => h.id === latest!.id && h.verified))
  }
  expect(listener!.log()).not.toContain("disconnected")
  expect(await listener!.stop()).toEqual({ code: 0, signal: null })
  listener = undefined
}, 120_000)

it("with TENDER_SECRET_KEY, a key the server refuses ends the listener: one line, exit 1", async () => {
  const env = { TENDER_SECRET_KEY: merchant.secret_key, TENDER_SIGNING_SECRET: merchant.signing_secret }
  listener = home.start(["listen", "--forward-to", `${receiverUrl}/env`, "--api-url", served!.url], env)
  await until("the ready line", () => /listen secret whsec_/.test(listener!.log()))
  const rolled = await home.runJson("accounts", "keys", "roll", merchant.account_id)
  merchant = { ...merchant, secret_key: rolled.secret_key }
  // The waiting read answers at this event; the next read is refused.
  await pay("4242424242424242")
  const ended = await new Promise<number | null>((resolve) => listener!.process.once("exit", (code) => resolve(code)))
  expect(ended, listener!.log()).toBe(1)
  // (Not any line with "401" in it: the ready line's server URL may have it in its port.)
  const errorLines = listener!.log().split("\n").filter((l) => l.startsWith("error:"))
  expect(errorLines, listener!.log()).toEqual([expect.stringContaining("(401)")])
  expect(listener!.log()).not.toContain("retrying")
  listener = undefined
}, 120_000)
