/**
 * Webhook delivery benchmark: how many deliveries per second `tender serve`'s in-process dispatcher
 * makes to loopback receivers, and how long after a payment's response the receiver gets its event.
 *
 *   npm run bench:webhooks                  # ~5 min: 10 s streams, 16 clients, a 2000-event backlog
 *   npm run bench:webhooks -- --duration 20 --connections 32 --backlog 4000
 *
 * Starts `tender serve` over a fresh data dir (bench/harness.ts, as the payments bench does), then
 * per scenario makes an account (CLI), vaults the test card, starts its receivers (bench/receiver.ts,
 * bare node:http servers in this process that answer 200 at once) and registers one webhook endpoint
 * per receiver (POST /v1/webhook_endpoints, every event type). The load is merchant-initiated card
 * charges (POST /v1/payments, bench/load.ts), each of which records one `payment.succeeded` event and,
 * in the same transaction, one delivery per endpoint.
 *
 *   paced     1 endpoint, charges started at a fixed `--rate` (10/s) for `--duration` s: the lag from a
 *             charge's response at the client to its event's first POST at the receiver, when the
 *             dispatcher is not the bottleneck
 *   steady    1 endpoint, `--connections` clients charging as fast as they can for `--duration` s:
 *             deliveries/s and the same lag
 *   fan-out   the same with 4 endpoints (4 receivers): 4 deliveries per event
 *   backlog   1 endpoint whose receiver holds its requests unanswered while `--backlog` events are
 *             created (the dispatcher's 4 slots for that endpoint stay taken, so every other delivery
 *             waits, due), then answers everything: the drain rate of a backlog due all at once
 *   backlog-4 the same with 4 endpoints (4 held receivers): 4 deliveries per event, the drain rate
 *             over four endpoints
 *
 * A warm-up stream (its own account, not in the figures) comes first. Lag is measured on one clock:
 * the client and the receiver are in this process (performance.now()); the event is committed
 * before the response is sent, so the lag is an upper bound of commit → first attempt, plus the
 * receiver's share of this process. Correctness: every committed event reached every endpoint
 * (distinct X-Event-Id per receiver, mapped to the charges by the envelope's data.order_id), the
 * delivery log agrees (GET /v1/webhook_deliveries per endpoint: all succeeded), the database's
 * attempts match the POSTs received, every signature verifies; duplicates are counted (at least once
 * allows them). Bounded throughout; exits 1 with a banner when anything is off.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { performance } from "node:perf_hooks"
import { parseArgs } from "node:util"
import * as Harness from "./harness.ts"
import { type Account, fixed, positive, sleep } from "./harness.ts"
import { chargeLoop, type Measurement, percentile, signedHeaders, type Target } from "./load.ts"
import * as Profile from "./profile.ts"
import { Receiver } from "./receiver.ts"

Harness.requireNode("bench:webhooks")

const { values: options } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    connections: { type: "string", default: "16" },
    backlog: { type: "string", default: "2000" },
    "backlog-seconds": { type: "string", default: "12" },
    rate: { type: "string", default: "10" },
    "drain-timeout": { type: "string", default: "180" },
    "keep-data": { type: "boolean", default: false },
    scenarios: { type: "string", default: "paced,steady,fan-out,backlog,backlog-4" },
    profile: { type: "boolean", default: false },
    help: { type: "boolean", default: false }
  }
})
if (options.help) {
  console.log(`npm run bench:webhooks -- [--duration S=10] [--warmup S=3] [--connections N=16] [--rate R=10]
                              [--backlog K=2000] [--backlog-seconds S=12] [--drain-timeout S=180]
                              [--scenarios paced,steady,fan-out,backlog,backlog-4] [--profile] [--keep-data]

  --duration         seconds of charges in the paced, steady and fan-out streams
  --warmup           seconds of an unmeasured stream first (0: none)
  --connections      concurrent clients creating payments (steady, fan-out, backlog)
  --rate             charges per second of the paced stream (open loop)
  --backlog          events to create while the backlog receiver holds its requests
  --backlog-seconds  at most this long to create them (under Tender's 15 s attempt timeout, so the
                     held attempts do not time out and retry)
  --drain-timeout    seconds to wait, after the load, for every delivery to arrive
  --scenarios        which scenarios to run (comma-separated; the warm-up runs unless --warmup 0)
  --profile          run the server under --cpu-prof and print where its CPU time went
  --keep-data        keep the temporary data dir (and the profile) instead of deleting it`)
  process.exit(0)
}
const DURATION = positive("duration", options.duration)
const WARMUP = Number(options.warmup)
const CONNECTIONS = Math.round(positive("connections", options.connections))
const BACKLOG = Math.round(positive("backlog", options.backlog))
const BACKLOG_SECONDS = Math.min(positive("backlog-seconds", options["backlog-seconds"]), 14)
const RATE = positive("rate", options.rate)
const DRAIN_TIMEOUT = positive("drain-timeout", options["drain-timeout"])
const SCENARIOS = new Set(options.scenarios.split(",").map((name) => name.trim()))
for (const name of SCENARIOS) {
  if (!["paced", "steady", "fan-out", "backlog", "backlog-4"].includes(name)) throw new Error(`--scenarios: no scenario ${name}`)
}
/** No delivery at all this long after a stream: the dispatcher is not delivering; stop waiting. */
const NOTHING_ARRIVED_MS = 15_000

