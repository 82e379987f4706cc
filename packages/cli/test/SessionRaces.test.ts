/**
 * Checkout-session attempts racing each other and racing cancel, across two `tender serve`
 * processes sharing one PostgreSQL (the embedded one). The sandbox answers after LATENCY_MS, so an
 * attempt stays at the provider long enough for the other requests to meet it there.
 *
 * - At most one attempt in flight per session: the others are refused before any provider call.
 * - Cancel against an attempt ends in one of two consistent states, never a canceled session
 *   whose order took the money, with no 5xx and no PostgreSQL deadlock.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import type pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHome, type Merchant, merchantClient, type Reply, type Served } from "./support/Tender.ts"

const LATENCY_MS = 120
const SERVER_ENV = {
  TENDER_RATE_LIMIT_PER_SECOND: "100000",
  TENDER_RATE_LIMIT_BURST: "100000",
  TENDER_SANDBOX_LATENCY_MS: String(LATENCY_MS)
}

const home = makeHome("tender-session-races-")
const servers: Array<Served> = []
let merchant: Merchant
let token = ""
let db: pg.Client
let seq = 0

const { post, get } = merchantClient(() => merchant)

/** Request i goes to server i mod 2. */
const on = (i: number) => servers[i % servers.length]

const openSession = async (i: number) => {
  const created = await post(on(i), "/v1/checkout/sessions", {
    amount: "30.00",
    currency: "USD",
    merchant_reference: `session-race-${Date.now()}-${++seq}`,
    success_url: "https://shop.example/thanks",
    cancel_url: "https://shop.example/cart"
  })
  expect(created.status, JSON.stringify(created.json)).toBe(201)
  return created.json as { id: string; order_id: string; merchant_reference: string }
}

/** The customer submits the card (4242…, approved) on the session, as the hosted form would. */
const attempt = (server: Served, sessionId: string) =>
  post(server, `/v1/test_helpers/checkout/sessions/${sessionId}/attempt`, {
    payment_method: { code: "card", details: { card_token: token } }
  })

const cancel = (server: Served, sessionId: string) => post(server, `/v1/checkout/sessions/${sessionId}/cancel`)

/** "200", or "409 card_payment_in_progress": what a reply was, in one word. */
const said = (reply: Reply) => (reply.status === 200 ? "200" : `${reply.status} ${reply.json?.code}`)

/** The order's events, in the order they were recorded (no endpoint lists them). */
const eventsOf = async (orderId: string) =>
  (await db.query<{ type: string }>("SELECT type FROM events WHERE order_id = $1 ORDER BY created_at, seq", [orderId]))
    .rows.map((r) => r.type)

/**
 * The sandbox's own record of the calls it applied (`sandbox_ledger`, keyed by idempotency key,
 * `order_reference` = our transaction id) when this build keeps one: authorizations and starts
 * for these transactions. `undefined` when there is no ledger to ask.
 */
let ledgerKept = false
const providerCalls = async (transactionIds: ReadonlyArray<string>) =>
  ledgerKept
    ? Number((await db.query<{ n: string }>(
      "SELECT count(*) AS n FROM sandbox_ledger WHERE order_reference = ANY($1) AND operation IN ('authorize', 'start')",
      [transactionIds]
    )).rows[0].n)
    : undefined

/** Everything the end state of one session is judged on. */
const stateOf = async (session: { id: string; order_id: string; merchant_reference: string }) => {
  const [current, order, transactions, events] = await Promise.all([
    get(on(0), `/v1/checkout/sessions/${session.id}`),
    get(on(1), `/v1/orders/${session.order_id}`),
    post(on(0), "/v1/transactions/search", { merchant_reference: session.merchant_reference, limit: 100 }),
    eventsOf(session.order_id)
  ])
  const txns = (transactions.json.data as Array<{ id: string; kind: string; status: string; order_id: string }>)
    .filter((t) => t.order_id === session.order_id)
  return {
    reads: [current, order, transactions],
    session: current.json as { status: string; attempts: number; transaction_id: string | null },
    order: order.json as { status: string; transactions: Array<string> },
    transactions: txns,
    events,
    providerCalls: await providerCalls(txns.map((t) => t.id))
  }
}

/** PostgreSQL logs a detected deadlock ("ERROR: deadlock detected"); so would the servers, in a 5xx's defect. */
const deadlocks = () =>
  [...servers.map((s) => s.log()), readFileSync(join(home.dataDir, "pg.log"), "utf8")]
    .flatMap((text) => text.split("\n"))
    .filter((line) => /deadlock/i.test(line))

beforeAll(async () => {
  servers.push(await home.serve(SERVER_ENV))
  servers.push(await home.serve(SERVER_ENV))
  merchant = await home.runJson("accounts", "create", "--name", "session racer")
  const tokenized = await post(on(0), "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
  token = tokenized.json.token
  db = await home.database()
  ledgerKept = (await db.query<{ kept: boolean }>("SELECT to_regclass('sandbox_ledger') IS NOT NULL AS kept")).rows[0].kept
  console.log(ledgerKept ? "sandbox_ledger present: provider calls counted in it" : "no sandbox_ledger table: provider calls counted as transactions")
}, 240_000)

afterAll(async () => {
  await db?.end()
  // The joiner first, then the owner of the embedded PostgreSQL.
  for (const server of [...servers].reverse()) await server.stop()
  await home.cleanup()
}, 120_000)

describe("checkout-session attempts across two server processes, one PostgreSQL", () => {
  it("10 concurrent attempts on one session → one 200, one provider call, the others 409 before reaching the provider", async () => {
    const session = await openSession(0)
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => attempt(on(i), session.id)))
    const answers = replies.map(said)
    expect(answers.filter((a) => a === "200"), answers.join(", ")).toHaveLength(1)
    // A loser that met the winner's call in flight: card_payment_in_progress. One whose claim came
    // only after the winner recorded (a request delayed by more than LATENCY_MS on a loaded
    // machine) finds the session completed: invalid_session_state, equally refused before any
    // provider call. Nothing else; and the race is real only if at least one met the call in flight.
    const refused = answers.filter((a) => a !== "200")
    for (const a of refused) expect(["409 card_payment_in_progress", "409 invalid_session_state"]).toContain(a)
    expect(refused.filter((a) => a === "409 card_payment_in_progress").length, answers.join(", ")).toBeGreaterThanOrEqual(1)
    console.log(`10 concurrent attempts: ${answers.join(", ")}`)

    const winner = replies.find((r) => r.status === 200)!.json
    expect(winner).toMatchObject({ status: "completed", attempts: 1, transaction_id: expect.stringMatching(/^txn_/) })
    const state = await stateOf(session)
    for (const read of state.reads) expect(read.status).toBe(200)
    // Only the winner's claim counted an attempt and created a transaction (so called the provider).
    expect(state.session).toMatchObject({ status: "completed", attempts: 1, transaction_id: winner.transaction_id })
    expect(state.transactions).toEqual([expect.objectContaining({ id: winner.transaction_id, kind: "payment", status: "completed" })])
    expect(state.order).toMatchObject({ status: "succeeded", transactions: [winner.transaction_id] })
    expect(state.events).toEqual(["payment.succeeded", "checkout.session.completed"])
    if (ledgerKept) expect(state.providerCalls).toBe(1)
    expect(deadlocks()).toEqual([])
  })
})
