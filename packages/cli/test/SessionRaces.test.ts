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
import { beforeAll, describe, expect, it } from "vitest"
import { makeHome, type Merchant, merchantClient, type Reply, type Served, twoServers } from "./support/Tender.ts"

const LATENCY_MS = 150
/** Cancel-vs-attempt rounds, and how many run at once (each on its own session and order). */
const ITERATIONS = 200
const LANES = 4
const SERVER_ENV = {
  TENDER_RATE_LIMIT_PER_SECOND: "100000",
  TENDER_RATE_LIMIT_BURST: "100000",
  TENDER_SANDBOX_LATENCY_MS: String(LATENCY_MS)
}

const home = makeHome("tender-session-races-")
let merchant: Merchant
let token = ""
let seq = 0

const { post, get } = merchantClient(() => merchant)
const { database, on, servers } = twoServers(home, SERVER_ENV)

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
  (await database().query<{ type: string }>("SELECT type FROM events WHERE order_id = $1 ORDER BY created_at, seq", [orderId]))
    .rows.map((r) => r.type)

/**
 * The sandbox's own record of the calls it applied (`sandbox_ledger`, keyed by idempotency key,
 * `order_reference` = our transaction id) when this build keeps one: the authorizations and
 * starts for these transactions. `undefined` when there is no ledger to ask.
 */
let ledgerKept = false
const providerCalls = async (transactionIds: ReadonlyArray<string>) =>
  ledgerKept
    ? Number((await database().query<{ n: string }>(
      "SELECT count(*) AS n FROM sandbox_ledger WHERE order_reference = ANY($1) AND operation IN ('authorize', 'start')",
      [transactionIds]
    )).rows[0].n)
    : undefined

/** The database's clock, to count what the sandbox applied from then on. */
const databaseNow = async () => (await database().query<{ now: Date }>("SELECT now() AS now")).rows[0].now

