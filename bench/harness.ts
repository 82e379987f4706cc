/**
 * What the benches share: `tender serve` started over a fresh temporary data dir (so it starts its
 * own embedded PostgreSQL) on a free loopback port, accounts made with the CLI, a vaulted test card,
 * child processes stopped with SIGTERM (to node itself, never to a wrapper such as npx), a
 * PostgreSQL left behind stopped through its postmaster.pid, a watchdog, Ctrl-C handling, and the
 * data dir deleted at the end.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { signedHeaders, type Target } from "./load.ts"

export const ROOT = path.resolve(import.meta.dirname, "..")
export const CLI = path.join(ROOT, "packages/cli/bin/tender.js")
export const LOOPBACK = "127.0.0.1"

/** The benches run TypeScript directly: Node 22.18 or later (the pinned one, through npm/npx). */
export const requireNode = (script: string) => {
  const [major, minor] = process.versions.node.split(".").map(Number)
  if (major < 22 || (major === 22 && minor < 18)) {
    console.error(`the bench needs Node 22.18 or later, this is ${process.version}: run it as \`npm run ${script}\`.`)
    process.exit(2)
  }
}

/** A number option that must be positive; exits with a message otherwise. */
export const positive = (name: string, value: string) => {
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`--${name} must be a positive number, got ${value}`)
    process.exit(2)
  }
  return n
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const within = <A>(promise: Promise<A>, ms: number): Promise<A | "timeout"> =>
  Promise.race([promise, sleep(ms).then(() => "timeout" as const)])

export const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "–")

// --- child processes ------------------------------------------------------------------------

/** The last lines a child printed, to explain a failure. */
const tail = (lines: Array<string>) => (chunk: Buffer) => {
  lines.push(...chunk.toString("utf8").split("\n").filter((l) => l.trim() !== ""))
  if (lines.length > 40) lines.splice(0, lines.length - 40)
}

export interface Child {
  readonly name: string
  readonly process: ChildProcess
  readonly output: Array<string>
  readonly exited: Promise<number | null>
}

/** Runs `node <args>` with the pinned Node (process.execPath: signals go to node itself). */
export const start = (name: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Child => {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] })
  const output: Array<string> = []
  child.stdout.on("data", tail(output))
  child.stderr.on("data", tail(output))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { name, process: child, output, exited }
}

/** SIGTERM, then SIGKILL if it has not exited in `graceMs`. */
export const stop = async (child: Child, graceMs: number) => {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return
  child.process.kill("SIGTERM")
  if ((await within(child.exited, graceMs)) === "timeout") {
    console.error(`${child.name} did not exit ${graceMs / 1000} s after SIGTERM: killing it`)
    child.process.kill("SIGKILL")
    await within(child.exited, 5_000)
  }
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * The embedded PostgreSQL outlives a Tender that was SIGKILLed: stop it by its postmaster.pid
 * (SIGINT is PostgreSQL's fast shutdown), so the run never leaves a server behind.
 */
const stopOrphanPostgres = async (dataDir: string) => {
  const pidFile = path.join(dataDir, "pg", "postmaster.pid")
  if (!existsSync(pidFile)) return
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0])
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return
  console.error(`PostgreSQL (pid ${pid}) is still running after tender exited: stopping it`)
  process.kill(pid, "SIGINT")
  for (let i = 0; i < 100 && isAlive(pid); i++) await sleep(200)
  if (isAlive(pid)) process.kill(pid, "SIGKILL")
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, LOOPBACK, () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** Polls until the server answers any HTTP response, the child exits, or `ms` pass. */
const waitForHttp = async (child: Child, origin: string, ms: number) => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null) break
    const answered = await fetch(`${origin}/v1/openapi.json`, { signal: AbortSignal.timeout(2_000) }).then(
      () => true,
      () => false
    )
    if (answered) return
    await sleep(250)
  }
  throw new Error(`${child.name} did not start listening on ${origin}:\n${child.output.join("\n")}`)
}

// --- the run --------------------------------------------------------------------------------

export interface Account {
  readonly account_id: string
  readonly secret_key: string
  readonly signing_secret: string
}

export interface Run {
  readonly dataDir: string
  /** The shell's environment without what would point Tender elsewhere than its own data dir. */
  readonly env: NodeJS.ProcessEnv
  readonly children: Array<Child>
  /** Stops the children (last started first) and Tender's PostgreSQL, deletes the data dir; once. */
  cleanup(): Promise<void>
  /** Cleans up, clears the watchdog and exits with `code`. */
  finish(code: number): Promise<never>
  /** `tender <args> --json --data-dir <dataDir>`, parsed. */
  cli(args: ReadonlyArray<string>): Promise<unknown>
  createAccount(name: string): Promise<Account>
}

/**
 * Makes the temporary data dir and arms the watchdog (the whole run must end within `budgetMs`) and
 * the SIGINT/SIGTERM handlers; `afterStop` runs once the children have exited, before the data dir
 * goes (the payments bench reads its CPU profiles there).
 */
