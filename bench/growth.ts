/**
 * Growth benchmark (issues 13 and 24): the same measurements on an empty database and on one holding
 * a million orders with their transactions, events and webhook deliveries, while the retention
 * pruning works that history off, in one run.
 *
 *   npm run bench:growth                         # 1,000,000 orders, 5 s per measurement
 *   npm run bench:growth -- --orders 100000 --duration 3
 *
 * Starts `tender serve` over a fresh temporary data dir (its own embedded PostgreSQL, the rate limit
 * lifted), creates the bench's account and a few others with the CLI, vaults 4242 4242 4242 4242,
 * then measures, on the empty database:
 *
 *   charge                     POST /v1/payments, a merchant-initiated card charge (autocannon)
 *   read by reference          GET /v1/orders/by-reference/{merchant_reference}, references drawn
 *                              from the account's orders
 *   orders search, settled     POST /v1/orders/search {status: [succeeded], created_from: a day ago}
 *   orders search, in flight   POST /v1/orders/search {status: [processing, authorized]} (reconciliation)
 *   transactions search        POST /v1/transactions/search {status: [completed], created_from: a week ago}
 *
 * then seeds `--orders` orders straight into PostgreSQL (Seed.ts of the adapters: set-based, over
 * the bench's account and the others, a year of history older than the run's own rows, each event
 * with its webhook delivery and attempts, without the foreign-key triggers; then VACUUM ANALYZE and
 * a CHECKPOINT), and measures the same again with the retention round (operations/Prune.ts over
 * PruningPg, the code of the server's retention worker, on a connection of its own) running from the
 * first seeded measurement to the last: eleven months of the year's history are past the 30 days
 * and go. The server's own round is off (`TENDER_RETENTION_DAYS=never`), so that the pruning starts
 * with the measurement, not at a round that happens to fall during the seeding. A charge is also
 * measured on the seeded database just before the pruning starts and just after it stops: on a
 * shared machine whose load drifts, the seeded round against these two says what the pruning
 * itself costs, apart from the table's growth. Prints both rounds,
 * the ratio, whether each is within 20 % of the empty figure (the target), the seeding time
 * and what the pruning removed while measured. Any non-2xx answer makes the run say so loudly and
 * exit 1.
 */
