/**
 * The production topology, locally, with real processes (README, "Configuration"):
 *
 *   npx node scripts/topology.ts [--servers-workers N=2] [--workers M=2] [--charges C=200]
 *                                [--captures K=20] [--connections 8] [--timeout S=120] [--keep-data]
 *                                [--replica] [--read-seconds R]
 *
 * Over one fresh data dir (its embedded PostgreSQL is started by the server and joined by every
 * other process; REDIS_URL is passed on when set) it starts `tender serve --no-background` (the API
 * only, `--workers N`) and a webhook receiver (bench/receiver.ts: answers 200, records
 * each X-Event-Id, verifies every signature), creates an account and one webhook endpoint, and
 * charges once: that event must not arrive while only the server runs. Then it starts M `tender
 * worker` processes (every background worker, webhook delivery among them) and sends C charges and
 * K authorize+capture pairs, signed, over several connections. It checks: every payment is in the
 * database as succeeded; every event reached the receiver (duplicates — allowed, delivery is at
 * least once — are counted and reported), nothing else did and every signature verified; every
 * delivery is `succeeded`; no process died. It prints a summary, stops every process, deletes the
 * data dir, and exits 0 when all held, 1 otherwise. CI runs it with a short load
 * (packages/cli/test/Topology.test.ts).
 *
 * With `--replica` (reads on a streaming replica, TENDER_READ_DATABASE_URL): the script starts the
 * embedded primary itself, then a streaming replica of it (EmbeddedReplica.ts), and every process
 * runs with TENDER_READ_DATABASE_URL pointing there. With `--read-seconds R` (10 with --replica) it
 * reads under the same load: each charge is followed at once by `GET /v1/orders/{id}`
 * (read-after-write: no 404 allowed), and R seconds of reads (GET by id, searches) run beside the
 * writes; it reports the statements each server committed meanwhile (pg_stat_database). With a
 * replica it checks that the replica streams, answered statements, and caught up with every order.
 */
import * as path from "node:path"
import { parseArgs } from "node:util"
import * as Embedded from "@tender/adapters/storage/postgres/Embedded"
import * as EmbeddedReplica from "@tender/adapters/storage/postgres/EmbeddedReplica"
import { Effect, Exit, Scope } from "effect"
import pg from "pg"
import * as Harness from "../bench/harness.ts"
import { authorizeCaptureLoop, chargeLoop, type Measurement, percentile, readLoop, signedHeaders } from "../bench/load.ts"
import { Receiver } from "../bench/receiver.ts"

Harness.requireNode("topology")

const { values: options } = parseArgs({
  options: {
    "servers-workers": { type: "string", default: "2" },
    workers: { type: "string", default: "2" },
    charges: { type: "string", default: "200" },
    captures: { type: "string", default: "20" },
    connections: { type: "string", default: "8" },
    timeout: { type: "string", default: "120" },
    "keep-data": { type: "boolean", default: false },
    replica: { type: "boolean", default: false },
    "read-seconds": { type: "string" },
    help: { type: "boolean", default: false }
  }
})
if (options.help) {
  console.log(`npx node scripts/topology.ts [--servers-workers N=2] [--workers M=2] [--charges C=200] [--captures K=20]
                               [--connections 8] [--timeout S=120] [--keep-data] [--replica] [--read-seconds R]

  --servers-workers  server processes of \`tender serve\` (\`tender serve --workers N\`: one primary, N children on one port)
  --workers          \`tender worker\` processes (they alone run the background workers)
  --charges          card charges to send; --captures: authorize+capture pairs
  --connections      concurrent clients sending them
  --timeout          seconds the whole run may take (then it stops everything and fails)
  --replica          a streaming replica of the embedded PostgreSQL, read through TENDER_READ_DATABASE_URL
  --read-seconds     R seconds of reads (GET by id, searches) beside the load, and every charge read back at once
                     (no 404 allowed); default 10 with --replica, 0 without`)
  process.exit(0)
}
const count = (name: string, value: string) => {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} must be a whole number, not ${value}`)
    process.exit(2)
  }
  return n
}
const SERVERS_WORKERS = Math.max(1, count("servers-workers", options["servers-workers"]))
const WORKERS = Math.max(1, count("workers", options.workers))
const CHARGES = count("charges", options.charges)
const CAPTURES = count("captures", options.captures)
const CONNECTIONS = Math.max(1, count("connections", options.connections))
const TIMEOUT_S = Math.max(10, count("timeout", options.timeout))
const REPLICA = options.replica
// Reads run with a replica by default; without one only when asked (to compare).
const READ_SECONDS = options["read-seconds"] === undefined ? (REPLICA ? 10 : 0) : count("read-seconds", options["read-seconds"])

/** How long the probe charge's event must stay undelivered while only the server runs (its dispatcher would poll every 200 ms). */
const PROBE_MS = 1_500
/** The probe: one charge before the workers start. */
const PROBE_CHARGES = 1

// The replica and the primary the script starts for --replica: stopped after every process of the run.
const databases = Effect.runSync(Scope.make())
const run = Harness.makeRun({
  budgetMs: TIMEOUT_S * 1000,
  keepData: options["keep-data"],
  afterStop: () => Effect.runPromise(Scope.close(databases, Exit.void))
})
// The harness keeps a bench to its own processes; the topology shares Redis when there is one.
if (process.env.REDIS_URL !== undefined) run.env.REDIS_URL = process.env.REDIS_URL

const problems: Array<string> = []
const started = Date.now()
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`

