/**
 * Using the cores (issue 24): where the CPU of a payment goes — Tender, PostgreSQL, the load
 * generator — and what PostgreSQL does per payment (WAL, fsyncs, commits, busy connections), measured
 * at peak on this machine; then a model of the ceiling on a machine with more cores.
 *
 *   npm run bench:cores -- [--workers 1,2] [--duration 8] [--connections 16]
 *
 * For each worker count, in turn: `tender serve --workers N` over the run's embedded PostgreSQL
 * (harness.ts), a warm-up, then the charge and the authorize+capture scenarios of load.ts in a closed
 * loop. Meanwhile:
 *
 *   /proc             CPU seconds (utime + stime, every thread) of every process, by class: Tender (the
 *                     serve process and, under --workers N>1, its forked children; the primary apart),
 *                     PostgreSQL (the postmaster of <dataDir>/pg/postmaster.pid and its children, by
 *                     backend_type from pg_stat_activity), the load generator (this process), and what
 *                     the rest of the machine used (/proc/stat), which says how shared the run was
 *   pg_stat_activity  ten times a second: Tender's connections open, busy (active or idle in a
 *                     transaction), and what the busy ones wait on
 *   cumulative stats  pg_stat_database, pg_stat_wal, pg_stat_io's WAL rows (PostgreSQL 18 moved WAL
 *                     writes and fsyncs there; older servers have them in pg_stat_wal), the checkpointer,
 *                     and the next transaction id (its growth: the commits that wrote, which wait for an
 *                     fsync); read over a connection to the `postgres` database, so the sampler's own
 *                     commits stay out of Tender's row
 *
 * PostgreSQL's cumulative statistics reach shared memory when a backend flushes them: at most once a
 * second while busy, and up to 10 s (PGSTAT_IDLE_INTERVAL) after it went idle. So every statistics
 * reading is taken after `--pad` quiet seconds, and what Tender's background workers did meanwhile
 * (the idle rate, measured over one quiet pad before the load) is subtracted in proportion to time.
 *
 * Before Tender starts, a probe times `--fsync-iterations` overwrites of 8 kB + fdatasync in the
 * data dir's filesystem (a WAL segment is preallocated and overwritten the same way): what one WAL
 * fsync costs here, for the model.
 *
 * Every figure printed is measured in the run; the model's assumptions are printed with it.
 */
import { execFileSync } from "node:child_process"
import { closeSync, existsSync, fdatasyncSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from "node:fs"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { parseArgs } from "node:util"
import { DISPATCHER_POOL_SIZE } from "@tender/adapters/Infrastructure"
import pg from "pg"
import * as Harness from "./harness.ts"
import { fixed, positive, sleep } from "./harness.ts"
import { authorizeCaptureLoop, chargeLoop, type Measurement, percentile, type Target } from "./load.ts"

Harness.requireNode("bench:cores")

const { values: options } = parseArgs({
  options: {
    workers: { type: "string", default: "1" },
    duration: { type: "string", default: "8" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "16" },
    pad: { type: "string", default: "11" },
    "fsync-iterations": { type: "string", default: "200" },
    "keep-data": { type: "boolean", default: false },
    help: { type: "boolean", default: false }
  }
})
if (options.help) {
  console.log(`npm run bench:cores -- [--workers N[,N…]=1] [--duration S=8] [--warmup S=2] [--connections N=16] [--pad S=11] [--fsync-iterations N=200] [--keep-data]

  --workers           tender serve --workers N; a list (1,2) runs each in turn over the same PostgreSQL
  --duration          seconds of closed-loop load per scenario
  --warmup            seconds of unmeasured load per scenario before the measurements
  --connections       operations in flight (closed loop)
  --pad               quiet seconds before each statistics reading (PostgreSQL flushes an idle
                      backend's statistics 10 s after it went idle)
  --fsync-iterations  8 kB writes + fdatasync timed by the fsync probe
  --keep-data         keep the temporary data dir`)
  process.exit(0)
}
const WORKERS = [...new Set(options.workers.split(",").map((n) => Math.round(positive("workers", n.trim()))))]
const DURATION = positive("duration", options.duration)
const WARMUP = Number(options.warmup)
const CONNECTIONS = Math.round(positive("connections", options.connections))
const PAD = positive("pad", options.pad)
const FSYNC_ITERATIONS = Math.round(positive("fsync-iterations", options["fsync-iterations"]))

/** The cores of the machines the model is asked about. */
const MODEL_CORES = [2, 4, 8, 16, 32] as const
/**
 * Tender's request pool: @effect/sql-pg's default `maxConnections` (PgPool.js), which
 * PgDatabase.client keeps for the server's pool; the dispatcher has its own (DISPATCHER_POOL_SIZE)
 * and the account cache one LISTEN connection. Checked against the connections seen open.
 */
const REQUEST_POOL = 10
/** The notified caches' one listener and the dispatcher's wake-ups (README, Configuration: `--workers`). */
const LISTENER_CONNECTIONS = 2
const CONNECTIONS_PER_PROCESS = REQUEST_POOL + DISPATCHER_POOL_SIZE + LISTENER_CONNECTIONS
/** The sampler's application_name: its backend is the bench's, not Tender's. */
const SAMPLER_APP = "tender-bench-cores"
/** Tender's database, whose pg_stat_database row is read. */
const TENDER_DATABASE = "tender"

// --- /proc ----------------------------------------------------------------------------------

/** Clock ticks per second of /proc's CPU times (USER_HZ). */
const CLK_TCK = (() => {
  try {
    const n = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim())
    return Number.isFinite(n) && n > 0 ? n : 100
  } catch {
    return 100
  }
})()

interface Proc {
  readonly ppid: number
  /** utime + stime, in clock ticks. */
  readonly ticks: number
}

