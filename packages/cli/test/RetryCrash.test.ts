/**
 * A smart retry never charges twice (issue 27, "the fault suite kills a server between the two
 * tries"), with real processes: a test account's Stripe channel (priority 10) declines card
 * 4000000000000119 `processing_error`, which is retried once on its Adyen channel, inside the same
 * create. `tender serve` is killed (SIGKILL, through TENDER_FAULT):
 *
 *   - at the first call's `create.before_record`: Stripe declined it, Tender had not recorded it
 *     (nor decided the retry);
 *   - at `create.retry_reserved`: the first try recorded failed and the second reserved, before
 *     the second call was sent;
 *   - at the second call's `create.before_record`: Adyen authorized it, Tender had not recorded it;
 *
 * then a server without the fault is started on the same database and reconciles (one round: a
 * server armed per kill point, one restart for all). From the fakes' own ledgers (Stripe's
 * PaymentIntents, Adyen's payments: real HTTP, the official SDKs) the customer was charged at most
 * once, and Tender's records agree: the order is final, no call is left in doubt (`pending_call`),
 * each transaction's status is what its provider did, and the order has exactly one outcome event
 * (payment.succeeded or payment.failed), about its last try: none about a try the retry replaced.
 *
 * The test process owns the embedded PostgreSQL and the fakes, so no server's death takes them.
 */
import { configFromEnv } from "@tender/adapters/Config"
import * as Fakes from "@tender/adapters/providers/fake/Fakes"
import { EmbeddedPostgres } from "@tender/adapters"
import { Accounts, Channels } from "@tender/domain"
import { Effect, Exit, Scope } from "effect"
import pg from "pg"
import { afterAll, beforeAll, expect, it } from "vitest"
import * as Services from "../src/Services.ts"
import { exited, makeHome, merchantClient, type Served } from "./support/Tender.ts"

const home = makeHome("tender-retry-crash-")
const dbScope = Effect.runSync(Scope.make())
let db: pg.Pool
let fakes: Fakes.Fakes
let env: Record<string, string>
let clean: Served | undefined
let merchant: { secret_key: string; signing_secret: string; account_id: string }
let stripe = ""
let adyen = ""
let seq = 0

/** Signed requests as the merchant (support/Tender.ts). */
const api = merchantClient(() => merchant)

beforeAll(async () => {
  const server = await Effect.runPromise(Scope.provide(dbScope)(EmbeddedPostgres.start(home.dataDir)))
  // A pool: the round reads its orders side by side.
  db = new pg.Pool({ host: server.host, port: server.port, user: server.username, password: server.password, database: server.database, max: 4 })
  fakes = await Fakes.start()
  env = {
    ...fakes.env,
    TENDER_RATE_LIMIT_PER_SECOND: "10000",
    TENDER_RATE_LIMIT_BURST: "10000",
    // The reconciliation worker leaves calls younger than this alone (they may still be answered).
    TENDER_RECONCILE_GRACE_MS: "500",
    TENDER_PROVIDER_TIMEOUT_MS: "5000"
  }
  // The account and its channels are made through the use cases as the CLI wires them (in this
  // process: `accounts create` and `channels add` as commands are Cli.test's and Channels.test's),
  // while the server starts.
  const setUp = Effect.gen(function*() {
    const created = yield* (yield* Accounts).create({ name: "retried", mode: "test" })
    const channels = yield* Channels
    const channel = (provider: "stripe" | "adyen", priority: number) =>
      Effect.map(channels.add(created.account_id, {
        provider, mode: "test", credentials: fakes[provider].credentials("test"), methods: null, currencies: null, countries: null, priority
      }), (c) => c.id)
    return { created, stripe: yield* channel("stripe", 10), adyen: yield* channel("adyen", 0) }
  }).pipe(Effect.provide(Services.layer(configFromEnv({ dataDir: home.dataDir }, {}))))
  const [served, made] = await Promise.all([home.serve(env), Effect.runPromise(setUp)])
  clean = served
  merchant = made.created
  stripe = made.stripe
  adyen = made.adyen
}, 240_000)

afterAll(async () => {
  if (clean !== undefined) await clean.stop()
  await db?.end()
  await fakes?.close()
  await Effect.runPromise(Scope.close(dbScope, Exit.void))
  await home.cleanup()
}, 120_000)


