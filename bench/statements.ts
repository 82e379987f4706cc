/**
 * Statements per operation: what one charge and one authorize+capture send to PostgreSQL, counted
 * by PostgreSQL itself. `tender serve` over its embedded PostgreSQL (harness.ts), with
 * `log_statement = all` switched on at run time (ALTER SYSTEM + pg_reload_conf: no restart) and a
 * log line prefix carrying the epoch time in ms and the application name. The operations run one at
 * a time; every statement Tender's connections ("tender") logged inside an operation's client-side
 * window (request written → response read) counts for that operation, so the account lookup, the
 * vault reads, BEGIN/COMMIT and the replay-cache inserts all count. Statements are grouped by text
 * (parameters are never logged: log_parameter_max_length = 0, no card data in the log).
 *
 * Background workers share those connections: a worker's poll that falls inside a window counts
 * too. They poll every second or so while an operation lasts a few ms, so they show as rows well
 * under 1 per operation — the table prints fractions, so they stand out.
 *
 *   npm run bench:statements -- [--operations 50] [--warmup 10]     (or npx node bench/statements.ts)
 */
import { readFileSync, statSync } from "node:fs"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { database, makeRun, positive, requireNode, startTender, targetOf, vaultCard } from "./harness.ts"
import { paymentBody, signedHeaders, type Target } from "./load.ts"

requireNode("bench:statements")

const { values } = parseArgs({
  options: {
    operations: { type: "string", default: "50" },
    warmup: { type: "string", default: "10" },
    help: { type: "boolean", default: false }
  }
})
if (values.help) {
  console.log("npx node bench/statements.ts [--operations N (default 50)] [--warmup N (default 10)]")
  process.exit(0)
}
const N = positive("operations", values.operations)
const WARMUP = positive("warmup", values.warmup)

interface Window {
  readonly from: number
  readonly to: number
}

