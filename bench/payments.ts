/**
 * Payments benchmark: Tender over its embedded PostgreSQL against bare node:http + pg baselines on
 * the same PostgreSQL, in one run.
 *
 *   npm run bench                       # 10 s per scenario and server, 16 connections, 3 s warm-up each
 *   npm run bench -- --duration 20 --connections 32 --rounds 2 --profile
 *   npm run bench -- --workers 1,2      # Tender as one process and as `serve --workers 2`, side by side
 *
 * Starts `tender serve` (a child process, on a free loopback port, over a fresh temporary data dir
 * with the rate limit lifted), creates three accounts with the CLI (Tender's, and one per baseline
 * for the rows it writes), vaults 4242 4242 4242 4242, starts the baselines (bench/baseline.ts,
 * child processes: `writes` does Tender's writes in one transaction; `tender-sql` sends the very
 * statements Tender sends); with `--workers` listing several counts, one `tender serve --workers N`
 * per count (the first starts the embedded PostgreSQL, the others join it), each a server row of
 * its own writing as its own account; then measures, for each round, each scenario on each server in turn:
 *
 *   charge             POST /v1/payments, a merchant-initiated card charge (autocannon)
 *   authorize+capture  POST /v1/payments (capture_method manual), then POST /v1/payments/capture
 *                      with its order id, timed as one operation (bench/load.ts)
 *
 * Prints a markdown table (ops/s, p50, p99, failures) with Tender/baseline ratios, then checks the
 * database: every ok operation must have left a succeeded order. Any non-2xx, unexpected body,
 * socket error or database mismatch makes the run say so loudly and exit 1. Every loop is
 * time-bounded; the run ends by stopping the baselines and Tender (SIGTERM to the node process,
 * which stops the embedded PostgreSQL it started), and deletes the data dir.
 */
import { existsSync, readdirSync } from "node:fs"
import * as path from "node:path"
import { parseArgs } from "node:util"
import * as Harness from "./harness.ts"
import { fixed, LOOPBACK, positive } from "./harness.ts"
import {
  authorizeCaptureLoop,
  chargeLoop,
  chargeWithAutocannon,
  type Measurement,
  paymentBody,
  percentile,
  signedHeaders,
  type Target,
  throughput
} from "./load.ts"
import * as Profile from "./profile.ts"

Harness.requireNode("bench")

const { values: options } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    connections: { type: "string", default: "16" },
    rounds: { type: "string", default: "1" },
    workers: { type: "string", default: "1" },
    profile: { type: "boolean", default: false },
    "half-peak": { type: "boolean", default: false },
    "keep-data": { type: "boolean", default: false },
    help: { type: "boolean", default: false }
  }
})
if (options.help) {
  console.log(`npm run bench -- [--duration S=10] [--warmup S=3] [--connections N=16] [--rounds N=1] [--workers N[,N…]=1] [--half-peak] [--profile] [--keep-data]

  --duration     seconds measured per scenario and server, per round
  --warmup       seconds of unmeasured load before each measurement
  --connections  concurrent connections (autocannon) / workers (authorize+capture)
  --rounds       repeat the six measurements, interleaved; figures pool every round
  --workers      tender serve --workers N; a list (1,2) runs one Tender per count, each its own row
  --half-peak    then load each Tender in an open loop at half its measured peak (per scenario) and
                 report that latency (the issue's p99 target: ≤ 25 ms there)
  --profile      run the servers under --cpu-prof and print where their CPU time went (a cluster's
                 children are profiled too, but only single-process servers are summarised)
  --keep-data    keep the temporary data dir (and the profile) instead of deleting them`)
  process.exit(0)
}
const DURATION = positive("duration", options.duration)
const WARMUP = Number(options.warmup)
const CONNECTIONS = Math.round(positive("connections", options.connections))
const ROUNDS = Math.round(positive("rounds", options.rounds))
/** The worker counts to run Tender with, each once, in the order given. */
const WORKERS = [...new Set(options.workers.split(",").map((n) => Math.round(positive("workers", n.trim()))))]

