/**
 * Crash safety of the payment core, with real processes: `tender serve` is killed (SIGKILL, through
 * TENDER_FAULT) at every step boundary of create, capture, void, a checkout-session attempt, a
 * refund, a payout, a bank transfer, a card transfer's execute and a customer's answer to a
 * checkout's 3-D Secure challenge (which authorizes at once, contract.md, Browser SDK) — after the
 * reserve, while the provider is receiving or has applied the call, between the provider's answer
 * (it paid) and Tender's record of it, after the record — then a server without the fault is
 * started on the same database, and within 30 s:
 *
 *   - every order is final (succeeded, failed, canceled, returned) or awaiting (authorized,
 *     requires_action, or pending for a checkout whose session awaits the customer's next try),
 *     and no refund or transfer record is left pending or processing (no card here settles later);
 *   - no transaction keeps an outstanding provider call (`pending_call`), and none is left initial
 *     or processing at all (every flow here ends at the provider, but a card transfer that still
 *     awaits its execute and a challenge whose answer never arrived, both waiting on someone);
 *   - for every manual-capture order, completed captures + the released void ≤ the authorization;
 *   - per settlement, completed refunds ≤ what it took (a payment: what arrived); an order's
 *     refunded_amount is the sum of its succeeded refunds; every refund, payout and transfer record
 *     agrees with its transaction;
 *   - the sandbox's own ledger (sandbox_ledger, the provider's log, which survives the crash) shows
 *     at most one approved authorization per order and one paid payout per transfer, and Tender's
 *     records agree with it: every call the provider applied is recorded as done, and nothing is
 *     recorded as done that it did not apply.
 *
 * The schedule (operation, point, n per server) comes from a seeded PRNG: the seed is printed, and
 * FAULT_SEED replays the schedule (not the exact interleaving of concurrent requests). Each round
 * arms several servers at once (starting a server is the slow part) while the clean server makes
 * their targets; the clean server then stops, every armed server gets a batch of concurrent
 * operations and dies when the n-th of them reaches its point, with the others in flight at various
 * steps; then the clean server starts again: the restart, alone in recovering.
 *
 * Two more kills, one each, between the provider paying and Tender recording: the full refund of an
 * accepted crypto overpayment (more than the order's amount), and the settlement worker's record of
 * a refund and a payout the provider paid later (card 0341). And the release of what a capture in
 * doubt held when a void came (the capture found never received): the worker killed after the
 * release's reserve, and after the provider applied it.
 *
 * The test process owns the embedded PostgreSQL, so no server's death takes the database with it.
 * No REDIS_URL: the in-process locks die with the process, as they would in a real crash.
 */
import { EmbeddedPostgres } from "@tender/adapters"
import { send as signedSend } from "@tender/client/Testing"
import { Effect, Exit, Scope } from "effect"
import pg from "pg"
import { afterAll, beforeAll, expect, it } from "vitest"
import { exited, makeHome, type Served } from "./support/Tender.ts"

const SEED = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31))
// Printed first, so a failing run can be replayed with FAULT_SEED.
console.log(`Faults.test: FAULT_SEED=${SEED}`)

/** mulberry32: small, seedable, good enough to pick a schedule. */
const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const random = prng(SEED)
const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!

const ROUNDS = 9
const SERVERS_PER_ROUND = 6
/** Operations sent to each armed server; n is at most this, so the n-th reach always comes. */
const BATCH = 3
const MIN_KILLS = 50
const RECOVERY_MS = 30_000

type Operation = "create" | "capture" | "void" | "attempt" | "refund" | "payout" | "transfer" | "execute" | "answer"
const OPERATIONS: ReadonlyArray<Operation> = ["create", "capture", "void", "attempt", "refund", "payout", "transfer", "execute", "answer"]
/** The step each operation names its boundaries by (StepName, operations/ProviderStep.ts), and the provider call it makes. */
const STEP: Record<Operation, { readonly step: string; readonly call: string }> = {
  create: { step: "create", call: "authorize" },
  capture: { step: "capture", call: "capture" },
  void: { step: "void", call: "void" },
  attempt: { step: "attempt", call: "authorize" },
  refund: { step: "refund", call: "refund" },
  payout: { step: "payout", call: "payout" },
  // A transfer pays out through the provider's payout call: a bank transfer on its create, a card
  // transfer on its execute.
  transfer: { step: "transfer", call: "payout" },
  execute: { step: "transfer_execute", call: "payout" },
  // The customer's answer to a checkout's challenge runs the authorization after it.
  answer: { step: "complete3ds", call: "authorize" }
}
/**
 * Where each operation can die: after the reserve, while the provider receives the call, once it
 * applied it (paid), between Tender hearing the provider's answer and recording it, after the record.
 */
const pointsOf = (op: Operation) => [
  `${STEP[op].step}.after_reserve`,
  `provider.${STEP[op].call}.received`,
  `provider.${STEP[op].call}.applied`,
  `${STEP[op].step}.before_record`,
  `${STEP[op].step}.after_record`
]