/** A customer-initiated card payment of 0119 (the customer present, CVC on the token): retryable. */
const retriedPayment = async (server: Served) => {
  const token = (await api.post(server, "/v1/test_helpers/card_tokens", { number: "4000000000000119", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
  expect(token).toMatch(/^tok_/)
  return {
    amount: "25.00",
    currency: "USD",
    country: "US",
    merchant_reference: `retry-crash-${Date.now()}-${++seq}`,
    payment_method: { code: "card", details: { card_token: token } },
    collect_cvv: false
  }
}

const orderOf = async (reference: string) =>
  (await db.query(`SELECT id, status FROM orders WHERE account_id = $1 AND merchant_reference = $2`, [merchant.account_id, reference])).rows[0] as
    | { id: string; status: string }
    | undefined

const transactionsOf = async (orderId: string) =>
  (await db.query(
    `SELECT id, status, channel_id, decline_code, pending_call, routing FROM transactions WHERE order_id = $1 ORDER BY created_at, id`,
    [orderId]
  )).rows as Array<{ id: string; status: string; channel_id: string; decline_code: string | null; pending_call: unknown; routing: any }>

/** What each fake holds of the order's transactions: Stripe's PaymentIntents and Adyen's payments, by status. */
const ledgers = (transactionIds: ReadonlyArray<string>) => ({
  stripe: fakes.stripe.paymentIntents().filter((pi) => transactionIds.includes(pi.metadata["tender_reference"]!)).map((pi) => [pi.metadata["tender_reference"], pi.status]),
  adyen: fakes.adyen.payments().filter((p) => transactionIds.includes(p.merchantReference)).map((p) => [p.merchantReference, p.status])
})

/** What Tender emitted for the order: each event's type and the transaction it is about. */
const eventsOf = async (orderId: string) =>
  (await db.query(`SELECT type, data->>'transaction_id' AS transaction_id FROM events WHERE order_id = $1 ORDER BY created_at, seq`, [orderId]))
    .rows.map((e) => [e.type, e.transaction_id] as [string, string])

/** Where `tender serve` is killed: each kill point of the round, in the order its results are read. */
const KILL_POINTS = ["create.before_record@1", "create.retry_reserved@1", "create.before_record@2"] as const
type KillPoint = typeof KILL_POINTS[number]

interface Crashed {
  readonly order: { readonly id: string; readonly status: string }
  /** The order's transactions as the killed server left them, before any reconciliation. */
  readonly left: ReadonlyArray<{ readonly id: string; readonly pending_call: unknown }>
  readonly transactions: Awaited<ReturnType<typeof transactionsOf>>
  readonly held: ReturnType<typeof ledgers>
  readonly events: ReadonlyArray<[string, string]>
}

/**
 * One round for every kill point: a server armed with each (in parallel; reconciling nothing of
 * another's, their grace is longer than the round), the clean one stopped (so nothing else can record
 * what an armed one leaves), each sent its retried payment until it dies there; then the clean server
 * started again on the same database reconciles them all, and the round waits until each order is
 * final with no call of it in doubt. One restart for all, rather than one per kill point.
 */
const crashRound = async (): Promise<Record<KillPoint, Crashed>> => {
  const bodies = await Promise.all(KILL_POINTS.map(() => retriedPayment(clean!)))
  const armed = await Promise.all(KILL_POINTS.map((fault) => home.serve({ ...env, TENDER_FAULT: fault, TENDER_RECONCILE_GRACE_MS: "600000" })))
  try {
    await clean!.stop()
    await Promise.all(KILL_POINTS.map(async (fault, i) => {
      const answered = await api.post(armed[i]!, "/v1/payments", bodies[i]).then((r) => r.status, () => "connection lost")
      expect(answered, fault).toBe("connection lost")
      expect((await exited(armed[i]!, 15_000))?.signal, `${fault}: the armed server should have died there`).toBe("SIGKILL")
    }))
  } finally {
    for (const server of armed) server.process.kill("SIGKILL")
  }
  const orders = await Promise.all(bodies.map(async (body, i) => {
    const order = await orderOf(body.merchant_reference)
    expect(order, `${KILL_POINTS[i]}: the create had claimed its order`).toBeDefined()
    return order!
  }))
  const left = await Promise.all(orders.map((order) => transactionsOf(order.id)))
  clean = await home.serve(env)
  const deadline = Date.now() + 30_000
  for (;;) {
    const now = await Promise.all(bodies.map(async (body, i) => ({ order: await orderOf(body.merchant_reference), transactions: await transactionsOf(orders[i]!.id) })))
    if (now.every(({ order, transactions }) => ["succeeded", "failed"].includes(order!.status) && transactions.every((t) => t.pending_call === null))) break
    if (Date.now() > deadline) throw new Error(`not recovered: ${JSON.stringify(now)}\n${clean.log().slice(-3000)}`)
    await new Promise((r) => setTimeout(r, 250))
  }
  const results = await Promise.all(orders.map(async (order, i): Promise<Crashed> => {
    const transactions = await transactionsOf(order.id)
    return {
      order: (await orderOf(bodies[i]!.merchant_reference))!,
      left: left[i]!,
      transactions,
      held: ledgers(transactions.map((t) => t.id)),
      events: await eventsOf(order.id)
    }
  }))
  return Object.fromEntries(KILL_POINTS.map((fault, i) => [fault, results[i]!])) as Record<KillPoint, Crashed>
}

let round: Promise<Record<KillPoint, Crashed>> | undefined
/** The round's result for `fault` (the round runs once, for the first test that asks). */
const crashedAt = async (fault: KillPoint) => (await (round ??= crashRound()))[fault]

/** The payment's outcome events: exactly one, final, about `transactionId`, and none about any other try. */
const expectOneOutcome = (events: ReadonlyArray<[string, string]>, type: "payment.succeeded" | "payment.failed", transactionId: string) => {
  expect(events.filter(([t]) => t === "payment.succeeded" || t === "payment.failed")).toEqual([[type, transactionId]])
  expect(events.filter(([, txn]) => txn !== transactionId), "an event about another try").toEqual([])
}

it("killed after Stripe answered the first try, before Tender recorded it: reconciled as that decline, no second try, nothing charged", async () => {
  const { events, held, left, order, transactions } = await crashedAt("create.before_record@1")
  // Only the first try was reserved: the retry is decided when its answer is recorded, which never happened.
  expect(left).toHaveLength(1)
  expect(left[0]!.pending_call).not.toBeNull()
  // Reconciliation learns Stripe's answer by the call's idempotency key and records it: a decline
  // recorded after the fact is final (a retry is the live create's, not reconciliation's).
  expect(transactions).toHaveLength(1)
  const [first] = transactions
  expect(first).toMatchObject({ channel_id: stripe, status: "failed", decline_code: "processing_error", pending_call: null })
  expect(first!.routing).toMatchObject({ channel: stripe, attempt: 1 })
  expect(held).toEqual({ stripe: [[first!.id, "requires_payment_method"]], adyen: [] })
  expect(order.status).toBe("failed")
  expectOneOutcome(events, "payment.failed", first!.id)
})

it("killed after the second try was reserved, before it was sent: Adyen never charged; the order failed, the first try's decline recorded", async () => {
  const { events, held, left, order, transactions } = await crashedAt("create.retry_reserved@1")
  // Both tries were reserved before the kill: reconciliation knows both calls.
  expect(left).toHaveLength(2)
  const [first, second] = transactions
  expect(first).toMatchObject({ channel_id: stripe, status: "failed", decline_code: "processing_error", pending_call: null })
  expect(first!.routing).toMatchObject({ channel: stripe, attempt: 1 })
  expect(second).toMatchObject({ channel_id: adyen, status: "failed", pending_call: null })
  expect(second!.routing).toMatchObject({ channel: adyen, reason: "retry", attempt: 2 })
  // The providers' own ledgers: Stripe declined the first, Adyen never saw the second.
  expect(held).toEqual({ stripe: [[first!.id, "requires_payment_method"]], adyen: [] })
  expect(order.status).toBe("failed")
  // The first try's decline moved nothing: the one outcome is the payment's, on its last try.
  expectOneOutcome(events, "payment.failed", second!.id)
})

it("killed after Adyen authorized the second try, before Tender recorded it: reconciled to succeeded, exactly one approved charge", async () => {
  const { events, held, left, order, transactions } = await crashedAt("create.before_record@2")
  expect(left).toHaveLength(2)
  const [first, second] = transactions
  expect(first).toMatchObject({ channel_id: stripe, status: "failed", decline_code: "processing_error", pending_call: null })
  expect(second).toMatchObject({ channel_id: adyen, status: "completed", pending_call: null })
  expect(held.stripe).toEqual([[first!.id, "requires_payment_method"]])
  expect(held.adyen).toEqual([[second!.id, "Authorised"]])
  expect(order.status).toBe("succeeded")
  expectOneOutcome(events, "payment.succeeded", second!.id)
})