/** Statements a server has committed (each read outside a transaction is one): pg_stat_database's count for `tender`. */
const commits = async (client: pg.Client) =>
  Number((await client.query("SELECT xact_commit FROM pg_stat_database WHERE datname = 'tender'")).rows[0].xact_commit)

try {
  let replica: EmbeddedReplica.EmbeddedReplica | undefined
  if (REPLICA) {
    // The primary first, so that its replica exists (and its URL is known) before the servers start; they join it.
    await Effect.runPromise(Scope.provide(databases)(Embedded.start(run.dataDir)))
    const t0 = Date.now()
    replica = await Effect.runPromise(Scope.provide(databases)(EmbeddedReplica.start(run.dataDir, path.join(run.dataDir, "replica"))))
    run.env.TENDER_READ_DATABASE_URL = replica.url
    console.log(`replica: streaming from the embedded primary on port ${replica.port} (${((Date.now() - t0) / 1000).toFixed(1)} s to base-backup and start)`)
  }
  const { origin } = await Harness.startTender(run, {
    env: { TENDER_SERVE_BACKGROUND: "false" },
    args: ["--workers", String(SERVERS_WORKERS)]
  })
  const account = await run.createAccount("topology")
  const target = Harness.targetOf(origin, account)
  const cardToken = await Harness.vaultCard(target)
  const receiver = await Receiver.start(account.signing_secret, "/hooks/topology")
  await Harness.postJson(target, "/v1/webhook_endpoints", { url: receiver.url, description: "topology" })

  // The server only serves: a charge's event waits, undelivered, until a worker runs.
  await chargeLoop(target, cardToken, { connections: 1, seconds: 30, operations: 1 })
  await Harness.sleep(PROBE_MS)
  if (receiver.requests > 0) problems.push(`the server delivered a webhook itself (${receiver.requests} POSTs before any worker ran)`)

  for (let i = 1; i <= WORKERS; i++) run.children.push(Harness.start(`worker ${i}`, [Harness.CLI, "worker", "--data-dir", run.dataDir], run.env))
  console.log(`topology: 1 server process (--workers ${SERVERS_WORKERS}) at ${origin}, ${WORKERS} tender worker processes, ` +
    `redis ${run.env.REDIS_URL === undefined ? "off" : "on"}, data dir ${run.dataDir}`)

  // With a replica: every charge read back at once (read-after-write), and reads beside the writes.
  const charged: Array<string> = []
  const readsBack: Array<Promise<number>> = []
  const readBack = (orderId: string) => {
    const orderPath = `/v1/orders/${orderId}`
    return fetch(`${origin}${orderPath}`, { headers: signedHeaders(target, orderPath, "") }).then(async (response) => {
      await response.arrayBuffer()
      return response.status
    }, () => 0)
  }
  let nextRead = 0
  const reads = () => {
    const search = nextRead++ % 2 === 1 || charged.length === 0
    return search
      ? { method: "POST" as const, path: "/v1/orders/search", body: JSON.stringify({ limit: 10 }) }
      : { method: "GET" as const, path: `/v1/orders/${charged[nextRead % charged.length]}`, body: "" }
  }
  const replicaDb = replica === undefined ? undefined : new pg.Client({ host: replica.host, port: replica.port, user: replica.username, password: replica.password, database: replica.database })
  const primaryDb = Harness.database(run)
  await replicaDb?.connect()
  await primaryDb.connect()
  const before = { replica: replicaDb === undefined ? undefined : await commits(replicaDb), primary: await commits(primaryDb) }
  const loadStarted = Date.now()

  // Charges and authorize+capture pairs at once, each over its own clients.
  const budget = { seconds: TIMEOUT_S }
  const [charges, captures, readLoad] = await Promise.all([
    CHARGES === 0 ? undefined : chargeLoop(target, cardToken, {
      ...budget,
      connections: CONNECTIONS,
      operations: CHARGES,
      onCharged: READ_SECONDS > 0 ? (orderId) => { charged.push(orderId); readsBack.push(readBack(orderId)) } : undefined
    }),
    CAPTURES === 0 ? undefined : authorizeCaptureLoop(target, cardToken, { ...budget, connections: Math.max(1, Math.ceil(CONNECTIONS / 4)), operations: CAPTURES }),
    READ_SECONDS > 0 ? readLoop(target, { connections: 2, seconds: READ_SECONDS }, reads) : undefined
  ])
  const verdict = (name: string, expected: number, m: Measurement | undefined) => {
    const ok = m?.ok ?? 0
    if (ok !== expected) problems.push(`${name}: ${ok} of ${expected} ok (${m?.non2xx ?? 0} non-2xx, ${m?.wrongBody ?? 0} bad bodies, ${m?.errors ?? 0} errors: ${m?.samples.join(" | ")})`)
    return `${ok}/${expected}${m === undefined ? "" : ` in ${m.seconds.toFixed(1)} s`}`
  }
  console.log(`load: charges ${verdict("charges", CHARGES, charges)}, authorize+capture ${verdict("authorize+capture", CAPTURES, captures)} (${elapsed()})`)

  if (readLoad !== undefined) {
    const loadSeconds = (Date.now() - loadStarted) / 1000
    const statuses = await Promise.all(readsBack)
    const missing = statuses.filter((status) => status === 404).length
    const other = statuses.filter((status) => status !== 200 && status !== 404)
    if (statuses.length !== (charges?.ok ?? 0)) problems.push(`read-after-write: ${statuses.length} reads for ${charges?.ok ?? 0} charges`)
    if (missing > 0) problems.push(`read-after-write: ${missing} of ${statuses.length} orders read just after their charge answered 404`)
    if (other.length > 0) problems.push(`read-after-write: ${other.length} reads answered neither 200 nor 404 (e.g. ${other[0]})`)
    if (readLoad.non2xx + readLoad.errors > 0) problems.push(`reads: ${readLoad.non2xx} non-2xx, ${readLoad.errors} errors (${readLoad.samples.join(" | ")})`)
    // The servers' statistics reach pg_stat_database within a second of a backend's idling.
    await Harness.sleep(1_500)
    const perSecond = (n: number) => `${n} (${(n / loadSeconds).toFixed(0)}/s)`
    const onPrimary = (await commits(primaryDb)) - before.primary
    const ms = (p: number) => percentile(readLoad.latencies, p).toFixed(1)
    let served = `primary ${perSecond(onPrimary)}`
    if (replicaDb !== undefined && before.replica !== undefined) {
      const onReplica = (await commits(replicaDb)) - before.replica
      served = `replica ${perSecond(onReplica)}, ${served}`
      if (onReplica <= 0) problems.push("the replica answered no statement: reads did not go to it")
      const streaming = await primaryDb.query("SELECT state, pg_wal_lsn_diff(sent_lsn, replay_lsn) AS behind FROM pg_stat_replication")
      if (streaming.rows.length !== 1 || streaming.rows[0].state !== "streaming") {
        problems.push(`pg_stat_replication: ${JSON.stringify(streaming.rows)} (one streaming replica expected)`)
      }
      // The replica catches up with every order (it replays what the primary committed, a moment later).
      const orderCount = "SELECT count(*) AS n FROM orders WHERE account_id = $1"
      const ordersOnPrimary = Number((await primaryDb.query(orderCount, [account.account_id])).rows[0].n)
      let ordersOnReplica = -1
      for (let i = 0; i < 100 && ordersOnReplica !== ordersOnPrimary; i++) {
        ordersOnReplica = Number((await replicaDb.query(orderCount, [account.account_id])).rows[0].n)
        if (ordersOnReplica !== ordersOnPrimary) await Harness.sleep(100)
      }
      if (ordersOnReplica !== ordersOnPrimary) problems.push(`the replica has ${ordersOnReplica} of the account's orders, the primary ${ordersOnPrimary}`)
      served += `; replication ${streaming.rows[0]?.state ?? "none"}, ${streaming.rows[0]?.behind ?? "?"} bytes behind; replica caught up with ${ordersOnReplica}/${ordersOnPrimary} orders`
    }
    console.log(`reads: ${readLoad.ok} (GET by id, searches) in ${readLoad.seconds.toFixed(1)} s (${(readLoad.ok / readLoad.seconds).toFixed(0)}/s, ` +
      `p50 ${ms(50)} ms, p99 ${ms(99)} ms) beside the writes; read-after-write ${statuses.length} GETs, ${missing} 404s; ` +
      `statements committed in ${loadSeconds.toFixed(1)} s: ${served}`)
  }
  await replicaDb?.end()
  await primaryDb.end()

  const db = Harness.database(run)
  await db.connect()
  try {
    const query = async <R>(text: string): Promise<Array<R>> => (await db.query(text, [account.account_id])).rows as Array<R>
    // Every payment, with the right status: charged and captured orders are both succeeded.
    const orders = await query<{ status: string; capture_method: string; n: string }>(
      "SELECT status, capture_method, count(*) AS n FROM orders WHERE account_id = $1 GROUP BY 1, 2"
    )
    const orderCount = (method: string) => orders.filter((o) => o.capture_method === method).reduce((n, o) => n + Number(o.n), 0)
    const wrong = orders.filter((o) => o.status !== "succeeded")
    if (orderCount("automatic") !== CHARGES + PROBE_CHARGES) {
      problems.push(`orders charged: ${orderCount("automatic")} in the database, ${CHARGES + PROBE_CHARGES} expected (with the probe)`)
    }
    if (orderCount("manual") !== CAPTURES) problems.push(`orders authorized+captured: ${orderCount("manual")} in the database, ${CAPTURES} expected`)
    if (wrong.length > 0) problems.push(`orders not succeeded: ${wrong.map((o) => `${o.n} ${o.capture_method} ${o.status}`).join(", ")}`)

    // Every event of every payment reaches the receiver: wait for the stragglers, up to the budget.
    const events = await query<{ id: string; type: string }>("SELECT id, type FROM events WHERE account_id = $1")
    const missing = () => events.filter((e) => !receiver.events.has(e.id))
    while (missing().length > 0 && Date.now() - started < (TIMEOUT_S - 5) * 1000) await Harness.sleep(100)
    const lost = missing()
    if (lost.length > 0) problems.push(`${lost.length} of ${events.length} events never reached the receiver (e.g. ${lost[0].id} ${lost[0].type})`)
    const known = new Set(events.map((e) => e.id))
    const strangers = [...receiver.events.keys()].filter((id) => !known.has(id))
    if (strangers.length > 0) problems.push(`${strangers.length} events arrived that the account never recorded (e.g. ${strangers[0]})`)
    if (receiver.badSignatures > 0) problems.push(`${receiver.badSignatures} POSTs with a signature that does not verify`)
    if (receiver.malformed > 0) problems.push(`${receiver.malformed} malformed POSTs`)
    const duplicates = [...receiver.events.values()].reduce((n, a) => n + a.count - 1, 0)
    const byType = new Map<string, number>()
    for (const e of events) byType.set(e.type, (byType.get(e.type) ?? 0) + 1)

    // The delivery log agrees: each delivery recorded as succeeded (its attempt written by a worker).
    // A delivery's record lands just after its POST: give the last ones a moment.
    let deliveries: Array<{ status: string; n: string }> = []
    for (let i = 0; i < 50; i++) {
      deliveries = await query("SELECT status, count(*) AS n FROM webhook_deliveries WHERE account_id = $1 GROUP BY 1")
      if (deliveries.every((d) => d.status === "succeeded")) break
      await Harness.sleep(100)
    }
    const unfinished = deliveries.filter((d) => d.status !== "succeeded")
    if (unfinished.length > 0) problems.push(`deliveries not succeeded: ${unfinished.map((d) => `${d.n} ${d.status}`).join(", ")}`)

    for (const child of run.children) {
      if (child.process.exitCode !== null || child.process.signalCode !== null) {
        problems.push(`${child.name} exited (${child.process.exitCode ?? child.process.signalCode}) during the run:\n${child.output.join("\n")}`)
      }
    }
    console.log(`events: ${events.length} (${[...byType].map(([type, n]) => `${n} ${type}`).join(", ")}), ` +
      `${events.length - lost.length} delivered, ${duplicates} duplicates, ${receiver.requests} POSTs received, ` +
      `${receiver.badSignatures} bad signatures; deliveries ${deliveries.map((d) => `${d.n} ${d.status}`).join(", ")} (${elapsed()})`)
  } finally {
    await db.end()
    await receiver.close()
  }
} catch (error) {
  problems.push(`the run failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
}

if (problems.length === 0) console.log(`topology: ok — every payment succeeded and every event arrived (${elapsed()})`)
else console.error(`topology: FAILED\n${problems.map((p) => `  - ${p}`).join("\n")}`)
await run.finish(problems.length === 0 ? 0 : 1)