const ENV = {
  TENDER_RATE_LIMIT_PER_SECOND: "100000",
  TENDER_RATE_LIMIT_BURST: "100000",
  // The reconciliation worker leaves calls younger than this alone (they may still be answered).
  TENDER_RECONCILE_GRACE_MS: "500"
}

const home = makeHome("tender-faults-")
const dbScope = Effect.runSync(Scope.make())
let db: pg.Client
let clean: Served | undefined
const armed = new Set<Served>()
let merchant: { secret_key: string; signing_secret: string; account_id: string }
let token = ""
/** The sandbox's 3-D Secure challenge card. */
let challengeToken = ""
let references = 0

const send = async (server: Served, method: "GET" | "POST", path: string, body?: unknown) => {
  const reply = await signedSend({ baseUrl: server.url }, merchant, method, path, body === undefined ? {} : { body: JSON.stringify(body) })
  return { status: reply.status, json: reply.json }
}

const reference = (label: string) => `${label}-${SEED}-${++references}`

const authorizeBody = (captureMethod: "manual" | "automatic", amount: string) => ({
  amount,
  currency: "USD",
  country: "US",
  merchant_reference: reference("pay"),
  capture_method: captureMethod,
  payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
})

const amountOf = () => (10 + Math.floor(random() * 90)).toFixed(2)

/** An authorized manual-capture order, made on the clean server, optionally partly captured already. */
const authorizedOrder = async (server: Served, partlyCaptured: boolean) => {
  const created = await send(server, "POST", "/v1/payments", authorizeBody("manual", "100.00"))
  expect(created.json.status, JSON.stringify(created.json)).toBe("authorized")
  if (partlyCaptured) {
    const captured = await send(server, "POST", "/v1/payments/capture", { order_id: created.json.order_id, amount: "30.00", final: false })
    expect(captured.status, JSON.stringify(captured.json)).toBe(200)
  }
  return created.json.order_id as string
}

/** A settled automatic charge of 100.00, made on the clean server, optionally partly refunded already. */
const settledCharge = async (server: Served, partlyRefunded: boolean) => {
  const created = await send(server, "POST", "/v1/payments", authorizeBody("automatic", "100.00"))
  expect(created.json.status, JSON.stringify(created.json)).toBe("completed")
  if (partlyRefunded) {
    const refunded = await send(server, "POST", "/v1/refunds", { transaction_id: created.json.transaction_id, amount: "30.00" })
    expect(refunded.status, JSON.stringify(refunded.json)).toBe(201)
  }
  return created.json.transaction_id as string
}

/** A card transfer awaiting its card's collection (requires_action), made on the clean server. */
const cardTransfer = async (server: Served) => {
  const created = await send(server, "POST", "/v1/transfers", {
    amount: amountOf(),
    currency: "USD",
    country: "US",
    merchant_reference: reference("tr"),
    payment_method: { code: "card", details: { card_token: token } }
  })
  expect(created.json.status, JSON.stringify(created.json)).toBe("requires_action")
  return created.json.order_id as string
}

const openSession = async (server: Served, amount: string, captureMethod: "manual" | "automatic") => {
  const created = await send(server, "POST", "/v1/checkout/sessions", {
    amount,
    currency: "USD",
    merchant_reference: reference("cs"),
    success_url: "https://shop.example/thanks",
    cancel_url: "https://shop.example/cart",
    payment_methods: ["card"],
    capture_method: captureMethod
  })
  expect(created.status, JSON.stringify(created.json)).toBe(201)
  return created.json.id as string
}

type Request = (server: Served) => Promise<unknown>

interface Plan {
  readonly op: Operation
  readonly point: string
  readonly n: number
  /** Makes the batch's targets on the clean server; each request then goes to the armed server. */
  readonly prepare: (clean: Served) => Promise<ReadonlyArray<Request>>
}

/**
 * One armed server's fault and batch. Every random choice is drawn here, synchronously, so that
 * the schedule depends on the seed alone and not on how the preparation's requests interleave.
 */