export const makeRun = (options: {
  readonly budgetMs: number
  readonly keepData: boolean
  readonly afterStop?: (run: Run) => void | Promise<void>
}): Run => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "tender-bench-"))
  const children: Array<Child> = []
  const env: NodeJS.ProcessEnv = { ...process.env }
  // The bench's own embedded PostgreSQL, in-process locks/rate limits and an instant sandbox provider
  // (the payments baselines call no provider), whatever the shell has.
  for (const name of ["DATABASE_URL", "TENDER_READ_DATABASE_URL", "REDIS_URL", "TENDER_DATA_DIR", "PORT", "TENDER_VAULT_KEY", "TENDER_SANDBOX_LATENCY_MS"]) {
    delete env[name]
  }
  let cleaning: Promise<void> | undefined
  let watchdog: NodeJS.Timeout | undefined

  const cli = (args: ReadonlyArray<string>) =>
    new Promise<unknown>((resolve, reject) => {
      execFile(process.execPath, [CLI, ...args, "--json", "--data-dir", dataDir], { cwd: ROOT, env, timeout: 120_000 }, (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`tender ${args.join(" ")} failed: ${stderr || error.message}`))
        else resolve(JSON.parse(stdout))
      })
    })

  const run: Run = {
    dataDir,
    env,
    children,
    cli,
    createAccount: async (name) => (await cli(["accounts", "create", "--name", name])) as Account,
    cleanup: () =>
      cleaning ??= (async () => {
        // Last started first: the payments baselines hold pool connections to Tender's PostgreSQL.
        for (const child of [...children].reverse()) await stop(child, child.name === "tender" ? 60_000 : 10_000)
        // Before the orphan check: a script's own servers (topology --replica) stop there, in order.
        await options.afterStop?.(run)
        await stopOrphanPostgres(dataDir)
        if (!options.keepData) rmSync(dataDir, { recursive: true, force: true })
        else console.log(`data dir kept: ${dataDir}`)
      })(),
    finish: async (code) => {
      await run.cleanup()
      clearTimeout(watchdog)
      process.exit(code)
    }
  }

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping the servers`)
      void run.cleanup().finally(() => process.exit(130))
    })
  }
  // Whatever happens, the run ends.
  watchdog = setTimeout(() => {
    console.error(`\nthe bench ran past its ${options.budgetMs / 1000} s budget: stopping the servers`)
    void run.cleanup().finally(() => process.exit(1))
  }, options.budgetMs)
  watchdog.unref()
  return run
}

/**
 * `tender serve` on a free loopback port over the run's data dir, with the default 100/s account
 * rate limit out of the way; resolves once it answers HTTP.
 */
export const startTender = async (
  run: Run,
  options: { readonly nodeArgs?: ReadonlyArray<string>; readonly env?: NodeJS.ProcessEnv; readonly args?: ReadonlyArray<string> } = {}
) => {
  const port = await freePort()
  const origin = `http://${LOOPBACK}:${port}`
  const child = start(
    "tender",
    [...(options.nodeArgs ?? []), CLI, "serve", "--port", String(port), "--host", LOOPBACK, "--data-dir", run.dataDir, ...(options.args ?? [])],
    // One process unless the bench asks for more (serve's own default is every core).
    { ...run.env, TENDER_WORKERS: "1", TENDER_RATE_LIMIT_PER_SECOND: "100000", TENDER_RATE_LIMIT_BURST: "100000", ...options.env }
  )
  run.children.push(child)
  const t0 = Date.now()
  await waitForHttp(child, origin, 180_000)
  console.log(`tender serve listening on ${origin} (${((Date.now() - t0) / 1000).toFixed(1)} s to start)`)
  return { child, origin }
}

export const targetOf = (origin: string, account: Account): Target => ({
  origin,
  secretKey: account.secret_key,
  signingSecret: account.signing_secret
})

/** Vaults 4242 4242 4242 4242 through `POST /v1/test_helpers/card_tokens`; the card token. */
export const vaultCard = async (target: Target): Promise<string> => {
  const path = "/v1/test_helpers/card_tokens"
  const body = JSON.stringify({ number: "4242424242424242", exp_month: 12, exp_year: new Date().getFullYear() + 3, cvc: "123" })
  const response = await fetch(`${target.origin}${path}`, { method: "POST", headers: signedHeaders(target, path, body), body })
  const text = await response.text()
  if (!response.ok) throw new Error(`card tokenization failed: ${response.status} ${text}`)
  return (JSON.parse(text) as { token: string }).token
}

/** Where Tender's embedded PostgreSQL listens (from `<dataDir>/pg.json`). */
export const databaseInfo = (run: Run) => {
  const info = JSON.parse(readFileSync(path.join(run.dataDir, "pg.json"), "utf8")) as { port: number; password: string }
  return { host: LOOPBACK, port: info.port, user: "postgres", password: info.password, database: "tender" }
}

/** A client of Tender's PostgreSQL, for the checks after a run. */
export const database = (run: Run) => new pg.Client(databaseInfo(run))

/** Date, CPUs, memory, load average and Node: what the figures were measured on. */
export const machine = () => {
  const cpus = os.cpus()
  const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`
  return [
    `date: ${new Date().toISOString()}`,
    `machine: ${os.availableParallelism()} CPUs (nproc), ${cpus[0]?.model ?? "unknown CPU"}, ${gib(os.totalmem())} RAM (${gib(os.freemem())} free), load average ${
      os.loadavg().map((l) => l.toFixed(2)).join(" ")
    }`,
    `node: ${process.version}, ${os.type()} ${os.release()} ${os.arch()}`
  ].join("\n")
}

/** The loud end of a run whose figures must not be used. */
export const invalidBanner = (what: string) => {
  console.error("\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!")
  console.error(`!!! THIS RUN HAD ERRORS: ${what}.`)
  console.error("!!! The figures above are not a valid measurement.")
  console.error("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!")
}

/** A signed `POST` of `body` as JSON; the parsed answer, or an error naming the status. */
export const postJson = async (target: Target, path: string, body: unknown) => {
  const text = JSON.stringify(body)
  const response = await fetch(`${target.origin}${path}`, { method: "POST", headers: signedHeaders(target, path, text), body: text })
  const answer = await response.text()
  if (!response.ok) throw new Error(`POST ${path} answered ${response.status} ${answer}`)
  return JSON.parse(answer) as Record<string, unknown>
}