import { randomBytes } from "node:crypto"
import { parseArgs } from "node:util"
import { PgClient } from "@effect/sql-pg"
import * as Seed from "@tender/adapters/storage/postgres/Seed"
import * as ConsoleSessionRepoPg from "@tender/adapters/storage/postgres/ConsoleSessionRepoPg"
import * as PruningPg from "@tender/adapters/storage/postgres/PruningPg"
import { pruneRound, Retention } from "@tender/domain"
import { Effect, Fiber, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Harness from "./harness.ts"
import { fixed, positive } from "./harness.ts"
import { chargeWithAutocannon, type Measurement, paymentBody, percentile, readLoop, signedHeaders, type Target, throughput } from "./load.ts"

Harness.requireNode("bench:growth")

const { values: options } = parseArgs({
  options: {
    orders: { type: "string", default: "1000000" },
    duration: { type: "string", default: "5" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "16" },
    "read-connections": { type: "string", default: "4" },
    "keep-data": { type: "boolean", default: false },
    help: { type: "boolean", default: false }
  }
})
if (options.help) {
  console.log(`npm run bench:growth -- [--orders N=1000000] [--duration S=5] [--warmup S=2] [--connections N=16] [--read-connections N=4] [--keep-data]

  --orders       orders seeded between the two rounds of measurements (with their transactions, events
                 and deliveries); the second round runs with the retention pruning working them off
  --duration     seconds per measurement
  --warmup       seconds of unmeasured load before each measurement
  --connections  concurrent connections of the charge
  --read-connections  concurrent connections of the reads: below saturation, so their p99 is the
                 query's and not the queue's
  --keep-data    keep the temporary data dir instead of deleting it`)
  process.exit(0)
}
const ORDERS = Math.round(positive("orders", options.orders))
const DURATION = positive("duration", options.duration)
const WARMUP = Number(options.warmup)
const CONNECTIONS = Math.round(positive("connections", options.connections))
const READ_CONNECTIONS = Math.round(positive("read-connections", options["read-connections"]))
/** Besides the bench's own: the seeded history is spread over them all. */
const OTHER_ACCOUNTS = 3
/** Rows per search page. */
const PAGE = 20
/** The target: each seeded figure within 20 % of the empty one. */
const TOLERANCE = 0.2

const run = Harness.makeRun({
  // Start-up, two rounds of five measurements and two more charges, and seeding (deliveries and
  // attempts included) at a generous 1,000 orders/s.
  budgetMs: (300 + 12 * (DURATION + WARMUP + 10) + ORDERS / 1_000) * 1000,
  keepData: options["keep-data"]
})

// --- the measurements -----------------------------------------------------------------------

interface Round {
  readonly charge: Measurement
  readonly byReference: Measurement
  readonly ordersSettled: Measurement
  readonly ordersInFlight: Measurement
  readonly transactions: Measurement
}

const ago = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString()

/** Round-robin over `items`. */
const cycle = <A>(items: ReadonlyArray<A>) => {
  let i = 0
  return () => items[i++ % items.length]
}

const measure = async (phase: string, target: Target, cardToken: string, accountId: string): Promise<Round> => {
  if (WARMUP > 0) await chargeWithAutocannon(target, cardToken, { connections: CONNECTIONS, seconds: WARMUP })
  const charge = await chargeWithAutocannon(target, cardToken, { connections: CONNECTIONS, seconds: DURATION })
  const load = { connections: READ_CONNECTIONS, seconds: DURATION }
  report(phase, "charge", charge)

  // References of the account's orders at random: on the seeded database, mostly history.
  const client = Harness.database(run)
  await client.connect()
  const references = await client
    .query<{ merchant_reference: string }>(
      "SELECT merchant_reference FROM orders WHERE account_id = $1 ORDER BY random() LIMIT 5000",
      [accountId]
    )
    .finally(() => client.end())
  const reference = cycle(references.rows.map((r) => `/v1/orders/by-reference/${encodeURIComponent(r.merchant_reference)}`))
  const byReference = await readLoop(target, load, () => ({ method: "GET", path: reference(), body: "" }))
  report(phase, "read by reference", byReference)

  const search = (path: string, filters: Record<string, unknown>) =>
    readLoop(target, load, () => ({ method: "POST", path, body: JSON.stringify({ ...filters, limit: PAGE }) }))
  const ordersSettled = await search("/v1/orders/search", { status: ["succeeded"], created_from: ago(1) })
  report(phase, "orders search, settled", ordersSettled)
  const ordersInFlight = await search("/v1/orders/search", { status: ["processing", "authorized"] })
  report(phase, "orders search, in flight", ordersInFlight)
  const transactions = await search("/v1/transactions/search", { status: ["completed"], created_from: ago(7) })
  report(phase, "transactions search", transactions)
  return { charge, byReference, ordersSettled, ordersInFlight, transactions }
}

const failures = (m: Measurement) => m.non2xx + m.wrongBody + m.errors

const report = (phase: string, name: string, m: Measurement) =>
  console.log(
    `${phase.padEnd(7)} ${name.padEnd(26)} ${fixed(throughput(m), 1).padStart(8)} ops/s  p50 ${fixed(percentile(m.latencies, 50), 2)} ms  p99 ${
      fixed(percentile(m.latencies, 99), 2)
    } ms  ok ${m.ok}  failed ${failures(m)}`
  )

const table = (empty: Round, seeded: Round) => {
  const lines = [
    "| measurement | empty | seeded, pruning | seeded / empty | within 20 % |",
    "|---|---:|---:|---:|:---:|"
  ]
  const row = (name: string, a: number, b: number, higherIsBetter: boolean, digits: number) => {
    const ratio = b / a
    const ok = higherIsBetter ? ratio >= 1 - TOLERANCE : ratio <= 1 + TOLERANCE
    lines.push(`| ${name} | ${fixed(a, digits)} | ${fixed(b, digits)} | ${fixed(ratio, 2)}× | ${ok ? "yes" : "**no**"} |`)
  }
  row("charge ops/s", throughput(empty.charge), throughput(seeded.charge), true, 1)
  row("charge p99 ms", percentile(empty.charge.latencies, 99), percentile(seeded.charge.latencies, 99), false, 2)
  for (const [name, key] of [
    ["read by reference", "byReference"],
    ["orders search, settled", "ordersSettled"],
    ["orders search, in flight", "ordersInFlight"],
    ["transactions search", "transactions"]
  ] as const) {
    row(`${name} p99 ms`, percentile(empty[key].latencies, 99), percentile(seeded[key].latencies, 99), false, 2)
  }
  return lines.join("\n")
}

// --- seeding --------------------------------------------------------------------------------

/** The bench's own client of Tender's database (one connection). */
const database = () => {
  const db = Harness.databaseInfo(run)
  return PgClient.layer({ host: db.host, port: db.port, username: db.user, password: Redacted.make(db.password), database: db.database, maxConnections: 1 })
}

const seed = (accounts: ReadonlyArray<string>, before: string) => {
  const started = Date.now()
  return Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Seed.seed(sql, { accounts, orders: ORDERS, tag: randomBytes(4).toString("hex"), before, trusted: true, deliveries: true }, (done) =>
      Effect.sync(() => console.log(`seeded ${done.toLocaleString("en")} orders (${((Date.now() - started) / 1000).toFixed(1)} s)`)))
    // The seeding's WAL written out now rather than by a checkpoint in the middle of a measurement.
    yield* sql.unsafe("CHECKPOINT")
  }).pipe(
    Effect.provide(database()),
    Effect.runPromise,
    (done) => done.then(() => (Date.now() - started) / 1000)
  )
}