const run = Harness.makeRun({
  // Start-up, then per stream its load and drain, the backlog's build and drain, the checks.
  budgetMs: (300 + (WARMUP + 3 * DURATION + BACKLOG_SECONDS) + 5 * (DRAIN_TIMEOUT + 10) + 120) * 1000,
  keepData: options["keep-data"],
  afterStop: (run) => {
    if (options.profile) printProfile(run.children)
  }
})
const profileDir = path.join(run.dataDir, "profile")

/** The server's CPU profile (--profile), read once it has exited. */
function printProfile(children: ReadonlyArray<Harness.Child>) {
  const files = existsSync(profileDir) ? readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile")) : []
  for (const child of children) {
    const file = files.find((f) => f.split(".")[3] === String(child.process.pid))
    if (file === undefined) {
      console.error(`no CPU profile from ${child.name} (did it exit cleanly?)`)
      continue
    }
    console.log(`\nCPU profile of ${child.name} (${file}; under --cpu-prof, so slower than the figures above):`)
    console.log(Profile.format(Profile.summarize(path.join(profileDir, file), 30)))
  }
}

// --- where the CPU went ------------------------------------------------------------------

/** A process's CPU time so far, and its parent (Linux /proc; `undefined` elsewhere or once it is gone). */
const procStat = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // utime and stime (fields 14 and 15 of the line), in clock ticks (100 per second on Linux).
    return { parent: Number(fields[1]), seconds: (Number(fields[11]) + Number(fields[12])) / 100 }
  } catch {
    return undefined
  }
}

/**
 * CPU seconds so far of Tender (the server process), its PostgreSQL (the postmaster and its
 * backends) and this process (the load and the receivers): whether a drain was held back by Tender,
 * by the database, or by the bench itself.
 */
const cpuNow = (server: number) => {
  const postmaster = Number(readFileSync(path.join(run.dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0])
  let database = procStat(postmaster)?.seconds ?? 0
  for (const entry of existsSync("/proc") ? readdirSync("/proc") : []) {
    if (!/^\d+$/.test(entry)) continue
    const stat = procStat(Number(entry))
    if (stat?.parent === postmaster) database += stat.seconds
  }
  const own = process.cpuUsage()
  return { tender: procStat(server)?.seconds ?? Number.NaN, database, bench: (own.user + own.system) / 1e6, machine: machineBusy() }
}

type Cpu = ReturnType<typeof cpuNow>

const cpuLine = (before: Cpu, after: Cpu, seconds: number) =>
  (["tender", "database", "bench", "machine"] as const).map((k) => `${k} ${fixed(after[k] - before[k], 1)} s (${fixed((100 * (after[k] - before[k])) / seconds, 0)} %)`)
    .join(", ")

let serverPid = 0

/** The machine's busy CPU seconds so far, every process's (/proc/stat: all but idle and iowait). */
const machineBusy = () => {
  try {
    const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).map(Number)
    return (ticks.reduce((a, b) => a + b, 0) - ticks[3] - ticks[4]) / 100
  } catch {
    return Number.NaN
  }
}