const draw = (): Plan => {
  const op = pick(OPERATIONS)
  const point = pick(pointsOf(op))
  const n = 1 + Math.floor(random() * BATCH)
  const batch: Array<(clean: Served) => Promise<Request>> = []
  for (let i = 0; i < BATCH; i++) {
    switch (op) {
      case "create": {
        const body = authorizeBody(pick(["manual", "automatic"]), amountOf())
        batch.push(async () => (s) => send(s, "POST", "/v1/payments", body))
        break
      }
      case "capture": {
        const partly = random() < 0.5
        // Part (the remainder stays authorized) or whatever remains.
        const amount = random() < 0.5 ? { amount: "40.00", final: false } : {}
        batch.push(async (clean) => {
          const orderId = await authorizedOrder(clean, partly)
          return (s) => send(s, "POST", "/v1/payments/capture", { order_id: orderId, ...amount })
        })
        break
      }
      case "void": {
        const partly = random() < 0.5
        // Half race a partial capture on the same order: it either lands before the void (which then
        // releases less) or is refused after it; never both in full. Partial, so that the void is
        // never refused and every void of the batch reaches the armed point.
        const race = random() < 0.5
        batch.push(async (clean) => {
          const orderId = await authorizedOrder(clean, partly)
          return (s) =>
            Promise.all([
              send(s, "POST", "/v1/payments/void", { order_id: orderId }).catch(() => undefined),
              race ? send(s, "POST", "/v1/payments/capture", { order_id: orderId, amount: "10.00", final: false }).catch(() => undefined) : undefined
            ])
        })
        break
      }
      case "refund": {
        const partly = random() < 0.5
        // Half race a second refund of the same settlement that cannot also fit (30 + 40 + 40 >
        // 100 when partly refunded already): one of the two is refused, never both let through.
        // At least one reaches the armed point either way.
        const race = random() < 0.5
        batch.push(async (clean) => {
          const settlement = await settledCharge(clean, partly)
          const refund = (s: Served) => send(s, "POST", "/v1/refunds", { transaction_id: settlement, amount: "40.00" }).catch(() => undefined)
          return (s) => Promise.all([refund(s), race ? refund(s) : undefined])
        })
        break
      }
      case "payout": {
        const partly = random() < 0.5
        // Half race a second payout of the same original: one payout of an original at a time, so one
        // of the two is refused; at least one reaches the armed point.
        const race = random() < 0.5
        batch.push(async (clean) => {
          const settlement = await settledCharge(clean, partly)
          const payout = (s: Served) =>
            send(s, "POST", "/v1/payouts", { transaction_id: settlement, amount: "20.00", payout_reference: reference("po") }).catch(() => undefined)
          return (s) => Promise.all([payout(s), race ? payout(s) : undefined])
        })
        break
      }
      case "transfer": {
        // A bank transfer is paid on its create; its reference is claimed before the provider is called.
        const body = {
          amount: amountOf(),
          currency: "USD",
          country: "US",
          merchant_reference: reference("bank"),
          payment_method: { code: "bank_transfer", details: { account_number: "000123456789", bank_code: "021000021", holder_name: "Ada Lovelace" } }
        }
        batch.push(async () => (s) => send(s, "POST", "/v1/transfers", body))
        break
      }
      case "execute": {
        // Half executed twice at once: one claims it, the other is refused (in progress, or no
        // longer awaiting).
        const twice = random() < 0.5
        batch.push(async (clean) => {
          const orderId = await cardTransfer(clean)
          const execute = (s: Served) => send(s, "POST", `/v1/transfers/${orderId}/execute`, {}).catch(() => undefined)
          return (s) => Promise.all([execute(s), twice ? execute(s) : undefined])
        })
        break
      }
      case "answer": {
        const amount = amountOf()
        const captureMethod = pick(["manual", "automatic"] as const)
        // Half answered twice at once (a double click): one answer is taken, the other refused.
        const twice = random() < 0.5
        batch.push(async (clean) => {
          const sessionId = await openSession(clean, amount, captureMethod)
          const body = { payment_method: { code: "card", details: { card_token: challengeToken } } }
          const waiting = await send(clean, "POST", `/v1/test_helpers/checkout/sessions/${sessionId}/attempt`, body)
          expect(waiting.json.next_action?.type, JSON.stringify(waiting.json)).toBe("redirect")
          const page = new URL(waiting.json.next_action.redirect_url as string).pathname
          const approve = (s: Served) =>
            fetch(s.url + page, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "outcome=approve", redirect: "manual" })
              .then((reply) => reply.arrayBuffer()).catch(() => undefined)
          return (s) => Promise.all([approve(s), twice ? approve(s) : undefined])
        })
        break
      }
      case "attempt": {
        const amount = amountOf()
        const captureMethod = pick(["manual", "automatic"] as const)
        batch.push(async (clean) => {
          const sessionId = await openSession(clean, amount, captureMethod)
          const body = { payment_method: { code: "card", details: { card_token: token } } }
          return (s) => send(s, "POST", `/v1/test_helpers/checkout/sessions/${sessionId}/attempt`, body)
        })
        break
      }
    }
  }
  return { op, point, n, prepare: (clean) => Promise.all(batch.map((make) => make(clean))) }
}


/**
 * Sends the batch (staggered a little, so requests are at different steps) and waits for the
 * server to kill itself. `true` when it did; a server that outlives its batch is killed here
 * and does not count.
 */