// --- pruning --------------------------------------------------------------------------------

/** The seeded history's rows: events and deliveries older than `before`, and all attempts (the run makes none). */
const historyRows = async (before: string) => {
  const client = Harness.database(run)
  await client.connect()
  const cutoff = Retention.cutoff(Date.now(), Retention.DEFAULT_RETENTION_DAYS)
  const { rows } = await client
    .query<Record<"events" | "deliveries" | "attempts" | "prunable", string>>(
      `SELECT (SELECT count(*) FROM events WHERE created_at < $1) AS events,
        (SELECT count(*) FROM webhook_deliveries WHERE created_at < $1) AS deliveries,
        (SELECT count(*) FROM webhook_attempts) AS attempts,
        (SELECT count(*) FROM events WHERE created_at < $2) AS prunable`,
      [before, cutoff]
    )
    .finally(() => client.end())
  return { events: Number(rows[0].events), deliveries: Number(rows[0].deliveries), attempts: Number(rows[0].attempts), prunable: Number(rows[0].prunable) }
}

/**
 * Retention rounds back to back (the worker's own rhythm, once the history is worked off, is a round
 * every 5 minutes) until stopped: what the server's retention worker does after a year of history
 * lands at once, the heaviest pruning there is.
 */
const startPruning = () => {
  const fiber = Effect.runFork(
    Effect.forever(Effect.andThen(pruneRound({ days: Retention.DEFAULT_RETENTION_DAYS }), Effect.sleep("1 second"))).pipe(
      Effect.provide(Layer.merge(PruningPg.layer, ConsoleSessionRepoPg.layer).pipe(Layer.provideMerge(database())))
    )
  )
  const started = Date.now()
  return { stop: () => Effect.runPromise(Fiber.interrupt(fiber)).then(() => (Date.now() - started) / 1000) }
}

// --- the run --------------------------------------------------------------------------------