// --- a scenario -----------------------------------------------------------------------------

interface Scenario {
  readonly name: string
  readonly account: Account
  readonly target: Target
  readonly cardToken: string
  readonly receivers: ReadonlyArray<Receiver>
  readonly endpointIds: ReadonlyArray<string>
  /** order_id → performance.now() when the charge's response (body read) arrived at the client. */
  readonly charged: Map<string, number>
  load?: Measurement
  /** The load window, performance.now(). */
  loadStart?: number
  loadEnd?: number
  /** Backlog: when the receiver started answering. */
  releasedAt?: number
  released?: number
  /** Backlog: CPU time of Tender, its database and the bench while it drained. */
  drainCpu?: string
}

const post = Harness.postJson

const get = async (target: Target, pathWithQuery: string) => {
  const response = await fetch(`${target.origin}${pathWithQuery}`, { headers: signedHeaders(target, pathWithQuery, "") })
  const answer = await response.text()
  if (!response.ok) throw new Error(`GET ${pathWithQuery} answered ${response.status} ${answer}`)
  return JSON.parse(answer) as Record<string, unknown>
}

const setUp = async (origin: string, name: string, endpoints: number): Promise<Scenario> => {
  const account = await run.createAccount(`bench-webhooks-${name}`)
  const target = Harness.targetOf(origin, account)
  const cardToken = await Harness.vaultCard(target)
  const receivers: Array<Receiver> = []
  const endpointIds: Array<string> = []
  for (let i = 0; i < endpoints; i++) {
    const receiver = await Receiver.start(account.signing_secret, `/hooks/${name}/${i}`)
    receivers.push(receiver)
    const endpoint = await post(target, "/v1/webhook_endpoints", { url: receiver.url, description: `bench ${name} ${i}` })
    endpointIds.push(String(endpoint.id))
  }
  console.log(`${name}: account ${account.account_id}, endpoints ${endpointIds.map((id, i) => `${id} → ${receivers[i].url}`).join(", ")}`)
  return { name, account, target, cardToken, receivers, endpointIds, charged: new Map() }
}

/** Distinct charges of the scenario whose event reached `receiver`. */
const deliveredTo = (s: Scenario, receiver: Receiver) => {
  let n = 0
  for (const arrival of receiver.events.values()) if (arrival.orderId !== undefined && s.charged.has(arrival.orderId)) n++
  return n
}

const allDelivered = (s: Scenario) => s.receivers.every((r) => deliveredTo(s, r) >= s.charged.size)

/** Waits until every charge's event reached every receiver, `DRAIN_TIMEOUT` passes, or nothing arrives at all. */
const drain = async (s: Scenario) => {
  const since = performance.now()
  const deadline = since + DRAIN_TIMEOUT * 1000
  while (!allDelivered(s) && performance.now() < deadline) {
    if (performance.now() - since > NOTHING_ARRIVED_MS && s.receivers.every((r) => r.requests === 0)) {
      console.error(`${s.name}: not one delivery arrived ${NOTHING_ARRIVED_MS / 1000} s after the load: is the dispatcher running?`)
      return false
    }
    await sleep(50)
  }
  const done = allDelivered(s)
  if (!done) {
    console.error(`${s.name}: not every delivery arrived within --drain-timeout ${DRAIN_TIMEOUT} s`)
    await explainPending(s)
  }
  return done
}