/** Every authorization the sandbox applied since `since`, whoever's transaction it was for (one that left no trace in Tender too). */
const providerCallsSince = async (since: Date) =>
  ledgerKept
    ? Number((await database().query<{ n: string }>(
      "SELECT count(*) AS n FROM sandbox_ledger WHERE created_at >= $1 AND operation IN ('authorize', 'start')",
      [since]
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
  merchant = await home.runJson("accounts", "create", "--name", "session racer")
  const tokenized = await post(on(0), "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
  token = tokenized.json.token
  ledgerKept = (await database().query<{ kept: boolean }>("SELECT to_regclass('sandbox_ledger') IS NOT NULL AS kept")).rows[0].kept
  // One whole attempt on each process first: the burst below then meets warm code paths and
  // connection pools, not a first request's start-up cost (which can outlast LATENCY_MS).
  for (const i of [0, 1]) expect((await attempt(on(i), (await openSession(i)).id)).json.status).toBe("completed")
  console.log(ledgerKept ? "sandbox_ledger present: provider calls counted in it" : "no sandbox_ledger table: provider calls counted as transactions")
}, 240_000)

describe("checkout-session attempts across two server processes, one PostgreSQL", () => {
  it("10 concurrent attempts on one session → one 200, one provider call, the others 409 before reaching the provider", async () => {
    const session = await openSession(0)
    const since = await databaseNow()
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => attempt(on(i), session.id)))
    const answers = replies.map(said)
    expect(answers.filter((a) => a === "200"), answers.join(", ")).toHaveLength(1)
    // A loser that met the winner's call in flight: card_payment_in_progress. One whose claim came
    // only after the winner recorded (a request delayed by more than LATENCY_MS on a loaded
    // machine) finds the session completed: invalid_session_state, equally refused before any
    // provider call. Nothing else; and the race is real only if at least one met the call in flight.
    const refused = answers.filter((a) => a !== "200")
    expect(refused.filter((a) => a !== "409 card_payment_in_progress" && a !== "409 invalid_session_state"), answers.join(", ")).toEqual([])
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
    if (ledgerKept) {
      expect(state.providerCalls).toBe(1)
      expect(await providerCallsSince(since)).toBe(1)
    }
    expect(deadlocks()).toEqual([])
  })

  it("cancel racing an attempt, 200 times at seeded random offsets → no 5xx, no deadlock, every end state consistent, both outcomes seen", async () => {
    const seed = Number(process.env.TENDER_RACE_SEED ?? Math.floor(Math.random() * 2 ** 32))
    console.log(`cancel vs attempt: seed ${seed} (TENDER_RACE_SEED=${seed} replays these offsets)`)
    const random = mulberry32(seed)
    // Offsets over twice the provider's latency: cancel lands before the claim, during the call,
    // and after the record. The claim usually commits within the first few milliseconds, so a quarter of
    // the rounds aim there (0–20 ms), where cancel and the claim meet on the rows' locks.
    const plan = Array.from({ length: ITERATIONS }, (_, i) => ({
      i,
      offset: Math.floor(random() < 0.25 ? random() * 20 : random() * 2 * LATENCY_MS)
    }))

    const since = await databaseNow()
    const results: Array<Round> = []
    const queue = [...plan]
    // A few rounds at once, so 200 fit in the time.
    await Promise.all(Array.from({ length: LANES }, async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) results.push(await round(next.i, next.offset))
    }))

    const fivexx = results.filter((r) => r.statuses.some((s) => s >= 500))
    expect(fivexx.map(describeRound), "5xx").toEqual([])
    const inconsistent = results.filter((r) => r.problems.length > 0)
    expect(inconsistent.map(describeRound), `inconsistent end states (seed ${seed})`).toEqual([])
    expect(deadlocks()).toEqual([])
    // The sandbox authorized once per completed round and never for a canceled one.
    if (ledgerKept) expect(await providerCallsSince(since)).toBe(results.filter((r) => r.outcome === "completed").length)

    const tally = new Map<string, number>()
    for (const r of results) {
      const key = `${r.outcome}: cancel ${r.cancel}, attempt ${r.attempt}`
      tally.set(key, (tally.get(key) ?? 0) + 1)
    }
    const offsets = (outcome: Round["outcome"]) => results.filter((r) => r.outcome === outcome).map((r) => r.offset)
    console.log([
      `cancel vs attempt, seed ${seed}:`,
      ...[...tally].sort().map(([k, n]) => `  ${String(n).padStart(3)} × ${k}`),
      `  canceled at offsets ≤ ${Math.max(...offsets("canceled"))} ms; completed at offsets ≥ ${Math.min(...offsets("completed"))} ms`,
      `  attempt replies took ${quantiles(results.map((r) => r.observed.attemptTook))} ms (min, median, max); cancel sent ${quantiles(results.map((r) => r.observed.cancelSentAt - r.offset))} ms late`
    ].join("\n"))
    // The race is real only if both endings happened.
    expect(results.filter((r) => r.outcome === "canceled").length).toBeGreaterThanOrEqual(1)
    expect(results.filter((r) => r.outcome === "completed").length).toBeGreaterThanOrEqual(1)
  }, 300_000)
})

/** A small seeded PRNG (mulberry32): the same seed gives the same offsets. */
const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6D2B79F5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const quantiles = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return [sorted[0], sorted[Math.floor(sorted.length / 2)], sorted[sorted.length - 1]].join(", ")
}

interface Round {
  readonly i: number
  readonly offset: number
  readonly cancel: string
  readonly attempt: string
  readonly outcome: "canceled" | "completed" | "neither"
  readonly statuses: ReadonlyArray<number>
  readonly problems: ReadonlyArray<string>
  readonly observed: { readonly cancelSentAt: number; readonly attemptTook: number } & Record<string, unknown>
}

const describeRound = (r: Round) =>
  `iteration ${r.i}, offset ${r.offset} ms: cancel ${r.cancel}, attempt ${r.attempt}; ${r.problems.join("; ")}; observed ${JSON.stringify(r.observed)}`

/**
 * One round: a fresh session; the attempt on one process and, `offset` ms after it was sent, the
 * cancel on the other; then the end state, judged against the only two consistent ones.
 */