const main = async (): Promise<boolean> => {
  const machine = `${Harness.machine()}\nrun: ${DURATION} s per measurement, ${WARMUP} s warm-up before each charge, ${CONNECTIONS} connections (charge), ${READ_CONNECTIONS} (reads), ${
    ORDERS.toLocaleString("en")
  } orders seeded`
  console.log(machine)
  // Seeded history is older than anything the run itself writes.
  const before = new Date(Date.now() - 60_000).toISOString()

  // The server's own retention round off: the bench runs it from the first seeded measurement on.
  const { origin } = await Harness.startTender(run, { env: { TENDER_RETENTION_DAYS: "never" } })
  const account = await run.createAccount("bench")
  const others: Array<string> = []
  for (let i = 1; i <= OTHER_ACCOUNTS; i++) others.push((await run.createAccount(`growth-${i}`)).account_id)
  const target = Harness.targetOf(origin, account)
  const cardToken = await Harness.vaultCard(target)
  console.log(`account ${account.account_id}, card ${cardToken}, ${OTHER_ACCOUNTS} other accounts`)

  // One charge before any load: a server that cannot do it is reported, not hammered.
  const body = paymentBody(cardToken, `smoke-${Date.now()}`, false)
  const smoke = await fetch(`${origin}/v1/payments`, { method: "POST", headers: signedHeaders(target, "/v1/payments", body), body })
  const smokeText = await smoke.text()
  if (!smoke.ok || !smokeText.includes(`"status":"completed"`)) throw new Error(`the smoke charge failed: ${smoke.status} ${smokeText.slice(0, 300)}`)

  // A page of the run's own authorizations, so the in-flight search returns a full page on the
  // empty database too, and the two rounds differ in the table's size, not the page's.
  for (let i = 0; i < PAGE; i++) {
    const manual = paymentBody(cardToken, `auth-${Date.now()}-${i}`, true)
    const authorized = await fetch(`${origin}/v1/payments`, { method: "POST", headers: signedHeaders(target, "/v1/payments", manual), body: manual })
    const text = await authorized.text()
    if (!authorized.ok || !text.includes(`"status":"authorized"`)) throw new Error(`an authorization failed: ${authorized.status} ${text.slice(0, 300)}`)
  }

  const empty = await measure("empty", target, cardToken, account.account_id)
  console.log(`\nseeding ${ORDERS.toLocaleString("en")} orders over ${1 + OTHER_ACCOUNTS} accounts…`)
  const seedingSeconds = await seed([account.account_id, ...others], before)
  const client = Harness.database(run)
  await client.connect()
  const counts = await client
    .query<{ orders: string; transactions: string; events: string }>(
      "SELECT (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM transactions) AS transactions, (SELECT count(*) FROM events) AS events"
    )
    .finally(() => client.end())
  const { events, orders, transactions } = counts.rows[0]
  const seeded = `seeded in ${seedingSeconds.toFixed(1)} s (${fixed(ORDERS / seedingSeconds, 0)} orders/s, VACUUM ANALYZE and CHECKPOINT included); the database now holds ${
    Number(orders).toLocaleString("en")
  } orders, ${Number(transactions).toLocaleString("en")} transactions, ${Number(events).toLocaleString("en")} events`
  console.log(`${seeded}\n`)
  const history = await historyRows(before)
  console.log(`history: ${history.events.toLocaleString("en")} events, ${history.deliveries.toLocaleString("en")} deliveries, ${
    history.attempts.toLocaleString("en")
  } attempts; ${history.prunable.toLocaleString("en")} events past the ${Retention.DEFAULT_RETENTION_DAYS}-day retention\n`)
  // The charge on the seeded database before the pruning starts: what the pruning alone costs is
  // the difference to the seeded round's charge (the machine is shared; empty vs seeded mixes both).
  if (WARMUP > 0) await chargeWithAutocannon(target, cardToken, { connections: CONNECTIONS, seconds: WARMUP })
  const unpruned = await chargeWithAutocannon(target, cardToken, { connections: CONNECTIONS, seconds: DURATION })
  report("seeded", "charge, no pruning yet", unpruned)
  const pruning = startPruning()
  const grown = await measure("seeded", target, cardToken, account.account_id)
  const prunedFor = await pruning.stop()
  // And once it stopped: the pruning's own cost is the seeded round's charge against these two,
  // taken on either side of it (the machine is shared, and its load drifts).
  if (WARMUP > 0) await chargeWithAutocannon(target, cardToken, { connections: CONNECTIONS, seconds: WARMUP })
  const afterPruning = await chargeWithAutocannon(target, cardToken, { connections: CONNECTIONS, seconds: DURATION })
  report("seeded", "charge, pruning stopped", afterPruning)
  const left = await historyRows(before)
  const pruned = `pruning while measured (${prunedFor.toFixed(1)} s): ${(history.events - left.events).toLocaleString("en")} events, ${
    (history.deliveries - left.deliveries).toLocaleString("en")
  } deliveries, ${(history.attempts - left.attempts).toLocaleString("en")} attempts removed (${
    fixed((history.events - left.events) / prunedFor, 0)
  } events/s); ${left.prunable.toLocaleString("en")} events past the retention left`

  const quiet = (m: Measurement) => `${fixed(throughput(m), 1)} ops/s, p99 ${fixed(percentile(m.latencies, 99), 2)} ms`
  const quietOps = (throughput(unpruned) + throughput(afterPruning)) / 2
  const quietP99 = (percentile(unpruned.latencies, 99) + percentile(afterPruning.latencies, 99)) / 2
  const beforePruning = `charge on the seeded database without the pruning: ${quiet(unpruned)} before it started, ${quiet(afterPruning)} after it stopped; with it: ${
    fixed(throughput(grown.charge) / quietOps, 2)
  }× their mean ops/s, ${fixed(percentile(grown.charge.latencies, 99) / quietP99, 2)}× their mean p99`
  console.log(`\n${machine}\n${seeded}\n${pruned}\n${beforePruning}\n\n${table(empty, grown)}\n`)
  const all = [...Object.values(empty), ...Object.values(grown), unpruned, afterPruning]
  const failed = all.filter((m) => failures(m) > 0)
  for (const m of failed) for (const s of m.samples) console.error(`  ${s}`)
  if (failed.length > 0) {
    Harness.invalidBanner("failed requests")
    return false
  }
  console.log("no errors: every request answered 2xx.")
  return true
}

let exitCode = 1
try {
  exitCode = (await main()) ? 0 : 1
} catch (error) {
  console.error(`\n!!! the bench failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
}
await run.finish(exitCode)