/** What the deliveries still waiting are doing: due, or claimed (leased) by the dispatcher and not attempted. */
const explainPending = async (s: Scenario) => {
  const client = Harness.database(run)
  await client.connect()
  try {
    const { rows } = await client.query<{ status: string; attempts: number; due: string; leased: string; soonest: string | null; latest: string | null }>(
      `SELECT status, attempts,
              count(*) FILTER (WHERE next_attempt_at <= now()) AS due,
              count(*) FILTER (WHERE next_attempt_at > now()) AS leased,
              round(extract(epoch FROM min(next_attempt_at) FILTER (WHERE next_attempt_at > now()) - now())::numeric, 1) AS soonest,
              round(extract(epoch FROM max(next_attempt_at) FILTER (WHERE next_attempt_at > now()) - now())::numeric, 1) AS latest
       FROM webhook_deliveries WHERE account_id = $1 AND status <> 'succeeded' GROUP BY status, attempts ORDER BY status, attempts`,
      [s.account.account_id]
    )
    for (const r of rows) {
      console.error(
        `  ${r.status} after ${r.attempts} attempts: ${r.due} due now, ${r.leased} not due before ${r.soonest ?? "–"}–${r.latest ?? "–"} s from now`
      )
    }
  } finally {
    await client.end()
  }
}

const stream = async (s: Scenario, seconds: number, ratePerSecond?: number) => {
  s.loadStart = performance.now()
  s.load = await chargeLoop(s.target, s.cardToken, {
    // Paced: enough clients that one is always free for the next slot.
    connections: ratePerSecond === undefined ? CONNECTIONS : Math.max(4, Math.ceil(ratePerSecond / 10)),
    seconds,
    ...(ratePerSecond === undefined ? {} : { ratePerSecond }),
    onCharged: (orderId, at) => s.charged.set(orderId, at)
  })
  s.loadEnd = performance.now()
  const drained = await drain(s)
  const after = ((performance.now() - s.loadEnd) / 1000).toFixed(1)
  console.log(
    `${s.name}: ${s.load.ok} charges in ${s.load.seconds.toFixed(1)} s (${fixed(s.load.ok / s.load.seconds, 1)}/s, ${
      s.load.non2xx + s.load.wrongBody + s.load.errors
    } failed), ${s.receivers.reduce((n, r) => n + r.requests, 0)} POSTs received; ${drained ? "all delivered" : "NOT all delivered"} ${after} s after the load`
  )
  return drained
}

const backlog = async (s: Scenario) => {
  for (const receiver of s.receivers) receiver.hold()
  s.loadStart = performance.now()
  s.load = await chargeLoop(s.target, s.cardToken, {
    connections: CONNECTIONS,
    seconds: BACKLOG_SECONDS,
    operations: BACKLOG,
    onCharged: (orderId, at) => s.charged.set(orderId, at)
  })
  s.loadEnd = performance.now()
  s.releasedAt = performance.now()
  s.released = s.receivers.reduce((n, receiver) => n + receiver.release(), 0)
  console.log(
    `${s.name}: ${s.load.ok} charges in ${s.load.seconds.toFixed(1)} s with the receiver holding ${s.released} requests; answering from now on`
  )
  const releasedClock = process.hrtime.bigint()
  const cpuBefore = cpuNow(serverPid)
  const drained = await drain(s)
  const drainSeconds = (performance.now() - s.releasedAt) / 1000
  console.log(`${s.name}: ${drained ? "all delivered" : "NOT all delivered"} ${drainSeconds.toFixed(1)} s after`)
  s.drainCpu = cpuLine(cpuBefore, cpuNow(serverPid), drainSeconds)
  // The drain on the monotonic clock the server's CPU profile is stamped with (µs), to read it for the drain alone.
  if (options.profile) console.log(`${s.name}: drain window ${releasedClock / 1000n}–${process.hrtime.bigint() / 1000n} µs (monotonic)`)
  return drained
}

// --- the figures ----------------------------------------------------------------------------

const sorted = (values: ReadonlyArray<number>) => Float64Array.from(values).sort()

interface StreamFigures {
  readonly events: number
  readonly eventsPerSecond: number
  readonly deliveries: number
  /** First arrivals during the load window over its length. */
  readonly deliveriesPerSecondDuringLoad: number
  /** All of the scenario's deliveries over the time from the load's start to the last one. */
  readonly deliveriesPerSecondOverall: number
  readonly lags: Float64Array
  /** Last first arrival after the load ended, seconds. */
  readonly tailSeconds: number
}

const firstArrivals = (s: Scenario) =>
  s.receivers.flatMap((r) => [...r.events.values()].filter((a) => a.orderId !== undefined && s.charged.has(a.orderId)))