/** Every process now: parent and CPU ticks (the command name may hold spaces or parentheses: fields follow its last ')'). */
const readProcs = (): Map<number, Proc> => {
  const procs = new Map<number, Proc>()
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    } catch {
      continue // exited meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
    procs.set(pid, { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) })
  }
  return procs
}

/** The machine's busy and total ticks (/proc/stat's first line; guest time is inside user). */
const readMachine = () => {
  const [, ...values] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = values.map(Number)
  return { busy: user + nice + system + irq + softirq + steal, total: user + nice + system + idle + iowait + irq + softirq + steal, steal, iowait }
}

/**
 * CPU of the processes of a window: the first and last ticks seen of every pid, sampled every
 * 250 ms, so a process that starts inside the window counts from 0 and one that exits counts up to
 * its last sample (the little it ran after that is lost, and said so).
 */
class CpuWindow {
  readonly first = new Map<number, number>()
  readonly last = new Map<number, number>()
  readonly parents = new Map<number, number>()
  readonly startedAt = performance.now()
  readonly selfStart = process.cpuUsage()
  readonly machineStart = readMachine()
  endedAt = 0
  selfMs = 0
  machine = { busy: 0, total: 0, steal: 0, iowait: 0 }
  private timer: NodeJS.Timeout | undefined

  constructor() {
    this.sample(true)
    this.timer = setInterval(() => this.sample(false), 250)
  }

  private sample(initial: boolean) {
    const procs = readProcs()
    for (const [pid, p] of procs) {
      if (!this.first.has(pid)) this.first.set(pid, initial ? p.ticks : 0)
      this.last.set(pid, p.ticks)
      this.parents.set(pid, p.ppid)
    }
    return procs
  }

  /** Pids seen in the window that had exited by its end. */
  gone = new Set<number>()

  end() {
    clearInterval(this.timer)
    const procs = this.sample(false)
    this.gone = new Set([...this.last.keys()].filter((pid) => !procs.has(pid)))
    this.endedAt = performance.now()
    const self = process.cpuUsage(this.selfStart)
    this.selfMs = (self.user + self.system) / 1000
    const m = readMachine()
    this.machine = {
      busy: m.busy - this.machineStart.busy,
      total: m.total - this.machineStart.total,
      steal: m.steal - this.machineStart.steal,
      iowait: m.iowait - this.machineStart.iowait
    }
    return this
  }

  get seconds() {
    return (this.endedAt - this.startedAt) / 1000
  }

  /** CPU ms of a pid over the window. */
  ms(pid: number) {
    return ((this.last.get(pid) ?? 0) - (this.first.get(pid) ?? 0)) * (1000 / CLK_TCK)
  }

  /** Whether the pid descends from `ancestor`, by the parents recorded (a pid's parent may exit first). */
  descendsFrom(pid: number, ancestor: number) {
    for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 1 && hops < 64; p = this.parents.get(p), hops++) {
      if (p === ancestor) return true
    }
    return false
  }
}

// --- PostgreSQL -----------------------------------------------------------------------------

type Numbers = Record<string, number>

/** The numeric columns of a row (bigints come back as strings), timestamps and names left out. */
const numbersOf = (row: Record<string, unknown> | undefined): Numbers => {
  const out: Numbers = {}
  for (const [key, value] of Object.entries(row ?? {})) {
    const n = typeof value === "number" ? value : typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN
    if (Number.isFinite(n)) out[key] = n
  }
  return out
}

/** `a + times × b`, over the columns of either (a column may be NULL in one row of a view). */
const plus = (a: Numbers, b: Numbers, times = 1): Numbers =>
  Object.fromEntries([...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, (a[k] ?? 0) + times * (b[k] ?? 0)]))
const minus = (a: Numbers, b: Numbers): Numbers => plus(a, b, -1)

interface Stats {
  readonly at: number
  readonly database: Numbers
  readonly wal: Numbers
  /** pg_stat_io's WAL rows (object = 'wal'), summed over backend types and contexts; empty before 18. */
  readonly walIo: Numbers
  /** The same, per "backend_type/context", for who does the WAL writes and fsyncs. */
  readonly walIoBy: Record<string, Numbers>
  readonly checkpointer: Numbers
}

const statsOf = async (client: pg.Client, hasWalIo: boolean, checkpointerView: string): Promise<Stats> => {
  const at = performance.now()
  const database = await client.query("SELECT * FROM pg_stat_database WHERE datname = $1", [TENDER_DATABASE])
  // The next transaction id (cluster-wide; reading it assigns none): its growth counts the
  // transactions that wrote, the commits that must reach the disk. xact_commit counts read-only ones too.
  const xid = await client.query<{ next: string }>("SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS next")
  const wal = await client.query("SELECT * FROM pg_stat_wal")
  const walIoBy: Record<string, Numbers> = {}
  let walIo: Numbers = {}
  if (hasWalIo) {
    const rows = await client.query("SELECT * FROM pg_stat_io WHERE object = 'wal'")
    for (const row of rows.rows as Array<Record<string, unknown>>) {
      const n = numbersOf(row)
      walIoBy[`${String(row.backend_type)}/${String(row.context)}`] = n
      walIo = Object.keys(walIo).length === 0 ? n : plus(walIo, n)
    }
  }
  const checkpointer = await client.query(`SELECT * FROM ${checkpointerView}`)
  return {
    at,
    database: { ...numbersOf(database.rows[0]), next_xid: Number(xid.rows[0].next) },
    wal: numbersOf(wal.rows[0]),
    walIo,
    walIoBy,
    checkpointer: numbersOf(checkpointer.rows[0])
  }
}