const drive = async (server: Served, requests: ReadonlyArray<Request>): Promise<boolean> => {
  const sent = requests.map(async (request, i) => {
    await new Promise((r) => setTimeout(r, i * 15))
    // The connection drops when the server dies: expected, and not an answer.
    await request(server).catch(() => undefined)
  })
  await Promise.all(sent)
  const end = await exited(server, 5_000)
  armed.delete(server)
  if (end !== undefined) return end.signal === "SIGKILL"
  server.process.kill("SIGKILL")
  await exited(server, 10_000)
  return false
}

// --- what the database says ------------------------------------------------------------------

const FINAL = ["succeeded", "failed", "canceled", "returned"]
const AWAITING = ["authorized", "requires_action"]

/** Orders neither final nor awaiting, and provider calls never recorded: what recovery must clear. */
const unsettled = async () => {
  const orders = await db.query(
    `SELECT o.id, o.status, o.subtype FROM orders o
     WHERE o.account_id = $1
       AND NOT (o.status = ANY($2) OR o.status = ANY($3)
         -- a checkout whose attempt was declined waits, pending, for the customer's next try
         OR (o.subtype = 'checkout' AND o.status = 'pending'))`,
    [merchant.account_id, FINAL, AWAITING]
  )
  const transactions = await db.query(
    `SELECT t.id, t.order_id, t.kind, t.status, t.pending_call FROM transactions t
     WHERE t.account_id = $1 AND t.pending_call IS NOT NULL`,
    [merchant.account_id]
  )
  // A transfer awaiting its card (requires_action) waits for the merchant; one pending or
  // processing waits for the provider, and no card used here is paid later.
  const records = await db.query(
    `SELECT 'refund' AS record, id, order_id, status FROM refunds WHERE account_id = $1 AND status = 'pending'
     UNION ALL SELECT 'payout', id, order_id, status FROM payouts WHERE account_id = $1 AND status = 'pending'
     UNION ALL SELECT 'transfer', id, order_id, status FROM transfers WHERE account_id = $1 AND status IN ('pending', 'processing')`,
    [merchant.account_id]
  )
  return { orders: orders.rows, transactions: transactions.rows, records: records.rows }
}

const waitForRecovery = async (round: number) => {
  const deadline = Date.now() + RECOVERY_MS
  for (;;) {
    const left = await unsettled()
    if (left.orders.length === 0 && left.transactions.length === 0 && left.records.length === 0) return
    if (Date.now() > deadline) {
      const ids = [...new Set([...left.orders, ...left.transactions, ...left.records].map((row) => row.order_id ?? row.id))]
      const detail = await db.query(
        `SELECT o.id, o.status, o.subtype, o.capture_method,
           (SELECT json_agg(json_build_object('id', t.id, 'kind', t.kind, 'status', t.status, 'amount', t.amount, 'pending_call', t.pending_call,
              'ledger', (SELECT json_agg(json_build_object('key', l.idempotency_key, 'op', l.operation, 'result', l.result))
                         FROM sandbox_ledger l WHERE l.order_reference = t.id)) ORDER BY t.created_at)
            FROM transactions t WHERE t.order_id = o.id) AS transactions
         FROM orders o WHERE o.id = ANY($1)`,
        [ids]
      )
      throw new Error(
        `FAULT_SEED=${SEED} round ${round}: not recovered within ${RECOVERY_MS / 1000} s:\n${JSON.stringify(detail.rows, null, 1)}\n` +
          `restarted server log:\n${clean?.log().slice(-3000)}`
      )
    }
    await new Promise((r) => setTimeout(r, 250))
  }
}