const streamFigures = (s: Scenario): StreamFigures => {
  const arrivals = firstArrivals(s)
  const start = s.loadStart!
  const end = s.loadEnd!
  const last = Math.max(...arrivals.map((a) => a.firstAt))
  return {
    events: s.charged.size,
    eventsPerSecond: s.charged.size / ((end - start) / 1000),
    deliveries: arrivals.length,
    deliveriesPerSecondDuringLoad: arrivals.filter((a) => a.firstAt <= end).length / ((end - start) / 1000),
    deliveriesPerSecondOverall: arrivals.length / ((last - start) / 1000),
    lags: sorted(arrivals.map((a) => a.firstAt - s.charged.get(a.orderId!)!)),
    tailSeconds: (last - end) / 1000
  }
}

const streamTable = (scenarios: ReadonlyArray<Scenario>) => {
  const lines = [
    "| scenario | endpoints | events | events/s | deliveries (of expected) | deliveries/s during load | deliveries/s overall | lag p50 ms | lag p90 ms | lag p99 ms | lag max ms | last delivery after load s |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  ]
  for (const s of scenarios) {
    const f = streamFigures(s)
    lines.push(
      `| ${s.name} | ${s.receivers.length} | ${f.events} | ${fixed(f.eventsPerSecond, 1)} | ${f.deliveries}${
        f.deliveries < f.events * s.receivers.length ? ` of ${f.events * s.receivers.length} (missing ones not in the lags)` : ""
      } | ${fixed(f.deliveriesPerSecondDuringLoad, 1)} | ${
        fixed(f.deliveriesPerSecondOverall, 1)
      } | ${fixed(percentile(f.lags, 50), 1)} | ${fixed(percentile(f.lags, 90), 1)} | ${fixed(percentile(f.lags, 99), 1)} | ${
        fixed(f.lags.at(-1) ?? Number.NaN, 1)
      } | ${fixed(f.tailSeconds, 2)} |`
    )
  }
  return lines.join("\n")
}

const backlogRow = (s: Scenario) => {
  const released = s.releasedAt!
  const arrivals = firstArrivals(s)
  const expected = s.charged.size * s.receivers.length
  const before = arrivals.filter((a) => a.firstAt < released).length
  const after = sorted(arrivals.filter((a) => a.firstAt >= released).map((a) => (a.firstAt - released) / 1000))
  const drainSeconds = after.at(-1) ?? Number.NaN
  // The busiest second after the release, every POST to every endpoint counted.
  const bins = new Map<number, number>()
  for (const at of s.receivers.flatMap((r) => r.arrivals)) {
    if (at >= released) bins.set(Math.floor((at - released) / 1000), (bins.get(Math.floor((at - released) / 1000)) ?? 0) + 1)
  }
  const peak = Math.max(0, ...bins.values())
  const share = (p: number) => fixed(percentile(after, p), 2)
  return `| ${s.receivers.length} | ${s.charged.size} | ${expected} | ${fixed(s.load!.seconds, 1)} | ${before} | ${after.length}${
    before + after.length < expected ? ` (${expected - before - after.length} never)` : ""
  } | ${fixed(drainSeconds, 2)} | ${fixed(after.length / drainSeconds, 1)} | ${peak} | ${share(50)} | ${share(90)} | ${share(99)} |`
}

const backlogTable = (scenarios: ReadonlyArray<Scenario>) =>
  [
    "| endpoints | backlog events | deliveries | built in s | attempted before release | delivered after release | drain s | drain deliveries/s | busiest second | 50 % by s | 90 % by s | 99 % by s |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...scenarios.map(backlogRow)
  ].join("\n")

// --- correctness ----------------------------------------------------------------------------

interface Check {
  readonly line: string
  readonly ok: boolean
}

/** Every delivery of an endpoint through the API, paged: its statuses and event ids. */
const deliveryLog = async (s: Scenario, endpointId: string) => {
  const statuses = new Map<string, number>()
  const events = new Set<string>()
  let first: string | undefined
  let cursor: string | null = null
  for (let page = 0; page < 10_000; page++) {
    const query = new URLSearchParams({ endpoint_id: endpointId, limit: "100", ...(cursor === null ? {} : { cursor }) })
    const body = await get(s.target, `/v1/webhook_deliveries?${query}`) as {
      data: Array<{ id: string; event_id: string; status: string }>
      has_more: boolean
      next_cursor: string | null
    }
    for (const d of body.data) {
      statuses.set(d.status, (statuses.get(d.status) ?? 0) + 1)
      events.add(d.event_id)
      first ??= d.id
    }
    if (!body.has_more || body.next_cursor === null) break
    cursor = body.next_cursor
  }
  return { statuses, events, first }
}

const check = async (s: Scenario, client: ReturnType<typeof Harness.database>): Promise<Check> => {
  const problems: Array<string> = []
  const load = s.load!
  if (load.non2xx + load.wrongBody + load.errors > 0) {
    problems.push(`${load.non2xx + load.wrongBody + load.errors} charges failed (${load.samples.join("; ")})`)
  }
  const perEndpoint: Array<string> = []
  let duplicates = 0
  let requests = 0
  let sample: string | undefined
  for (const [i, receiver] of s.receivers.entries()) {
    const delivered = deliveredTo(s, receiver)
    const extra = [...receiver.events.values()].filter((a) => a.orderId === undefined || !s.charged.has(a.orderId) || a.type !== "payment.succeeded")
    duplicates += [...receiver.events.values()].reduce((n, a) => n + a.count - 1, 0)
    requests += receiver.requests
    if (delivered < s.charged.size) problems.push(`endpoint ${i}: ${s.charged.size - delivered} events never arrived`)
    if (extra.length > 0) problems.push(`endpoint ${i}: ${extra.length} events not of this scenario's charges (${extra[0].type} ${extra[0].orderId})`)
    if (receiver.badSignatures > 0) problems.push(`endpoint ${i}: ${receiver.badSignatures} signatures did not verify`)
    if (receiver.malformed > 0) problems.push(`endpoint ${i}: ${receiver.malformed} malformed POSTs`)
    const log = await deliveryLog(s, s.endpointIds[i])
    sample ??= log.first
    const succeeded = log.statuses.get("succeeded") ?? 0
    if (succeeded !== s.charged.size || log.statuses.size !== 1) {
      problems.push(`endpoint ${i}: the delivery log says ${[...log.statuses].map(([k, v]) => `${k} ${v}`).join(", ")} for ${s.charged.size} events`)
    }
    const unlogged = [...receiver.events.keys()].filter((id) => !log.events.has(id)).length
    if (unlogged > 0) problems.push(`endpoint ${i}: ${unlogged} events received that the delivery log does not list`)
    perEndpoint.push(`${delivered}/${s.charged.size}`)
  }
  const db = await client.query<{ events: string; attempts: string; failed: string; p50: string | null; p99: string | null }>(
    `SELECT (SELECT count(*) FROM events WHERE account_id = $1) AS events,
            count(a.*) AS attempts,
            count(a.*) FILTER (WHERE a.error IS NOT NULL) AS failed,
            round(percentile_cont(0.5) WITHIN GROUP (ORDER BY a.duration_ms)::numeric, 1) AS p50,
            round(percentile_cont(0.99) WITHIN GROUP (ORDER BY a.duration_ms)::numeric, 1) AS p99
     FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.account_id = $1`,
    [s.account.account_id]
  )
  const row = db.rows[0]
  if (Number(row.events) !== s.charged.size) problems.push(`the database holds ${row.events} events for ${s.charged.size} ok charges`)
  if (Number(row.attempts) !== requests) problems.push(`the database records ${row.attempts} attempts, the receivers got ${requests} POSTs`)
  if (Number(row.failed) > 0) problems.push(`${row.failed} attempts recorded as failed`)
  let attempts = ""
  if (sample !== undefined) {
    const detail = await get(s.target, `/v1/webhook_deliveries/${sample}`) as { attempts?: Array<{ status_code: number | null; duration_ms: number }> }
    attempts = `; e.g. ${sample}: ${(detail.attempts ?? []).map((a) => `${a.status_code} in ${a.duration_ms} ms`).join(", ") || "no attempts"}`
  }
  const line = `${s.name}: ${s.charged.size} events committed (database: ${row.events}), delivered ${perEndpoint.join(" · ")} per endpoint, ${requests} POSTs, ${duplicates} duplicates, ${
    s.receivers.reduce((n, r) => n + r.badSignatures, 0)
  } bad signatures; ${row.attempts} attempts recorded (${row.failed} failed), attempt duration p50 ${row.p50 ?? "–"} ms p99 ${row.p99 ?? "–"} ms (server-side)${attempts}${
    problems.length > 0 ? `\n    PROBLEMS: ${problems.join("; ")}` : ""
  }`
  return { line, ok: problems.length === 0 }
}

// --- the run --------------------------------------------------------------------------------

const scenarios: Array<Scenario> = []

const main = async (): Promise<boolean> => {
  console.log(Harness.machine())
  console.log(
    `run: streams of ${DURATION} s (paced: ${RATE}/s; steady, fan-out: ${CONNECTIONS} clients), ${WARMUP} s warm-up; backlog of ${BACKLOG} events (at most ${BACKLOG_SECONDS} s to build); drain timeout ${DRAIN_TIMEOUT} s`
  )
  console.log(`data dir: ${run.dataDir}`)
  const { child, origin } = await Harness.startTender(run, { nodeArgs: options.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [] })
  serverPid = child.process.pid ?? 0

  let drained = true
  if (WARMUP > 0) {
    const warmup = await setUp(origin, "warm-up", 1)
    scenarios.push(warmup)
    if (!(await stream(warmup, WARMUP)) && warmup.receivers[0].requests === 0) {
      throw new Error("no webhook delivery arrived during the warm-up: the figures would mean nothing")
    }
  }
  const streams: Array<Scenario> = []
  for (const [name, endpoints, rate] of [["paced", 1, RATE], ["steady", 1, undefined], ["fan-out", 4, undefined]] as const) {
    if (!SCENARIOS.has(name)) continue
    const s = await setUp(origin, name, endpoints)
    scenarios.push(s)
    streams.push(s)
    drained = (await stream(s, DURATION, rate)) && drained
  }
  const backlogs: Array<Scenario> = []
  for (const [name, endpoints] of [["backlog", 1], ["backlog-4", 4]] as const) {
    if (!SCENARIOS.has(name)) continue
    const s = await setUp(origin, name, endpoints)
    scenarios.push(s)
    backlogs.push(s)
    drained = (await backlog(s)) && drained
  }

  // Straggling duplicates (a lease that ran out) would show up here.
  await sleep(1_000)

  const client = Harness.database(run)
  await client.connect()
  const checks: Array<Check> = []
  try {
    for (const s of scenarios) checks.push(await check(s, client))
  } finally {
    await client.end()
  }

  console.log(`\n${Harness.machine()}`)
  console.log(`run: streams of ${DURATION} s (paced: ${RATE}/s; steady, fan-out: ${CONNECTIONS} clients); backlog of ${BACKLOG} events\n`)
  if (streams.length > 0) console.log(streamTable(streams))
  console.log("")
  if (backlogs.length > 0) {
    console.log(backlogTable(backlogs))
    console.log(`\nCPU while draining (${os.availableParallelism()} cores = ${100 * os.availableParallelism()} %; machine: every process's, other work included):`)
    for (const s of backlogs) console.log(`  ${s.name}: ${s.drainCpu}`)
  }
  console.log("\ncorrectness:")
  for (const c of checks) console.log(`  ${c.line}`)
  const clean = drained && checks.every((c) => c.ok)
  if (!clean) Harness.invalidBanner("missing or unlogged deliveries, failed charges or attempts, or bad signatures")
  else console.log("\nno errors: every committed event reached every endpoint, the delivery log and the database agree.")
  return clean
}

let exitCode = 1
try {
  exitCode = (await main()) ? 0 : 1
} catch (error) {
  console.error(`\n!!! the bench failed: ${error instanceof Error ? error.message : String(error)}`)
}
for (const s of scenarios) for (const r of s.receivers) await r.close()
await run.finish(exitCode)