const BASELINE = path.join(import.meta.dirname, "baseline.ts")

// --- the figures ----------------------------------------------------------------------------

/** `tender` is one process (`--workers 1`); `tender ×N` is `serve --workers N`. */
const tenderName = (workers: number) => (workers === 1 ? "tender" : `tender ×${workers}`)
const TENDERS: ReadonlyArray<string> = WORKERS.map(tenderName)
type ServerName = string
const SERVERS: ReadonlyArray<ServerName> = [...TENDERS, "baseline", "baseline-tender-sql"]

interface Row {
  readonly scenario: string
  readonly server: ServerName
  readonly measurement: Measurement | undefined
  readonly skipped?: string
}

/** Pools rounds: total ok over total time; percentiles over every latency. */
const pool = (ms: ReadonlyArray<Measurement>): Measurement => {
  const latencies = Float64Array.from(ms.flatMap((m) => [...m.latencies])).sort()
  return {
    seconds: ms.reduce((s, m) => s + m.seconds, 0),
    ok: ms.reduce((s, m) => s + m.ok, 0),
    non2xx: ms.reduce((s, m) => s + m.non2xx, 0),
    wrongBody: ms.reduce((s, m) => s + m.wrongBody, 0),
    errors: ms.reduce((s, m) => s + m.errors, 0),
    latencies,
    samples: [...new Set(ms.flatMap((m) => m.samples))].slice(0, 5)
  }
}

const failures = (m: Measurement) => m.non2xx + m.wrongBody + m.errors

const table = (rows: ReadonlyArray<Row>) => {
  const lines = [
    "| scenario | server | ops/s | p50 ms | p99 ms | ok | non-2xx | bad body | socket errors |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|"
  ]
  const scenarios = [...new Set(rows.map((r) => r.scenario))]
  for (const scenario of scenarios) {
    const of = (server: ServerName) => rows.find((r) => r.scenario === scenario && r.server === server)
    for (const server of SERVERS) {
      const row = of(server)
      if (row === undefined) continue
      const m = row.measurement
      lines.push(
        m === undefined
          ? `| ${scenario} | ${server} | not run: ${row.skipped ?? "?"} | | | | | | |`
          : `| ${scenario} | ${server} | ${fixed(throughput(m), 1)} | ${fixed(percentile(m.latencies, 50), 2)} | ${
            fixed(percentile(m.latencies, 99), 2)
          } | ${m.ok} | ${m.non2xx} | ${m.wrongBody} | ${m.errors} |`
      )
    }
    for (const tender of TENDERS) {
      const t = of(tender)?.measurement
      for (const server of ["baseline", "baseline-tender-sql"] as const) {
        const b = of(server)?.measurement
        if (t === undefined || b === undefined) continue
        lines.push(
          `| ${scenario} | **${tender} / ${server}** | **${fixed(throughput(t) / throughput(b), 2)}×** | **${
            fixed(percentile(t.latencies, 50) / percentile(b.latencies, 50), 2)
          }×** | ${fixed(percentile(t.latencies, 99) / percentile(b.latencies, 99), 2)}× | | | | |`
        )
      }
    }
  }
  return lines.join("\n")
}

const machine = () =>
  `${Harness.machine()}\nrun: ${ROUNDS} round(s) × ${DURATION} s per scenario and server, ${WARMUP} s warm-up before each, ${CONNECTIONS} connections, ` +
  `Tender with ${WORKERS.map((n) => `${n} worker${n === 1 ? "" : "s"}`).join(" and ")}`

// --- the run --------------------------------------------------------------------------------

let profileDir = ""