/** `b − a`, less the idle rate for the time between them: what the load itself did. */
const loadDelta = (a: Stats, b: Stats, idle: StatsRate) => {
  const seconds = (b.at - a.at) / 1000
  const of = (x: Numbers, y: Numbers, rate: Numbers) => plus(minus(x, y), rate, -seconds)
  const walIoBy: Record<string, Numbers> = {}
  for (const key of Object.keys(b.walIoBy)) walIoBy[key] = minus(b.walIoBy[key], a.walIoBy[key] ?? {})
  return {
    seconds,
    database: of(b.database, a.database, idle.database),
    wal: of(b.wal, a.wal, idle.wal),
    walIo: of(b.walIo, a.walIo, idle.walIo),
    walIoBy,
    checkpointer: minus(b.checkpointer, a.checkpointer)
  }
}
type StatsDelta = ReturnType<typeof loadDelta>

interface StatsRate {
  readonly database: Numbers
  readonly wal: Numbers
  readonly walIo: Numbers
}

const rateOf = (a: Stats, b: Stats): StatsRate => {
  const seconds = (b.at - a.at) / 1000
  const per = (x: Numbers, y: Numbers) => Object.fromEntries(Object.entries(minus(x, y)).map(([k, v]) => [k, v / seconds]))
  return { database: per(b.database, a.database), wal: per(b.wal, a.wal), walIo: per(b.walIo, a.walIo) }
}

/** What the server's WAL fsync counters are called on this version: pg_stat_io (18) or pg_stat_wal (≤ 17). */
const walFsyncs = (d: Pick<StatsDelta, "wal" | "walIo">) =>
  d.walIo.fsyncs !== undefined
    ? { fsyncs: d.walIo.fsyncs, fsyncMs: d.walIo.fsync_time, writes: d.walIo.writes, writeMs: d.walIo.write_time, from: "pg_stat_io (object = 'wal')" }
    : { fsyncs: d.wal.wal_sync, fsyncMs: d.wal.wal_sync_time, writes: d.wal.wal_write, writeMs: d.wal.wal_write_time, from: "pg_stat_wal" }

/** Busy = running a statement or holding a transaction open between statements. */
const BUSY = new Set(["active", "idle in transaction", "idle in transaction (aborted)"])

/** pg_stat_activity ten times a second: Tender's connections, and what its busy backends wait on. */
class ActivitySampler {
  samples = 0
  open = 0
  maxOpen = 0
  busy = 0
  active = 0
  idleInTransaction = 0
  readonly waits = new Map<string, number>()
  /** pid → backend_type, or "tender" for Tender's client backends. */
  readonly kinds = new Map<number, string>()
  private stopped = false
  private readonly client: pg.Client
  private readonly selfPid: number
  private readonly done: Promise<void>

  constructor(client: pg.Client, selfPid: number) {
    this.client = client
    this.selfPid = selfPid
    this.done = this.loop()
  }

  private async loop() {
    while (!this.stopped) {
      const t0 = performance.now()
      const { rows } = await this.client.query<{
        pid: number
        backend_type: string | null
        application_name: string | null
        state: string | null
        wait_event_type: string | null
        wait_event: string | null
      }>("SELECT pid, backend_type, application_name, state, wait_event_type, wait_event FROM pg_stat_activity")
      let open = 0
      for (const r of rows) {
        if (r.pid === this.selfPid) continue
        const tender = r.backend_type === "client backend" && r.application_name === "tender"
        this.kinds.set(r.pid, tender ? "tender" : r.backend_type ?? "unknown")
        if (!tender) continue
        open++
        if (r.state === null || !BUSY.has(r.state)) continue
        this.busy++
        if (r.state === "active") this.active++
        else this.idleInTransaction++
        const wait = r.state !== "active"
          ? "idle in transaction (waiting for Tender's next statement)"
          : r.wait_event_type === null
          ? "active, no wait event (on CPU or runnable)"
          : `active, ${r.wait_event_type}:${r.wait_event}`
        this.waits.set(wait, (this.waits.get(wait) ?? 0) + 1)
      }
      this.open += open
      this.maxOpen = Math.max(this.maxOpen, open)
      this.samples++
      await sleep(Math.max(0, 100 - (performance.now() - t0)))
    }
  }

  async stop() {
    this.stopped = true
    await this.done
    return this
  }

  avg(n: number) {
    return this.samples === 0 ? Number.NaN : n / this.samples
  }
}

// --- the fsync probe ------------------------------------------------------------------------

/** 8 kB overwrites + fdatasync of a preallocated file in `dir`: latencies in ms, sorted. */
const fsyncProbe = (dir: string, iterations: number) => {
  const file = path.join(dir, "fsync-probe")
  const block = Buffer.alloc(8192, 0x5a)
  const fd = openSync(file, "w")
  try {
    // Preallocated and synced first, as PostgreSQL fills a WAL segment before it writes into it:
    // the timed syncs then carry data, not the file's growth.
    for (let i = 0; i < iterations; i++) writeSync(fd, Buffer.alloc(8192), 0, 8192, i * 8192)
    fdatasyncSync(fd)
    const ms: Array<number> = []
    for (let i = 0; i < iterations; i++) {
      const t0 = performance.now()
      writeSync(fd, block, 0, 8192, i * 8192)
      fdatasyncSync(fd)
      ms.push(performance.now() - t0)
    }
    return Float64Array.from(ms).sort()
  } finally {
    closeSync(fd)
    rmSync(file, { force: true })
  }
}

/** The filesystem holding `dir` (the longest mount point that prefixes it). */
const filesystemOf = (dir: string) => {
  const mounts = readFileSync("/proc/mounts", "utf8").split("\n").map((l) => l.split(" ")).filter((f) => f.length > 2)
  const hit = mounts.filter(([, at]) => dir === at || dir.startsWith(at.endsWith("/") ? at : `${at}/`)).sort((a, b) => b[1].length - a[1].length)[0]
  return hit === undefined ? "unknown" : `${hit[2]} on ${hit[0]} (mounted at ${hit[1]})`
}

// --- one measurement ------------------------------------------------------------------------