const round = async (i: number, offset: number): Promise<Round> => {
  const session = await openSession(i)
  const sent = Date.now()
  const attempted = attempt(on(i), session.id).then((reply) => ({ reply, took: Date.now() - sent }))
  await new Promise((resolve) => setTimeout(resolve, offset))
  const cancelSent = Date.now() - sent
  const canceled = await cancel(on(i + 1), session.id)
  const { reply: attemptReply, took } = await attempted
  const state = await stateOf(session)
  const problems: Array<string> = []
  const check = (ok: boolean, what: string) => {
    if (!ok) problems.push(what)
  }
  const completedTxns = state.transactions.filter((t) => t.status === "completed")
  const count = (type: string) => state.events.filter((e) => e === type).length
  let outcome: Round["outcome"] = "neither"
  if (canceled.status === 200) {
    // Cancel won: nothing was taken, and the attempt either never claimed the session or its
    // transaction did not complete.
    outcome = "canceled"
    check(canceled.json.status === "canceled", "cancel answered 200 with a session not canceled")
    check(state.session.status === "canceled", `session ${state.session.status}, not canceled`)
    check(state.order.status === "canceled", `order ${state.order.status}, not canceled`)
    check(state.session.attempts === state.transactions.length, `${state.session.attempts} attempts counted for ${state.transactions.length} transactions`)
    check(completedTxns.length === 0, `a canceled session's order has a completed transaction (${completedTxns.map((t) => t.id)})`)
    check(attemptReply.status === 409 || (attemptReply.status === 200 && attemptReply.json.status !== "completed"), `attempt ${said(attemptReply)} / ${attemptReply.json?.status}`)
    check(count("payment.succeeded") === 0 && count("checkout.session.completed") === 0, "a canceled session's order emitted payment.succeeded or checkout.session.completed")
    check(count("checkout.session.canceled") === 1, `checkout.session.canceled emitted ${count("checkout.session.canceled")} times`)
    // Cancel refuses while a call is out, and the card is approved: a call the provider applied
    // for this order would be money taken behind a canceled session.
    check(state.providerCalls === undefined || state.providerCalls === 0, `the provider applied ${state.providerCalls} calls for a canceled session's order`)
  } else if (canceled.status === 409) {
    // The attempt won (cancel met it at the provider, or after it recorded): the money was taken once.
    outcome = "completed"
    check(["card_payment_in_progress", "invalid_session_state"].includes(canceled.json?.code), `cancel 409 with code ${canceled.json?.code}`)
    check(attemptReply.status === 200 && attemptReply.json.status === "completed", `attempt ${said(attemptReply)} / ${attemptReply.json?.status}`)
    check(state.session.status === "completed", `session ${state.session.status}, not completed`)
    check(state.session.attempts === 1 && state.session.transaction_id === attemptReply.json?.transaction_id, `session counts ${state.session.attempts} attempts, transaction ${state.session.transaction_id}`)
    check(state.order.status === "succeeded", `order ${state.order.status}, not succeeded`)
    check(state.transactions.length === 1 && completedTxns.length === 1 && completedTxns[0].kind === "payment", `transactions ${JSON.stringify(state.transactions.map((t) => `${t.kind}:${t.status}`))}, not one completed payment`)
    check(JSON.stringify(state.events) === JSON.stringify(["payment.succeeded", "checkout.session.completed"]), `events ${state.events.join(", ")}`)
    check(state.providerCalls === undefined || state.providerCalls === 1, `${state.providerCalls} provider calls`)
  } else {
    problems.push(`cancel answered ${said(canceled)}`)
  }
  return {
    i,
    offset,
    cancel: said(canceled),
    attempt: said(attemptReply),
    outcome,
    statuses: [canceled.status, attemptReply.status, ...state.reads.map((r) => r.status)],
    problems,
    observed: {
      cancelSentAt: cancelSent,
      attemptTook: took,
      session: state.session.status,
      attempts: state.session.attempts,
      order: state.order.status,
      transactions: state.transactions.map((t) => `${t.kind}:${t.status}`),
      events: state.events,
      providerCalls: state.providerCalls
    }
  }
}