const post = async (target: Target, path: string, body: string) => {
  const response = await fetch(`${target.origin}${path}`, { method: "POST", headers: signedHeaders(target, path, body), body })
  const text = await response.text()
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${text}`)
  return JSON.parse(text) as { order_id?: string; status?: string }
}

let sequence = 0
const reference = () => `stmt-${process.pid}-${sequence++}`

const charge = async (target: Target, card: string) => {
  const paid = await post(target, "/v1/payments", paymentBody(card, reference(), false))
  if (paid.status !== "completed") throw new Error(`charge: ${JSON.stringify(paid)}`)
}

const authorizeCapture = async (target: Target, card: string) => {
  const authorized = await post(target, "/v1/payments", paymentBody(card, reference(), true))
  if (authorized.status !== "authorized") throw new Error(`authorize: ${JSON.stringify(authorized)}`)
  const captured = await post(target, "/v1/payments/capture", JSON.stringify({ order_id: authorized.order_id }))
  if (captured.status !== "completed") throw new Error(`capture: ${JSON.stringify(captured)}`)
}

/** Runs `operation` N times one after another; the client-side window of each. */
const timed = async (count: number, operation: () => Promise<void>): Promise<Array<Window>> => {
  const windows: Array<Window> = []
  for (let i = 0; i < count; i++) {
    const from = Date.now()
    await operation()
    windows.push({ from, to: Date.now() })
  }
  return windows
}

// --- the log --------------------------------------------------------------------------------

const PREFIX = "@@ %n %a @@ "
const LINE = /^@@ (\d+\.\d+) (\S*) @@ (\w+):\s+(.*)$/

interface Logged {
  readonly at: number
  readonly application: string
  readonly text: string
}

/** The statements logged after byte `offset`: one per `statement:`/`execute …:` entry, continuation lines joined. */
const statementsSince = (logFile: string, offset: number): Array<Logged> => {
  const content = readFileSync(logFile).subarray(offset).toString("utf8")
  const out: Array<Logged> = []
  let current: { at: number; application: string; text: string } | undefined
  const flush = () => {
    if (current !== undefined) out.push(current)
    current = undefined
  }
  for (const line of content.split("\n")) {
    const match = LINE.exec(line)
    if (match === null) {
      // A statement spanning lines continues with a tab-indented line.
      if (current !== undefined && line.startsWith("\t")) current.text += ` ${line.trim()}`
      continue
    }
    flush()
    const [, at, application, level, message] = match
    if (level !== "LOG") continue
    const statement = /^(?:statement|execute [^:]*):\s*(.*)$/.exec(message)
    if (statement !== null) current = { at: Number(at) * 1000, application, text: statement[1] }
  }
  flush()
  return out.map((s) => ({ ...s, text: s.text.replace(/\s+/g, " ").trim() }))
}

const inside = (windows: ReadonlyArray<Window>) => (at: number) =>
  // PostgreSQL stamps in ms like Date.now(); a window is widened by 1 ms each side for the rounding.
  windows.some((w) => at >= w.from - 1 && at <= w.to + 1)

const report = (title: string, statements: ReadonlyArray<Logged>, windows: ReadonlyArray<Window>) => {
  const counted = statements.filter((s) => s.application === "tender" && inside(windows)(s.at))
  const byText = new Map<string, number>()
  for (const s of counted) byText.set(s.text, (byText.get(s.text) ?? 0) + 1)
  const ops = windows.length
  // A statement the operation sends is in every window; a worker's poll only in those it fell into.
  const windowsWith = new Map<string, Set<number>>()
  for (const s of counted) {
    const i = windows.findIndex((w) => s.at >= w.from - 1 && s.at <= w.to + 1)
    windowsWith.set(s.text, (windowsWith.get(s.text) ?? new Set()).add(i))
  }
  const isOwn = (text: string) => (windowsWith.get(text)?.size ?? 0) === ops
  const own = [...byText.entries()].filter(([text]) => isOwn(text)).reduce((sum, [, n]) => sum + n, 0)
  console.log(`\n## ${title}: ${(own / ops).toFixed(2)} statements per operation` +
    ` (${(counted.length / ops).toFixed(2)} with the background polls that fell inside; ${counted.length} over ${ops})\n`)
  console.log("| per op | statement (background: not in every operation's window, a worker's poll) |")
  console.log("|---:|---|")
  // In the order a first operation sent them, then the rest (background polls) by count.
  const first = counted.filter((s) => s.at >= windows[0].from - 1 && s.at <= windows[0].to + 1).map((s) => s.text)
  const order = [...new Set([...first, ...[...byText.entries()].sort((a, b) => b[1] - a[1]).map(([t]) => t)])]
  for (const text of order) {
    const n = byText.get(text) ?? 0
    const shown = text.length > 160 ? `${text.slice(0, 157)}...` : text
    console.log(`| ${(n / ops).toFixed(2)} | \`${shown.replaceAll("|", "\\|")}\`${isOwn(text) ? "" : " (background)"} |`)
  }
}

// --- the run --------------------------------------------------------------------------------

const run = makeRun({ budgetMs: 300_000, keepData: false })
try {
  const { origin } = await startTender(run)
  const account = await run.createAccount("statements bench")
  const target = targetOf(origin, account)
  const card = await vaultCard(target)
  const db = database(run)
  await db.connect()
  await db.query("ALTER SYSTEM SET log_statement = 'all'")
  await db.query("ALTER SYSTEM SET log_parameter_max_length = 0")
  await db.query(`ALTER SYSTEM SET log_line_prefix = '${PREFIX}'`)
  await db.query("SELECT pg_reload_conf()")
  await db.end()

  await timed(WARMUP, () => charge(target, card))
  await timed(WARMUP, () => authorizeCapture(target, card))

  const logFile = path.join(run.dataDir, "pg.log")
  // Let the reload and the warm-up's statements reach the log before the offset is taken.
  await new Promise((resolve) => setTimeout(resolve, 500))
  const offset = statSync(logFile).size
  const charges = await timed(N, () => charge(target, card))
  const captures = await timed(N, () => authorizeCapture(target, card))
  await new Promise((resolve) => setTimeout(resolve, 500))
  const statements = statementsSince(logFile, offset)

  console.log(`\nStatements Tender's connections sent to PostgreSQL, per operation (${N} of each, one at a time, after ${WARMUP} warm-up operations)`)
  report("charge (POST /v1/payments, merchant-initiated card, sandbox)", statements, charges)
  report("authorize+capture (POST /v1/payments manual + POST /v1/payments/capture)", statements, captures)
  await run.finish(0)
} catch (error) {
  console.error(error)
  await run.finish(1)
}