interface Cpu {
  readonly seconds: number
  readonly tenderServersMs: number
  readonly tenderPrimaryMs: number
  /** The busiest single request-serving Tender process, in cores (its CPU s / window s). */
  readonly busiestServerCores: number
  readonly postgresMs: number
  readonly postgresBy: Record<string, number>
  readonly samplerBackendMs: number
  readonly loadGeneratorMs: number
  readonly machineBusyMs: number
  readonly stealMs: number
  readonly exited: number
}

/** Splits a window's CPU into the classes, given Tender's pid and the postmaster's. */
const classify = (w: CpuWindow, tenderPid: number, workers: number, postmaster: number, kinds: Map<number, string>, samplerPid: number): Cpu => {
  const postgresBy: Record<string, number> = {}
  let postgresMs = 0
  let samplerBackendMs = 0
  let tenderServersMs = 0
  let tenderPrimaryMs = 0
  let busiest = 0
  let exited = 0
  for (const pid of w.last.keys()) {
    const ms = w.ms(pid)
    const ours = pid === postmaster || pid === tenderPid || w.descendsFrom(pid, postmaster) || w.descendsFrom(pid, tenderPid)
    if (ours && w.gone.has(pid)) exited++
    if (pid === postmaster || w.descendsFrom(pid, postmaster)) {
      if (pid === samplerPid) {
        samplerBackendMs += ms
        continue
      }
      const kind = pid === postmaster ? "postmaster" : kinds.get(pid) ?? "other (not seen in pg_stat_activity)"
      postgresBy[kind] = (postgresBy[kind] ?? 0) + ms
      postgresMs += ms
    } else if (pid === tenderPid || w.descendsFrom(pid, tenderPid)) {
      // Under --workers N > 1 the serve process is the cluster's primary (locks, rate limits); its
      // children serve. With one worker it serves itself.
      if (workers > 1 && pid === tenderPid) tenderPrimaryMs += ms
      else {
        tenderServersMs += ms
        busiest = Math.max(busiest, ms)
      }
    }
  }
  const tick = 1000 / CLK_TCK
  return {
    seconds: w.seconds,
    tenderServersMs,
    tenderPrimaryMs,
    busiestServerCores: busiest / 1000 / w.seconds,
    postgresMs,
    postgresBy,
    samplerBackendMs,
    loadGeneratorMs: w.selfMs,
    machineBusyMs: w.machine.busy * tick,
    stealMs: w.machine.steal * tick,
    exited
  }
}

interface Result {
  readonly scenario: string
  readonly workers: number
  readonly m: Measurement
  readonly cpu: Cpu
  readonly idleCpu: Cpu
  readonly stats: StatsDelta
  /** PostgreSQL's counters per second while Tender idled, subtracted from `stats`. */
  readonly idle: StatsRate
  readonly activity: ActivitySampler
}

// --- the figures ----------------------------------------------------------------------------

interface Settings {
  readonly [name: string]: string
}

/** Everything per operation, computed once for the report, the summary and the model. */
const figuresOf = (r: Result) => {
  const ops = r.m.ok
  const per = (x: number) => x / ops
  const d = r.stats
  const f = walFsyncs(d)
  const tenderMs = r.cpu.tenderServersMs + r.cpu.tenderPrimaryMs
  const idleTenderMsPerS = (r.idleCpu.tenderServersMs + r.idleCpu.tenderPrimaryMs) / r.idleCpu.seconds
  const idlePostgresMsPerS = r.idleCpu.postgresMs / r.idleCpu.seconds
  const ours = tenderMs + r.cpu.postgresMs + r.cpu.samplerBackendMs + r.cpu.loadGeneratorMs
  const throughput = ops / r.m.seconds
  const busy = r.activity.avg(r.activity.busy)
  return {
    ops,
    throughput,
    failed: r.m.non2xx + r.m.wrongBody + r.m.errors,
    tenderMs,
    tender: per(tenderMs),
    servers: per(r.cpu.tenderServersMs),
    primary: per(r.cpu.tenderPrimaryMs),
    postgres: per(r.cpu.postgresMs),
    loadGenerator: per(r.cpu.loadGeneratorMs),
    // What the load added: the window's CPU less what the same processes use idle (timers, the
    // background workers' polls) for as long. The model uses these; the fixed part does not scale with load.
    idleTenderMsPerS,
    idlePostgresMsPerS,
    tenderMarginal: per(tenderMs - idleTenderMsPerS * r.cpu.seconds),
    postgresMarginal: per(r.cpu.postgresMs - idlePostgresMsPerS * r.cpu.seconds),
    machineCores: r.cpu.machineBusyMs / 1000 / r.cpu.seconds,
    othersCores: Math.max(0, r.cpu.machineBusyMs - ours) / 1000 / r.cpu.seconds,
    stealCores: r.cpu.stealMs / 1000 / r.cpu.seconds,
    walBytes: per(d.wal.wal_bytes),
    walRecords: per(d.wal.wal_records),
    walFpi: per(d.wal.wal_fpi),
    walWrites: per(f.writes),
    fsyncs: per(f.fsyncs),
    fsyncSource: f.from,
    fsyncMsInside: f.fsyncs > 0 && Number.isFinite(f.fsyncMs) ? f.fsyncMs / f.fsyncs : Number.NaN,
    writeMsInside: f.writes > 0 && Number.isFinite(f.writeMs) ? f.writeMs / f.writes : Number.NaN,
    fsyncSeconds: f.fsyncMs / 1000,
    commits: per(d.database.xact_commit),
    /** Transactions that wrote (xids assigned): the commits that wait for the WAL fsync. */
    durableCommits: per(d.database.next_xid),
    /** Durable commits per WAL fsync: the group commit PostgreSQL already does. */
    group: d.database.next_xid / f.fsyncs,
    inserted: per(d.database.tup_inserted),
    updated: per(d.database.tup_updated),
    deleted: per(d.database.tup_deleted),
    busy,
    active: r.activity.avg(r.activity.active),
    idleInTransaction: r.activity.avg(r.activity.idleInTransaction),
    open: r.activity.avg(r.activity.open),
    /** Connection-seconds held per operation (Little's law: busy connections ÷ throughput). */
    holdS: busy / throughput
  }
}