/** The invariants; each query returns the offending rows. */
const violations = async () => {
  const account = [merchant.account_id]
  const overdrawn = await db.query(
    `SELECT o.id, auth.amount AS authorized, cap.amount AS captured, voi.amount AS voided
     FROM orders o
     LEFT JOIN LATERAL (SELECT coalesce(sum(amount), 0) AS amount FROM transactions
                        WHERE order_id = o.id AND kind = 'authorization' AND status = 'completed') auth ON true
     LEFT JOIN LATERAL (SELECT coalesce(sum(amount), 0) AS amount FROM transactions
                        WHERE order_id = o.id AND kind = 'capture' AND status = 'completed') cap ON true
     -- a void that released the hold ends canceled (spec, Transaction)
     LEFT JOIN LATERAL (SELECT coalesce(sum(amount), 0) AS amount FROM transactions
                        WHERE order_id = o.id AND kind = 'void' AND status = 'canceled') voi ON true
     WHERE o.account_id = $1 AND o.capture_method = 'manual' AND cap.amount + voi.amount > auth.amount`,
    account
  )
  // The provider's view: approved authorizations (or sales) per order, whatever Tender recorded.
  const charged = await db.query(
    `SELECT t.order_id, count(*) AS approvals FROM sandbox_ledger l JOIN transactions t ON t.id = l.order_reference
     WHERE t.account_id = $1 AND l.operation = 'authorize' AND l.result->>'_tag' = 'Approved'
     GROUP BY t.order_id HAVING count(*) > 1`,
    account
  )
  // A call the provider applied for a transaction Tender never reserved.
  const unknownToTender = await db.query(
    `SELECT l.idempotency_key, l.operation, l.order_reference FROM sandbox_ledger l
     WHERE l.operation <> 'fence' AND NOT EXISTS (SELECT 1 FROM transactions t WHERE t.id = l.order_reference)`
  )
  // Tender and the provider disagree on a call's outcome: money moved that Tender recorded as not
  // moved, or Tender recorded money that never moved. Per transaction, the provider applied it
  // when its ledger holds a successful answer for it; Tender, when the transaction did not fail
  // (an attempt), completed (a capture, a refund, a payout or a transfer's payout) or ended
  // canceled (a void that released the hold). A capture, refund or payout the provider accepted for
  // later (Settling, Pending: card 0341) moved too: the sandbox settles every one of them.
  const disagreements = await db.query(
    `SELECT t.id, t.order_id, t.kind, t.status, applied.results FROM transactions t
     LEFT JOIN LATERAL (
       SELECT json_agg(l.result) AS results,
         bool_or((l.operation = 'authorize' AND l.result->>'_tag' = 'Approved')
              OR (l.operation = 'capture' AND l.result->>'_tag' IN ('Settled', 'Settling'))
              OR (l.operation = 'void' AND l.result->>'_tag' = 'Voided')
              OR (l.operation IN ('refund', 'payout') AND l.result->>'_tag' IN ('Paid', 'Pending'))) AS moved
       FROM sandbox_ledger l WHERE l.order_reference = t.id) applied ON true
     WHERE t.account_id = $1 AND t.kind IN ('payment', 'authorization', 'capture', 'void', 'refund', 'payout', 'transfer')
       -- a local method's payment (crypto here) is moved by the customer at the provider, not by the call that started it
       AND NOT EXISTS (SELECT 1 FROM sandbox_ledger s WHERE s.order_reference = t.id AND s.operation = 'start')
       AND (CASE WHEN t.kind IN ('capture', 'refund', 'payout', 'transfer') THEN t.status = 'completed'
                 WHEN t.kind = 'void' THEN t.status = 'canceled'
                 -- awaiting a challenge's answer: nothing moved yet
                 WHEN t.three_ds = 'required' THEN false
                 ELSE t.status <> 'failed' END) <> coalesce(applied.moved, false)`,
    account
  )
  // More refunded than a settlement took: a capture's amount, a payment's what arrived (contract.md:
  // "After an accepted crypto overpayment the refundable balance is what arrived").
  const overRefunded = await db.query(
    `SELECT s.id, bound.amount AS settled, sum(r.amount) AS refunded FROM transactions s
     JOIN orders o ON o.id = s.order_id
     JOIN transactions r ON r.parent_transaction_id = s.id AND r.kind = 'refund' AND r.status = 'completed'
     CROSS JOIN LATERAL (SELECT CASE WHEN s.kind = 'payment' THEN coalesce(o.received_amount, s.amount) ELSE s.amount END AS amount) bound
     WHERE s.account_id = $1 GROUP BY s.id, bound.amount HAVING sum(r.amount) > bound.amount`,
    account
  )
  // Order.refunded_amount: the sum of its succeeded refunds.
  const refundedAmount = await db.query(
    `SELECT o.id, o.refunded_amount, coalesce(sum(r.amount), 0) AS succeeded FROM orders o
     LEFT JOIN refunds r ON r.order_id = o.id AND r.status = 'succeeded'
     WHERE o.account_id = $1 GROUP BY o.id, o.refunded_amount HAVING o.refunded_amount <> coalesce(sum(r.amount), 0)`,
    account
  )
  // A record and its transaction tell one story: succeeded ↔ completed, failed ↔ failed.
  const recordMismatches = await db.query(
    `SELECT x.record, x.id, x.status, t.status AS transaction_status FROM (
       SELECT 'refund' AS record, id, transaction_id, status FROM refunds WHERE account_id = $1
       UNION ALL SELECT 'payout', id, transaction_id, status FROM payouts WHERE account_id = $1
       UNION ALL SELECT 'transfer', id, transaction_id, status FROM transfers WHERE account_id = $1) x
     JOIN transactions t ON t.id = x.transaction_id
     WHERE (x.status = 'succeeded') <> (t.status = 'completed') OR (x.status = 'failed') <> (t.status = 'failed')`,
    account
  )
  // The provider paid one transfer twice.
  const paidTwice = await db.query(
    `SELECT t.order_id, count(*) AS payouts FROM sandbox_ledger l JOIN transactions t ON t.id = l.order_reference
     WHERE t.account_id = $1 AND t.kind = 'transfer' AND l.operation = 'payout' AND l.result->>'_tag' = 'Paid'
     GROUP BY t.order_id HAVING count(*) > 1`,
    account
  )
  // Left mid-way with no provider call to reconcile: nothing would ever finish it. A card
  // transfer never executed (its batch's server died first) waits, initial, for the merchant; a
  // challenge never answered (its answer died with the server before it was taken) waits for the
  // customer, who can answer it again.
  const stalled = await db.query(
    `SELECT t.id, t.order_id, t.kind, t.status FROM transactions t
     WHERE t.account_id = $1 AND t.status IN ('initial', 'processing')
       AND NOT (t.kind = 'transfer' AND t.status = 'initial'
                AND EXISTS (SELECT 1 FROM transfers tr WHERE tr.transaction_id = t.id AND tr.status = 'requires_action'))
       AND NOT (t.status = 'processing' AND t.three_ds = 'required' AND t.pending_call IS NULL)`,
    account
  )
  return {
    stalled: stalled.rows,
    overdrawn: overdrawn.rows,
    charged: charged.rows,
    unknownToTender: unknownToTender.rows,
    disagreements: disagreements.rows,
    overRefunded: overRefunded.rows,
    refundedAmount: refundedAmount.rows,
    recordMismatches: recordMismatches.rows,
    paidTwice: paidTwice.rows
  }
}