/** The servers' CPU profiles (--profile), read once they have exited; named `CPU.<date>.<time>.<pid>.…`. */
const printProfile = (children: ReadonlyArray<Harness.Child>) => {
  const files = existsSync(profileDir) ? readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile")) : []
  if (files.length === 0) return console.error("no CPU profile was written (did the servers exit cleanly?)")
  for (const child of children) {
    const file = files.find((f) => f.split(".")[3] === String(child.process.pid))
    if (file === undefined) {
      console.error(`no CPU profile from ${child.name}`)
      continue
    }
    console.log(`\nCPU profile of ${child.name} (${file}; under --cpu-prof, so slower than the figures above):`)
    console.log(Profile.format(Profile.summarize(path.join(profileDir, file), 25)))
  }
}

const run = Harness.makeRun({
  // Whatever happens, the run ends: scenarios + warm-ups + start-up, with a generous margin.
  budgetMs: (ROUNDS * 6 * (DURATION + WARMUP + 40) + 300) * 1000,
  keepData: options["keep-data"],
  afterStop: (run) => {
    if (options.profile) printProfile(run.children)
  }
})
const { dataDir, env, children } = run
profileDir = path.join(dataDir, "profile")

const cpuProf = () => (options.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [])

const main = async (): Promise<boolean> => {
  console.log(machine())
  console.log(`data dir: ${dataDir}`)

  // 1. Tender, over a fresh embedded PostgreSQL, with the default rate limit out of the way: one
  //    server per worker count (the first starts the PostgreSQL, the others join it).
  // 2. Accounts: each Tender's, and one per baseline for the rows it writes.
  // 3. The card, vaulted through the API into each Tender's account (a vault is per account); the
  //    baselines use the first one's, as they always did.
  const tenders: Record<ServerName, { readonly target: Target; readonly accountId: string; readonly card: string }> = {}
  for (const workers of WORKERS) {
    const { origin } = await Harness.startTender(run, { nodeArgs: cpuProf(), env: { TENDER_WORKERS: String(workers) } })
    const account = await run.createAccount(`bench-${tenderName(workers)}`)
    const target = Harness.targetOf(origin, account)
    const card = await Harness.vaultCard(target)
    tenders[tenderName(workers)] = { target, accountId: account.account_id, card }
    console.log(`${tenderName(workers)} (serve --workers ${workers}) on ${origin}, writing as account ${account.account_id}, card ${card}`)
  }
  const cardToken = tenders[TENDERS[0]!]!.card
  const cardOf = (name: ServerName) => tenders[name]?.card ?? cardToken

  // 4. The baselines, on the same PostgreSQL.
  const startBaseline = async (name: ServerName, mode: string) => {
    const own = await run.createAccount(`bench-${name}`)
    const child = Harness.start(name, [...cpuProf(), BASELINE, "--data-dir", dataDir, "--account", own.account_id, "--mode", mode], env)
    children.push(child)
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${child.output.join("\n")}`)), 60_000)
      const onData = (chunk: Buffer) => {
        const match = /\{"listening":(\d+)\}/.exec(chunk.toString("utf8"))
        if (match !== null) {
          clearTimeout(timer)
          child.process.stdout?.off("data", onData)
          resolve(Number(match[1]))
        }
      }
      child.process.stdout?.on("data", onData)
      void child.exited.then(() => reject(new Error(`${name} exited:\n${child.output.join("\n")}`)))
    })
    const t: Target = { origin: `http://${LOOPBACK}:${port}`, secretKey: "unused", signingSecret: "unused" }
    console.log(`${name} (--mode ${mode}) listening on ${t.origin}, writing as account ${own.account_id}`)
    return { target: t, accountId: own.account_id }
  }
  const writes = await startBaseline("baseline", "writes")
  const tenderSql = await startBaseline("baseline-tender-sql", "tender-sql")
  const servers: Record<ServerName, { readonly target: Target; readonly accountId: string }> = {
    ...tenders,
    baseline: writes,
    "baseline-tender-sql": tenderSql
  }

  // 5. One of each before any load: a server that cannot do it is reported, not hammered.
  const expectedOk: Record<ServerName, number> = Object.fromEntries(SERVERS.map((name) => [name, 0]))
  // A timed autocannon run ends by closing its connections with one request in flight on each:
  // those requests may or may not have reached the database. Everything else completes.
  const cut: Record<ServerName, number> = Object.fromEntries(SERVERS.map((name) => [name, 0]))
  const usable: Record<ServerName, string> = Object.fromEntries(SERVERS.map((name) => [name, ""]))
  for (const name of SERVERS) {
    const t = servers[name].target
    // Built once, so the signature covers exactly the bytes sent.
    const body = paymentBody(cardOf(name), `smoke-${name}-${Date.now()}`, false)
    const charge = await fetch(`${t.origin}/v1/payments`, { method: "POST", headers: signedHeaders(t, "/v1/payments", body), body })
      .then(async (r) => ({ status: r.status, text: await r.text() }), (e: unknown) => ({ status: 0, text: String(e) }))
    const pair = await authorizeCaptureLoop(t, cardOf(name), { connections: 1, seconds: 30, operations: 1 })
    const chargeOk = charge.status >= 200 && charge.status < 300 && charge.text.includes(`"status":"completed"`)
    if (chargeOk) expectedOk[name]++
    expectedOk[name] += pair.ok
    if (!chargeOk) usable[name] = `POST /v1/payments answered ${charge.status} ${charge.text.slice(0, 300)}`
    else if (pair.ok !== 1) usable[name] = `authorize+capture failed: ${pair.samples.join("; ")}`
    if (usable[name] !== "") console.error(`\n!!! ${name} smoke test failed: ${usable[name]}\n`)
  }

  // 6. The measurements, interleaved per round.
  const results = new Map<string, Array<Measurement>>()
  const record = (key: string, m: Measurement) => results.set(key, [...(results.get(key) ?? []), m])
  const scenarios = [
    { scenario: "charge (MIT card, POST /v1/payments)", run: chargeWithAutocannon },
    { scenario: "authorize+capture (2 requests)", run: authorizeCaptureLoop }
  ] as const
  for (let round = 1; round <= ROUNDS; round++) {
    for (const { scenario, run } of scenarios) {
      for (const name of SERVERS) {
        const t = servers[name].target
        if (usable[name] !== "") continue
        const cuts = run === chargeWithAutocannon ? CONNECTIONS : 0
        if (WARMUP > 0) {
          expectedOk[name] += (await run(t, cardOf(name), { connections: CONNECTIONS, seconds: WARMUP })).ok
          cut[name] += cuts
        }
        const m = await run(t, cardOf(name), { connections: CONNECTIONS, seconds: DURATION })
        expectedOk[name] += m.ok
        cut[name] += cuts
        record(`${scenario}\u0000${name}`, m)
        console.log(
          `round ${round}: ${scenario.padEnd(38)} ${name.padEnd(19)} ${fixed(throughput(m), 1).padStart(8)} ops/s  p50 ${
            fixed(percentile(m.latencies, 50), 2)
          } ms  p99 ${fixed(percentile(m.latencies, 99), 2)} ms  ok ${m.ok}  failed ${failures(m)}`
        )
      }
    }
  }

  // 6b. Latency at half the peak: an open loop (operations start on a fixed schedule, not when the
  //     previous one ends) at half the pooled throughput just measured, so the latency is the
  //     server's own rather than the queue a closed loop builds.
  const halfPeak: Array<{ scenario: string; server: ServerName; rate: number; m: Measurement }> = []
  if (options["half-peak"]) {
    const paced = [
      { scenario: "charge at half the peak (open loop)", of: scenarios[0].scenario, run: chargeLoop },
      { scenario: "authorize+capture at half the peak (open loop)", of: scenarios[1].scenario, run: authorizeCaptureLoop }
    ] as const
    for (const { scenario, of, run } of paced) {
      for (const name of TENDERS) {
        const ms = results.get(`${of}\u0000${name}`)
        if (ms === undefined) continue
        const rate = throughput(pool(ms)) / 2
        const m = await run(servers[name].target, cardOf(name), { connections: CONNECTIONS, seconds: DURATION, ratePerSecond: rate })
        expectedOk[name] += m.ok
        halfPeak.push({ scenario, server: name, rate, m })
        console.log(
          `${scenario.padEnd(46)} ${name.padEnd(10)} ${fixed(rate, 1)}/s scheduled, ${fixed(throughput(m), 1)} ops/s  p50 ${
            fixed(percentile(m.latencies, 50), 2)
          } ms  p99 ${fixed(percentile(m.latencies, 99), 2)} ms  ok ${m.ok}  failed ${failures(m)}`
        )
      }
    }
  }

  // 7. The database agrees: one succeeded order per ok operation, per account, give or take the
  //    requests cut at the end of timed runs (which may have left an order behind, in any status).
  const client = Harness.database(run)
  await client.connect()
  const dbChecks: Array<string> = []
  let dbOk = true
  try {
    for (const name of SERVERS) {
      const id = servers[name].accountId
      const orders = await client.query<{ status: string; n: string }>(
        "SELECT status, count(*) AS n FROM orders WHERE account_id = $1 GROUP BY status ORDER BY status",
        [id]
      )
      const counts = await client.query<{ transactions: string; events: string }>(
        `SELECT (SELECT count(*) FROM transactions WHERE account_id = $1) AS transactions,
                (SELECT count(*) FROM events WHERE account_id = $1) AS events`,
        [id]
      )
      const total = orders.rows.reduce((sum, r) => sum + Number(r.n), 0)
      const succeeded = Number(orders.rows.find((r) => r.status === "succeeded")?.n ?? 0)
      // Every ok operation left a succeeded order, and nothing else is there beyond the cut requests.
      const agrees = succeeded >= expectedOk[name] && total - expectedOk[name] <= cut[name]
      dbOk &&= agrees
      dbChecks.push(
        `${name}: orders ${orders.rows.map((r) => `${r.status} ${r.n}`).join(", ") || "none"}; transactions ${counts.rows[0].transactions}; events ${
          counts.rows[0].events
        } — ${agrees ? "agrees with" : "DOES NOT MATCH"} ${expectedOk[name]} ok operations (+ at most ${cut[name]} requests cut by the end of timed runs)`
      )
    }
  } finally {
    await client.end()
  }

  // 8. The report.
  const rows: Array<Row> = scenarios.flatMap(({ scenario }) =>
    SERVERS.map((server): Row => {
      const ms = results.get(`${scenario}\u0000${server}`)
      return ms === undefined
        ? { scenario, server, measurement: undefined, skipped: "smoke test failed" }
        : { scenario, server, measurement: pool(ms) }
    })
  )
  rows.push(...halfPeak.map(({ m, scenario, server }): Row => ({ scenario, server, measurement: m })))
  console.log(`\n${machine()}\n\n${table(rows)}\n`)
  for (const { m, rate, scenario, server } of halfPeak) {
    const p99 = percentile(m.latencies, 99)
    console.log(`${scenario}, ${server}: ${fixed(rate, 1)} operations/s scheduled, p99 ${fixed(p99, 2)} ms (target ≤ 25 ms: ${p99 <= 25 ? "met" : "missed"})`)
  }
  console.log("database check:")
  for (const line of dbChecks) console.log(`  ${line}`)

  const failed = rows.filter((r) => r.measurement === undefined || failures(r.measurement) > 0)
  for (const r of failed) {
    if (r.measurement === undefined) continue
    console.error(`\n${r.scenario} on ${r.server}: ${failures(r.measurement)} failed operations, e.g.:`)
    for (const s of r.measurement.samples) console.error(`  ${s}`)
  }
  const clean = failed.length === 0 && dbOk
  if (!clean) {
    Harness.invalidBanner("failed requests, a skipped scenario or a database mismatch")
  } else {
    console.log("\nno errors: every request answered 2xx with the expected status, and the database agrees.")
  }
  return clean
}

let exitCode = 1
try {
  exitCode = (await main()) ? 0 : 1
} catch (error) {
  console.error(`\n!!! the bench failed: ${error instanceof Error ? error.message : String(error)}`)
}
await run.finish(exitCode)