const report = (r: Result) => {
  const x = figuresOf(r)
  const row = (what: string, figure: string, total = "") => `| ${what} | ${figure} | ${total} |`
  const seconds = (ms: number) => `${fixed(ms / 1000, 2)} s`
  const lines = [
    `\n### ${r.scenario}, serve --workers ${r.workers}`,
    "",
    `${x.ops} operations in ${fixed(r.m.seconds, 2)} s: ${fixed(x.throughput, 1)} ops/s, p50 ${fixed(percentile(r.m.latencies, 50), 1)} ms, p99 ${
      fixed(percentile(r.m.latencies, 99), 1)
    } ms (closed loop, ${CONNECTIONS} in flight); failed: ${x.failed}`,
    "",
    "| per operation | figure | window total |",
    "|---|---:|---:|",
    row("CPU ms, Tender (all its processes)", fixed(x.tender, 2), seconds(x.tenderMs)),
    ...(r.workers > 1
      ? [
        row("… the serving children", fixed(x.servers, 2), seconds(r.cpu.tenderServersMs)),
        row("… the primary (the children's shared locks and rate limits)", fixed(x.primary, 3), seconds(r.cpu.tenderPrimaryMs))
      ]
      : []),
    row("CPU ms, PostgreSQL (every process but the bench's sampler)", fixed(x.postgres, 2), seconds(r.cpu.postgresMs)),
    ...Object.entries(r.cpu.postgresBy).sort((a, b) => b[1] - a[1]).filter(([, ms]) => ms > 0).map(([kind, ms]) =>
      row(`… ${kind === "tender" ? "backends of Tender's connections" : kind}`, fixed(ms / x.ops, 3), seconds(ms))
    ),
    row("CPU ms, load generator (this process: clients, samplers)", fixed(x.loadGenerator, 2), seconds(r.cpu.loadGeneratorMs)),
    row("CPU ms, the sampler's own PostgreSQL backend (not counted above)", fixed(r.cpu.samplerBackendMs / x.ops, 3), seconds(r.cpu.samplerBackendMs)),
    row("CPU ms the load added (less the idle rate), Tender / PostgreSQL", `${fixed(x.tenderMarginal, 2)} / ${fixed(x.postgresMarginal, 2)}`),
    row("WAL bytes", fixed(x.walBytes, 0), `${fixed((x.walBytes * x.ops) / 1024 / 1024, 2)} MiB`),
    row("WAL records (full-page images)", `${fixed(x.walRecords, 1)} (${fixed(x.walFpi, 2)})`),
    row("WAL writes", fixed(x.walWrites, 2), fixed(x.walWrites * x.ops, 0)),
    row("WAL fsyncs", fixed(x.fsyncs, 2), fixed(x.fsyncs * x.ops, 0)),
    row("commits (xact_commit, read-only ones included)", fixed(x.commits, 2), fixed(x.commits * x.ops, 0)),
    row("commits that wrote (transaction ids assigned)", fixed(x.durableCommits, 2), fixed(x.durableCommits * x.ops, 0)),
    row("commits that wrote, per WAL fsync", fixed(x.group, 2)),
    row("rows inserted / updated / deleted", `${fixed(x.inserted, 1)} / ${fixed(x.updated, 1)} / ${fixed(x.deleted, 1)}`),
    row(
      "Tender connections busy, on average (active + idle in transaction)",
      `${fixed(x.busy, 2)} (${fixed(x.active, 2)} + ${fixed(x.idleInTransaction, 2)})`,
      `of ${fixed(x.open, 1)} open on average, ${r.activity.maxOpen} at most`
    ),
    row("connection-ms held (busy connections ÷ ops/s)", fixed(x.holdS * 1000, 2)),
    "",
    `WAL fsync time inside PostgreSQL (${x.fsyncSource}): ${Number.isFinite(x.fsyncMsInside) ? `${fixed(x.fsyncMsInside, 3)} ms per fsync, ${fixed(x.fsyncSeconds, 2)} s in all` : "not timed"}; ` +
    `WAL write time ${Number.isFinite(x.writeMsInside) ? `${fixed(x.writeMsInside, 3)} ms per write` : "not timed"}.`,
    `Who wrote and synced the WAL: ${
      Object.entries(r.stats.walIoBy).filter(([, n]) => (n.writes ?? 0) + (n.fsyncs ?? 0) > 0).map(([who, n]) => `${who} ${n.writes ?? 0} writes, ${n.fsyncs ?? 0} fsyncs`)
        .join("; ") || "(no pg_stat_io WAL rows)"
    }.`,
    `Checkpointer in the window: ${
      Object.entries(r.stats.checkpointer).filter(([k, v]) => v !== 0 && /^num_|^checkpoints_|buffers/.test(k)).map(([k, v]) => `${k} ${v}`).join(", ") || "nothing"
    }.`,
    `The machine: ${fixed(x.machineCores, 2)} cores busy on average (steal ${fixed(x.stealCores, 2)}), ${fixed(x.othersCores, 2)} of them by processes outside this run; ` +
    `the busiest Tender server process used ${fixed(r.cpu.busiestServerCores, 2)} cores.` +
    (r.cpu.exited > 0 ? ` ${r.cpu.exited} processes exited inside the window (their last 250 ms are not counted).` : ""),
    `Idle, before the load: Tender ${fixed(x.idleTenderMsPerS, 1)} CPU ms/s, PostgreSQL ${fixed(x.idlePostgresMsPerS, 1)} CPU ms/s; ` +
    `per second ${fixed(r.idle.database.xact_commit, 1)} commits, ${fixed(r.idle.database.next_xid, 2)} that wrote, ${fixed(walFsyncs(r.idle).fsyncs, 2)} WAL fsyncs, ` +
    `${fixed(r.idle.wal.wal_bytes, 0)} WAL bytes (PostgreSQL's counters above are net of these, in proportion to time).`,
    "",
    "What Tender's busy connections were doing (share of samples):",
    ...[...r.activity.waits].sort((a, b) => b[1] - a[1]).map(([wait, n]) => `  ${fixed((100 * n) / r.activity.busy, 1).padStart(5)} %  ${wait}`)
  ]
  return lines.join("\n")
}

