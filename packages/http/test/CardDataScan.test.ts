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
 * The dump: support/ScanRig.ts (`pg_dump`, or every row of every table as text). The scanner's own
 * checks show it flags what it must.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { Effect } from "effect"
import { send } from "@tender/client/Testing"
import { captureOutput, sdkCall } from "./support/Browser.ts"
import { scanRig } from "./support/ScanRig.ts"

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

const logs: Array<string> = []
// Before the rig starts the server: the capture sees what it logs.
beforeAll(() => captureOutput(logs))
afterAll(() => vi.restoreAllMocks())
const rig = scanRig("card scan")
const { dataDir, database, dumpDatabase, webhookBodies } = rig
let seq = 0
const ref = (label: string) => `${label}-${Date.now()}-${++seq}`
const post = (path: string, body: unknown) => send(rig.server(), rig.merchant(), "POST", path, { body: JSON.stringify(body) })
const urls = { success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel" }
const expiry = { exp_month: 12, exp_year: 2035 }

const client = (path: string, body: unknown) => sdkCall(rig.server(), rig.merchant().publishable_key, path, body)

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
  await send(rig.server(), rig.merchant(), "POST", "/v1/payments", { body: `{"amount":"25.00","payment_method":{"code":"card","details":{"card":{"number":"${pan}","cvc":"${cvc}"` })
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

describe("no card number or CVC in the database, the logs or the webhooks", () => {
  it("after every card of the sandbox's table went through every card path", async () => {
    // The capture sees what the server logs (its logger writes to the console).
    await rig.server().run(Effect.logWarning("card scan: log capture probe"))
    expect(logs.join("\n")).toContain("card scan: log capture probe")
    const completed: Array<string> = []
    for (const card of CARDS) completed.push(...await drive(card))
    // The paths really ran: the approved cards' payments completed and their events went out.
    expect(completed.length).toBeGreaterThanOrEqual(CARDS.length)
    await rig.webhooksSettled()
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