/** The server without a fault: it makes the targets, and after the kills it is the restart. */
const startClean = async () => {
  clean = await home.serve(ENV)
}

beforeAll(async () => {
  // Owned by this process: servers join it and never stop it, however they die.
  const server = await Effect.runPromise(Scope.provide(dbScope)(EmbeddedPostgres.start(home.dataDir)))
  db = new pg.Client({ host: server.host, port: server.port, user: server.username, password: server.password, database: server.database })
  await db.connect()
  // Alone first: the first start generates the vault key and applies migrations.
  await startClean()
  merchant = await home.runJson("accounts", "create", "--name", "faulty")
  token = (await send(clean!, "POST", "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
  expect(token).toMatch(/^tok_/)
  challengeToken = (await send(clean!, "POST", "/v1/test_helpers/card_tokens", { number: "4000000000003220", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
  expect(challengeToken).toMatch(/^tok_/)
}, 240_000)

afterAll(async () => {
  for (const server of armed) server.process.kill("SIGKILL")
  if (clean !== undefined) await clean.stop()
  await db?.end()
  await Effect.runPromise(Scope.close(dbScope, Exit.void))
  await home.cleanup()
}, 120_000)

const NO_VIOLATIONS = {
  stalled: [],
  overdrawn: [],
  charged: [],
  unknownToTender: [],
  disagreements: [],
  overRefunded: [],
  refundedAmount: [],
  recordMismatches: [],
  paidTwice: []
}

/**
 * Arms a server with `fault`, stops the clean one (so that nothing else can record what the armed
 * one leaves), lets `act` drive the armed server until it dies, then restarts the clean server and
 * waits for it to recover everything. Answers what `act` answered.
 */
const killedOnce = async <A>(fault: string, act: (server: Served) => Promise<A>) => {
  const server = await home.serve({ ...ENV, TENDER_FAULT: fault })
  armed.add(server)
  await clean!.stop()
  const answered = await act(server)
  const end = await exited(server, 15_000)
  armed.delete(server)
  expect(end?.signal, `${fault}: the armed server should have died there`).toBe("SIGKILL")
  const left = await unsettled()
  await startClean()
  await waitForRecovery(-1)
  return { answered, left }
}

/** The provider's own log (sandbox_ledger) of `operation` calls for an order's transactions. */
const ledgerOf = async (orderId: string, operation: string) =>
  (await db.query(
    `SELECT l.result FROM sandbox_ledger l JOIN transactions t ON t.id = l.order_reference WHERE t.order_id = $1 AND l.operation = $2`,
    [orderId, operation]
  )).rows.map((r) => r.result._tag as string)

const eventTypes = async (orderId: string) =>
  (await db.query(`SELECT type FROM events WHERE order_id = $1 ORDER BY created_at, seq`, [orderId])).rows.map((r) => r.type as string)

it("contract.md: \"After an accepted crypto overpayment the refundable balance is what arrived\": its full refund (150.00 on 100.00), killed after the provider paid it and before Tender recorded it, is recorded after the restart — never a failed save, never pending for ever", async () => {
  const created = await send(clean!, "POST", "/v1/payments", {
    amount: "100.00", currency: "USD", country: "US", merchant_reference: reference("crypto"), payment_method: { code: "crypto" },
    success_url: "https://shop.example/thanks", cancel_url: "https://shop.example/cart"
  })
  const orderId = created.json.order_id as string
  await send(clean!, "POST", `/v1/test_helpers/orders/${orderId}/simulate`, { outcome: "overpay", amount: "150.00" })
  expect((await send(clean!, "POST", `/v1/orders/${orderId}/amount_mismatch_decision`, { decision: "accept" })).json.status).toBe("succeeded")

  const { answered, left } = await killedOnce("refund.before_record@1", (server) =>
    send(server, "POST", "/v1/refunds", { order_id: orderId }).then((r) => r.status, () => "connection lost"))
  expect(answered).toBe("connection lost")
  // The provider paid it; Tender had not recorded it: a call in doubt, for reconciliation.
  expect(left.transactions.filter((t) => t.order_id === orderId).map((t) => [t.kind, t.status])).toEqual([["refund", "processing"]])

  const order = (await send(clean!, "GET", `/v1/orders/${orderId}`)).json
  expect(order).toMatchObject({ status: "succeeded", refunded_amount: 150 })
  const refunds = (await db.query(`SELECT id, status, amount FROM refunds WHERE order_id = $1`, [orderId])).rows
  expect(refunds.map((r) => [r.status, Number(r.amount)])).toEqual([["succeeded", 15_000]])
  expect((await send(clean!, "GET", `/v1/refunds/${refunds[0].id}`)).json).toMatchObject({ status: "succeeded", amount: 150 })
  expect(await ledgerOf(orderId, "refund")).toEqual(["Paid"])
  expect((await eventTypes(orderId)).filter((t) => t.startsWith("refund."))).toEqual(["refund.succeeded"])
  expect(await violations()).toEqual(NO_VIOLATIONS)
}, 240_000)

it("a refund and a payout the provider pays later (card 0341), killed after the provider settled them and before Tender recorded it (settle.before_record): the restart's settlement worker records each once", async () => {
  const card = (await send(clean!, "POST", "/v1/test_helpers/card_tokens", { number: "4000000000000341", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
  const paid = await send(clean!, "POST", "/v1/payments", {
    ...authorizeBody("automatic", "100.00"),
    payment_method: { code: "card", details: { card_token: card, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
  })
  expect(paid.json.status).toBe("completed")
  const orderId = paid.json.order_id as string

  const { answered } = await killedOnce("settle.before_record@1", async (server) => {
    const refund = await send(server, "POST", "/v1/refunds", { order_id: orderId, amount: "40.00" })
    const payout = await send(server, "POST", "/v1/payouts", { order_id: orderId, amount: "10.00", payout_reference: reference("po") })
    return [refund.json, payout.json]
  })
  // contract.md, Sandbox: "refunds and payouts on 0341 are pending then settled by the worker"
  expect(answered).toMatchObject([{ status: "pending", amount: 40 }, { status: "pending", amount: 10 }])

  expect((await send(clean!, "GET", `/v1/refunds/${answered[0].id}`)).json).toMatchObject({ status: "succeeded" })
  expect((await send(clean!, "GET", `/v1/payouts/${answered[1].id}`)).json).toMatchObject({ status: "succeeded" })
  expect((await send(clean!, "GET", `/v1/orders/${orderId}`)).json).toMatchObject({ refunded_amount: 40 })
  expect(await ledgerOf(orderId, "refund")).toEqual(["Pending"])
  expect(await ledgerOf(orderId, "payout")).toEqual(["Pending"])
  const events = await eventTypes(orderId)
  expect(events.filter((t) => t === "refund.succeeded")).toHaveLength(1)
  expect(events.filter((t) => t === "payout.succeeded")).toHaveLength(1)
  expect(await violations()).toEqual(NO_VIOLATIONS)
}, 240_000)

/**
 * The sandbox with a latency answers outside Tender's unit of work, as a provider over a network
 * does: a capture's reserve then commits on its own, and a kill right after it leaves the capture
 * in doubt. API only: no worker in these servers reconciles it before the test wants it.
 */
const NETWORKED = { TENDER_SANDBOX_LATENCY_MS: "20" }
const API_ONLY = { TENDER_SERVE_BACKGROUND: "false" }

for (const point of ["release.after_reserve", "release.before_record"]) {
  it(`spec: a void "always releases what remains": a capture in doubt when the void came (killed after its reserve), found never received, owes its 30.00 to a second void, the release; killed at ${point}, the restart's reconciliation completes it once: canceled, voided_amount 100.00`, async () => {
    const orderId = await authorizedOrder(clean!, false)
    await clean!.stop()

    const capturing = await home.serve({ ...ENV, ...NETWORKED, ...API_ONLY, TENDER_FAULT: "capture.after_reserve@1" })
    armed.add(capturing)
    const captured = await send(capturing, "POST", "/v1/payments/capture", { order_id: orderId, amount: "30.00", final: false }).then((r) => r.status, () => "connection lost")
    expect(captured).toBe("connection lost")
    expect((await exited(capturing, 15_000))?.signal).toBe("SIGKILL")
    armed.delete(capturing)

    // The capture in doubt counts as in flight: the void releases the other 70.00 and leaves it closing.
    const voiding = await home.serve({ ...ENV, ...NETWORKED, ...API_ONLY })
    const voided = await send(voiding, "POST", "/v1/payments/void", { order_id: orderId })
    expect(voided).toMatchObject({ status: 200, json: { status: "settling", voided_amount: 70 } })
    await voiding.stop()

    // Reconciliation: the capture was never received, so it failed, and what it held is owed; the
    // worker dies inside the release's provider step.
    const worker = home.start(["worker"], { ...ENV, ...NETWORKED, TENDER_FAULT: `${point}@1` }) as unknown as Served
    armed.add(worker)
    expect((await exited(worker, 90_000))?.signal, worker.log().slice(-3000)).toBe("SIGKILL")
    armed.delete(worker)
    const left = (await unsettled()).transactions.filter((t) => t.order_id === orderId)
    expect(left.map((t) => [t.kind, t.status])).toEqual([["void", "processing"]])
    expect(await eventTypes(orderId)).toEqual(["payment.authorized", "payment.capture_failed"])

    await startClean()
    await waitForRecovery(-1)
    expect((await send(clean!, "GET", `/v1/orders/${orderId}`)).json).toMatchObject({ status: "canceled" })
    const txns = (await db.query(`SELECT id, kind, status, amount, parent_transaction_id FROM transactions WHERE order_id = $1 ORDER BY created_at, id`, [orderId])).rows
    const [auth, capture, merchantVoid, release] = txns
    expect(txns.map((t) => [t.kind, t.status, Number(t.amount)])).toEqual([
      ["authorization", "completed", 10_000], ["capture", "failed", 3_000], ["void", "canceled", 7_000], ["void", "canceled", 3_000]
    ])
    expect([capture.parent_transaction_id, merchantVoid.parent_transaction_id, release.parent_transaction_id]).toEqual([auth.id, auth.id, merchantVoid.id])
    // The provider's log: each void applied once (a release never received is sent again under a new key).
    expect(await ledgerOf(orderId, "void")).toEqual(["Voided", "Voided"])
    const events = (await db.query(`SELECT type, data FROM events WHERE order_id = $1 ORDER BY created_at, seq`, [orderId])).rows
    expect(events.map((e) => e.type)).toEqual(["payment.authorized", "payment.capture_failed", "payment.canceled"])
    expect(events[2].data).toMatchObject({ order_status: "canceled", voided_amount: 100 })
    expect(await violations()).toEqual(NO_VIOLATIONS)
  }, 400_000)
}

it(`SIGKILL at every step boundary, ${ROUNDS * SERVERS_PER_ROUND} times; after a restart every order settles and no money is lost`, async () => {
  const started = Date.now()
  let kills = 0
  /** Provider calls the dead servers left unrecorded: the work the restart had to reconcile. */
  let leftInFlight = 0
  const schedule: Array<string> = []
  for (let round = 0; round < ROUNDS; round++) {
    // Arm this round's servers (in parallel: starting is the slow part) and prepare their batches.
    const roundStart = Date.now()
    const plans = Array.from({ length: SERVERS_PER_ROUND }, draw)
    const servers = await Promise.all(plans.map(async (plan) => {
      const [server, requests] = await Promise.all([
        home.serve({ ...ENV, TENDER_FAULT: `${plan.point}@${plan.n}` }),
        plan.prepare(clean!)
      ])
      armed.add(server)
      return { server, plan, requests }
    }))
    // Nothing else runs while the armed servers die: the recovery must come from the restart.
    await clean!.stop()
    const t1 = Date.now()
    const outcomes = await Promise.all(servers.map(({ server, requests }) => drive(server, requests)))
    const t2 = Date.now()
    servers.forEach(({ plan }, i) => schedule.push(`r${round} ${plan.point}@${plan.n}${outcomes[i] ? "" : " (not reached)"}`))
    kills += outcomes.filter(Boolean).length
    const inFlight = (await unsettled()).transactions.length
    leftInFlight += inFlight

    // The restart, without a fault: it reconciles what the dead servers left in flight.
    await startClean()
    const t3 = Date.now()
    await waitForRecovery(round)
    console.log(`Faults.test: round ${round}: ${outcomes.filter(Boolean).length} kills, ${inFlight} calls left in flight; armed servers up in ${t1 - roundStart} ms, ` +
      `dead in ${t2 - t1} ms; restarted in ${t3 - t2} ms, recovered in ${Date.now() - t3} ms`)
    const found = await violations()
    expect(found, `FAULT_SEED=${SEED} round ${round}\n${schedule.join("\n")}`).toEqual(NO_VIOLATIONS)
  }
  console.log(`Faults.test: FAULT_SEED=${SEED}: ${kills} kills, ${leftInFlight} calls left in flight, in ${Math.round((Date.now() - started) / 1000)} s\n${schedule.join("\n")}`)
  expect(kills, schedule.join("\n")).toBeGreaterThanOrEqual(MIN_KILLS)
  // The kills did leave calls mid-way (else recovery was never put to the test).
  expect(leftInFlight).toBeGreaterThan(0)
}, 600_000)