/**
 * The model: a machine of C cores running Tender and PostgreSQL (the clients elsewhere), with what
 * one operation cost here. Every input and step is printed.
 */
const model = (r: Result, settings: Settings, probeMedianMs: number) => {
  const x = figuresOf(r)
  const cT = x.tenderMarginal
  const cP = x.postgresMarginal
  // Per serving process: what is not the primary's, in the same proportion as measured.
  const cS = cT * (x.tender === 0 ? 1 : x.servers / x.tender)
  const maxConnections = Number(settings.max_connections)
  const reserved = Number(settings.superuser_reserved_connections ?? 0) + Number(settings.reserved_connections ?? 0)
  const available = maxConnections - reserved
  const maxProcesses = Math.floor(available / CONNECTIONS_PER_PROCESS)
  const fsyncCapacity = 1000 / probeMedianMs
  const shareT = cT / (cT + cP)
  const lines = [
    `\n### The model, from ${r.scenario} under serve --workers ${r.workers}`,
    "",
    "Inputs, measured above:",
    `  CPU per op that the load added: Tender cT = ${fixed(cT, 2)} ms, PostgreSQL cP = ${fixed(cP, 2)} ms` +
    (r.workers > 1 ? ` (of Tender's, the primary: ${fixed(x.primary, 3)} ms)` : "") +
    `; the load generator's ${fixed(x.loadGenerator, 2)} ms is left out (clients run elsewhere)`,
    `  durable commits per op W = ${fixed(x.durableCommits, 2)}; WAL fsyncs per op ${fixed(x.fsyncs, 2)}, so ${fixed(x.group, 2)} commits per fsync (PostgreSQL's own group commit at this load)`,
    `  one WAL fsync: ${fixed(probeMedianMs, 3)} ms (probe median; inside PostgreSQL ${fixed(x.fsyncMsInside, 3)} ms) → at most ${fixed(fsyncCapacity, 0)} fsyncs/s, one after another`,
    `  busy connections ${fixed(x.busy, 2)} at ${fixed(x.throughput, 1)} ops/s → an op holds a connection ${fixed(x.holdS * 1000, 2)} ms (Little's law; ` +
    `${fixed((100 * x.idleInTransaction) / x.busy, 0)} % of it idle in a transaction, waiting for Tender; the commit's fsync wait alone is ≥ W × fsync = ${
      fixed(x.durableCommits * probeMedianMs, 2)
    } ms)`,
    `  connections per Tender process at most ${CONNECTIONS_PER_PROCESS} (request pool ${REQUEST_POOL} + dispatcher ${DISPATCHER_POOL_SIZE} + listeners ${LISTENER_CONNECTIONS}; ` +
    `seen open here: ${fixed(r.activity.maxOpen / r.workers, 1)} per process at most); max_connections ${maxConnections} − ${reserved} reserved = ${available}, ` +
    `room for ${maxProcesses} processes`,
    `  synchronous_commit ${settings.synchronous_commit}, commit_delay ${settings.commit_delay} µs (commit_siblings ${settings.commit_siblings}), wal_sync_method ${settings.wal_sync_method}`,
    "",
    `Assumptions: a Tender process uses at most one core (one event loop; the busiest here used ${fixed(r.cpu.busiestServerCores, 2)} on a full machine), so Tender on T cores ` +
    `is T processes; the cores split between the tiers in proportion to demand (Tender's share cT / (cT + cP) = ${fixed(shareT, 3)}), in whole cores, ` +
    "at least one each; the CPU per op and the connection hold time stay as measured; the fsync costs what the probe says. " +
    "PostgreSQL groups the commits that wait while an fsync runs, so the fsync rate is a throughput limit only once a group would need " +
    "more commits than the request pools' connections can have waiting at once.",
    "",
    "| cores C | Tender / PostgreSQL cores | Tender ceiling T×1000/cT | PostgreSQL ceiling P×1000/cP | CPU ceiling (saturates first) | " +
    `Tender processes × ${CONNECTIONS_PER_PROCESS} connections (of ${available}) | pool ceiling N×${REQUEST_POOL}/hold | ` +
    `fsyncs/s at the CPU ceiling, today's grouping (of ${fixed(fsyncCapacity, 0)}) | commits per fsync needed | WAL ceiling, a group of N×${REQUEST_POOL} ` +
    `(at PostgreSQL's own ${fixed(x.fsyncMsInside, 2)} ms per fsync) | ` +
    "primary ceiling | ceiling: bottleneck (the next limit) |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  ]
  const conclusions: Array<string> = []
  for (const C of MODEL_CORES) {
    const T = Math.min(C - 1, Math.max(1, Math.round(C * shareT)))
    const P = C - T
    const xT = (T * 1000) / cT
    const xP = (P * 1000) / cP
    const xCpu = Math.min(xT, xP)
    const first = xT <= xP ? "Tender" : "PostgreSQL"
    const N = T
    const xPool = (N * REQUEST_POOL) / x.holdS
    const fsyncsNeeded = xCpu * x.fsyncs
    const groupNeeded = (xCpu * x.durableCommits) / fsyncCapacity
    const xWal = (fsyncCapacity * N * REQUEST_POOL) / x.durableCommits
    const xWalInside = ((1000 / x.fsyncMsInside) * N * REQUEST_POOL) / x.durableCommits
    // Without REDIS_URL the primary brokers every child's locks and rate limits on one event loop.
    const xPrimary = r.workers > 1 && x.primary > 0 ? 1000 / x.primary : Number.POSITIVE_INFINITY
    const xConnections = N > maxProcesses ? (maxProcesses * 1000) / cS : Number.POSITIVE_INFINITY
    const limits: Array<readonly [string, number]> = [
      [`CPU, ${first} first`, xCpu],
      ["max_connections", xConnections],
      ["Tender's request pools (hold time as here)", xPool],
      ["WAL fsync", xWal],
      ["the cluster primary", xPrimary]
    ]
    // The lowest limit binds; the one after it is where the next bottleneck lies once it is lifted.
    const [[bottleneck, ceiling], [next, nextCeiling]] = [...limits].sort((a, b) => a[1] - b[1])
    const over = (flag: boolean) => (flag ? " **over**" : "")
    lines.push(
      `| ${C} | ${T} / ${P} | ${fixed(xT, 0)} | ${fixed(xP, 0)} | ${fixed(xCpu, 0)} (${first}) | ${N} × ${CONNECTIONS_PER_PROCESS} = ${N * CONNECTIONS_PER_PROCESS}${
        over(N > maxProcesses)
      } | ${fixed(xPool, 0)} | ${fixed(fsyncsNeeded, 0)}${over(fsyncsNeeded > fsyncCapacity)} | ${fixed(groupNeeded, 1)} | ${fixed(xWal, 0)} (${fixed(xWalInside, 0)}) | ${
        Number.isFinite(xPrimary) ? fixed(xPrimary, 0) : "–"
      } | ${fixed(ceiling, 0)} ops/s: ${bottleneck} (then ${fixed(nextCeiling, 0)}: ${next}) |`
    )
    conclusions.push(`C = ${C}: ${fixed(ceiling, 0)} ops/s, ${bottleneck}, then ${fixed(nextCeiling, 0)}, ${next}`)
  }
  lines.push(
    "",
    "Arithmetic: fsyncs/s at the CPU ceiling = CPU ceiling × fsyncs per op; commits per fsync needed = CPU ceiling × W ÷ " +
      `${fixed(fsyncCapacity, 0)}; WAL ceiling = ${fixed(fsyncCapacity, 0)} × N × ${REQUEST_POOL} ÷ W; pool ceiling = N × ${REQUEST_POOL} ÷ ${fixed(x.holdS * 1000, 2)} ms; ` +
      (Number.isFinite(1000 / x.primary) && r.workers > 1
        ? `primary ceiling = 1000 ÷ ${fixed(x.primary, 3)} ms`
        : "primary: not measured (one worker)") +
      `; max_connections ceiling (when N > ${maxProcesses}) = ${maxProcesses} processes × 1000 ÷ ${fixed(cS, 2)} ms.`,
    `  ${conclusions.join("; ")}`
  )
  return lines.join("\n")
}

// --- the run --------------------------------------------------------------------------------

const run = Harness.makeRun({
  // Per worker count: start-up, warm-ups, the idle pad, two loads with their pads; generously.
  budgetMs: (WORKERS.length * (240 + 2 * WARMUP + 4 * PAD + 2 * DURATION) + 120) * 1000,
  keepData: options["keep-data"]
})

/** The postmaster's pid, from the first line of <dataDir>/pg/postmaster.pid. */
const postmasterPid = () => {
  const file = path.join(run.dataDir, "pg", "postmaster.pid")
  if (!existsSync(file)) throw new Error(`no ${file}: is the embedded PostgreSQL running?`)
  return Number(readFileSync(file, "utf8").split("\n")[0])
}

const SETTINGS = [
  "server_version",
  "max_connections",
  "superuser_reserved_connections",
  "reserved_connections",
  "synchronous_commit",
  "commit_delay",
  "commit_siblings",
  "wal_sync_method",
  "fsync",
  "full_page_writes",
  "wal_buffers",
  "wal_writer_delay",
  "shared_buffers",
  "max_wal_size",
  "checkpoint_timeout",
  "io_method",
  "track_wal_io_timing"
]

const measureWorkers = async (workers: number, account: Harness.Account | undefined) => {
  const { child, origin } = await Harness.startTender(run, { env: { TENDER_WORKERS: String(workers) } })
  const tenderPid = child.process.pid!
  const own = account ?? await run.createAccount("bench-cores")
  const target: Target = Harness.targetOf(origin, own)
  const card = await Harness.vaultCard(target)
  // The sampler connects to the `postgres` database, so its own queries' commits land in that
  // database's row of pg_stat_database, not in Tender's (the other views are cluster-wide).
  const info = Harness.databaseInfo(run)
  if (info.database !== TENDER_DATABASE) throw new Error(`Tender's database is ${info.database}, not ${TENDER_DATABASE}`)
  const client = new pg.Client({ ...info, database: "postgres", application_name: SAMPLER_APP })
  client.on("error", () => {}) // the server stops under it at the end
  await client.connect()
  const results: Array<Result> = []
  try {
    // WAL write and fsync times are counted only with track_wal_io_timing (a run-time setting:
    // ALTER SYSTEM + reload, no restart; the data dir is the bench's own).
    await client.query("ALTER SYSTEM SET track_wal_io_timing = on")
    await client.query("SELECT pg_reload_conf()")
    await sleep(200)
    const { rows: settingRows } = await client.query<{ name: string; setting: string }>("SELECT name, setting FROM pg_settings WHERE name = ANY($1)", [SETTINGS])
    const settings: Settings = Object.fromEntries(settingRows.map((r) => [r.name, r.setting]))
    const { rows: walIoRows } = await client.query<{ n: string }>(
      "SELECT count(*) AS n FROM information_schema.columns WHERE table_name = 'pg_stat_io' AND column_name = 'object'"
    )
    const hasWalIo = Number(walIoRows[0].n) > 0 &&
      Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_io WHERE object = 'wal'")).rows[0].n) > 0
    const { rows: views } = await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_views WHERE viewname = 'pg_stat_checkpointer'")
    const checkpointerView = Number(views[0].n) > 0 ? "pg_stat_checkpointer" : "pg_stat_bgwriter"
    const samplerPid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0].pid
    const postmaster = postmasterPid()
    console.log(`serve --workers ${workers}: Tender pid ${tenderPid}, postmaster pid ${postmaster}; PostgreSQL ${settings.server_version}, ${
      SETTINGS.slice(1).map((s) => `${s}=${settings[s] ?? "–"}`).join(" ")
    }`)

    const scenarios = [
      { scenario: "charge", load: (seconds: number) => chargeLoop(target, card, { connections: CONNECTIONS, seconds }) },
      { scenario: "authorize+capture", load: (seconds: number) => authorizeCaptureLoop(target, card, { connections: CONNECTIONS, seconds }) }
    ] as const
    // Warm-ups (JIT, pools, caches), not measured.
    if (WARMUP > 0) for (const s of scenarios) await s.load(WARMUP)

    // The idle rate: one quiet pad, between two readings each taken after a quiet pad.
    await sleep(PAD * 1000)
    const idleStart = await statsOf(client, hasWalIo, checkpointerView)
    const idleActivity = new ActivitySampler(client, samplerPid)
    const idleWindow = new CpuWindow()
    await sleep(PAD * 1000)
    idleWindow.end()
    await idleActivity.stop()
    let before = await statsOf(client, hasWalIo, checkpointerView)
    const idle = rateOf(idleStart, before)
    const idleCpu = classify(idleWindow, tenderPid, workers, postmaster, idleActivity.kinds, samplerPid)

    for (const s of scenarios) {
      const activity = new ActivitySampler(client, samplerPid)
      const window = new CpuWindow()
      const m = await s.load(DURATION)
      window.end()
      await activity.stop()
      // Every backend's statistics flushed (idle ones within 10 s), then read.
      await sleep(PAD * 1000)
      const after = await statsOf(client, hasWalIo, checkpointerView)
      const cpu = classify(window, tenderPid, workers, postmaster, activity.kinds, samplerPid)
      const result: Result = { scenario: s.scenario, workers, m, cpu, idleCpu, stats: loadDelta(before, after, idle), idle, activity }
      results.push(result)
      before = after
      console.log(report(result))
    }
    return { results, settings, account: own }
  } finally {
    await client.end().catch(() => {})
    // One Tender at a time: its PostgreSQL stops with it, and the next count starts it again.
    await Harness.stop(child, 60_000)
  }
}

const main = async (): Promise<boolean> => {
  console.log(Harness.machine())
  console.log(`run: serve --workers ${WORKERS.join(", ")}; ${DURATION} s per scenario, ${WARMUP} s warm-up, ${CONNECTIONS} in flight, ${PAD} s statistics pads`)
  console.log(`data dir: ${run.dataDir}, ${filesystemOf(run.dataDir)}`)

  const probe = fsyncProbe(run.dataDir, FSYNC_ITERATIONS)
  const probeMedian = percentile(probe, 50)
  console.log(
    `fsync probe (${FSYNC_ITERATIONS} × 8 kB overwrite + fdatasync in the data dir): median ${fixed(probeMedian, 3)} ms, p90 ${fixed(percentile(probe, 90), 3)} ms, p99 ${
      fixed(percentile(probe, 99), 3)
    } ms, max ${fixed(probe[probe.length - 1], 3)} ms`
  )

  const all: Array<{ results: Array<Result>; settings: Settings }> = []
  let account: Harness.Account | undefined
  for (const workers of WORKERS) {
    const measured = await measureWorkers(workers, account)
    account = measured.account
    all.push(measured)
  }

  console.log("\n## Summary\n")
  console.log(Harness.machine())
  console.log(
    "\n| scenario | workers | ops/s | Tender CPU ms/op | PostgreSQL CPU ms/op | load generator CPU ms/op | WAL bytes/op | WAL fsyncs/op | commits/op (that wrote) | " +
      "commits that wrote per fsync | busy connections | machine cores busy (others) |"
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const { results } of all) {
    for (const r of results) {
      const x = figuresOf(r)
      console.log(
        `| ${r.scenario} | ${r.workers} | ${fixed(x.throughput, 1)} | ${fixed(x.tender, 2)} | ${fixed(x.postgres, 2)} | ${fixed(x.loadGenerator, 2)} | ${fixed(x.walBytes, 0)} | ${
          fixed(x.fsyncs, 2)
        } | ${fixed(x.commits, 2)} (${fixed(x.durableCommits, 2)}) | ${fixed(x.group, 2)} | ${fixed(x.busy, 2)} | ${fixed(x.machineCores, 2)} (${fixed(x.othersCores, 2)}) |`
      )
    }
  }

  console.log("\n## The model: a machine of C cores")
  for (const { results, settings } of all) for (const r of results) console.log(model(r, settings, probeMedian))

  const failed = all.flatMap(({ results }) => results).filter((r) => r.m.non2xx + r.m.wrongBody + r.m.errors > 0 || r.m.ok === 0)
  for (const r of failed) {
    console.error(`\n${r.scenario} (--workers ${r.workers}): ${r.m.non2xx + r.m.wrongBody + r.m.errors} failed, e.g.:`)
    for (const s of r.m.samples) console.error(`  ${s}`)
  }
  if (failed.length > 0) Harness.invalidBanner("failed operations")
  else console.log("\nno errors: every operation answered 2xx with the expected status.")
  return failed.length === 0
}

let exitCode = 1
try {
  exitCode = (await main()) ? 0 : 1
} catch (error) {
  console.error(`\n!!! the bench failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
}
await run.finish(exitCode)
