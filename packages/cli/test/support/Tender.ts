/**
 * `tender` as operators run it, for end-to-end tests: child processes on Node 22 against one
 * temporary data dir, `serve` processes on free ports and other long-running ones (`worker`), and
 * cleanup of the embedded PostgreSQL they share (the process that started it stops it; one left
 * running by a killed owner is adopted, and so stopped, by the next command); requests signed as a
 * merchant's server signs them, to any of the served processes; a client of the shared PostgreSQL
 * for what no endpoint shows (an order's events).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { createHmac, timingSafeEqual } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { EmbeddedPostgres } from "@tender/adapters"
import { send } from "@tender/client/Testing"
import { freePort } from "@tender/http/testing/TestServer"
import { Effect } from "effect"
import pg from "pg"
import { afterAll, beforeAll, expect } from "vitest"
import { ENTRY } from "../../scripts/bundle.ts"

export const ROOT = fileURLToPath(new URL("../../../..", import.meta.url))
const NODE = join(ROOT, "node_modules/.bin/node")
/** `tender` as bundled by vitest's global setup (support/BundleSetup.ts): the sources, without their start-up cost. */
const BIN = ENTRY

/** The machine's settings must not leak in: these tests own their storage. */
const cleanEnv = (extra: Record<string, string> = {}) => {
  const copy: Record<string, string | undefined> = { ...process.env }
  for (const name of ["DATABASE_URL", "REDIS_URL", "TENDER_VAULT_KEY", "TENDER_DATA_DIR", "PORT"]) delete copy[name]
  // One process per `serve`, as before `--workers` (whose default is the number of cores): a test
  // that wants a cluster says so with TENDER_WORKERS.
  return { ...copy, TENDER_WORKERS: "1", ...extra }
}

export interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export interface RunOptions {
  /** Added to the clean environment. */
  readonly env?: Record<string, string>
  /** Run as this user (and group): a test of what another user may not do, when the tests run as root. */
  readonly uid?: number
  readonly gid?: number
  /** Killed after this many milliseconds (then `code` is -1); default 90 s. */
  readonly timeout?: number
}

/** `tender ARGS…` to its end: its exit code and output. */
export const runTender = (args: ReadonlyArray<string>, options: RunOptions = {}): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      NODE,
      [BIN, ...args],
      { cwd: ROOT, env: cleanEnv(options.env), timeout: options.timeout ?? 90_000, uid: options.uid, gid: options.gid },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resolve({ code, stdout, stderr })
      }
    )
  })


/** A long-running `tender` process (serve, worker). */
export interface Running {
  readonly process: ChildProcess
  /** Its stdout and stderr so far. */
  readonly log: () => string
  /** SIGTERM, then SIGKILL if it has not exited within 30 s; resolves with how it ended. */
  readonly stop: () => Promise<{ readonly code: number | null; readonly signal: string | null }>
}

export interface Served extends Running {
  readonly url: string
}

export interface Merchant {
  readonly secret_key: string
  readonly signing_secret: string
}

export interface Reply {
  readonly status: number
  readonly json: any
}

/** The merchant's server: signed API requests to whichever `serve` process it is given. */
export const merchantClient = (merchant: () => Merchant) => {
  /** A POST with a JSON body, or with none when `body` is undefined. */
  const post = async (server: Served, path: string, body?: unknown): Promise<Reply> => {
    const reply = await send({ baseUrl: server.url }, merchant(), "POST", path, body === undefined ? {} : { body: JSON.stringify(body) })
    return { status: reply.status, json: reply.json }
  }
  const get = async (server: Served, path: string): Promise<Reply> => {
    const reply = await send({ baseUrl: server.url }, merchant(), "GET", path)
    return { status: reply.status, json: reply.json }
  }
  return { post, get }
}

/** How a `serve` process ended (its signal), once it has within `ms`; undefined if it is still running then. */
export const exited = (server: Served, ms: number) =>
  new Promise<{ readonly signal: string | null } | undefined>((resolve) => {
    const child = server.process
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ signal: child.signalCode })
    const timer = setTimeout(() => resolve(undefined), ms)
    child.once("exit", (_code, signal) => {
      clearTimeout(timer)
      resolve({ signal })
    })
  })

/**
 * Polls `probe` every 20 ms until `done` holds of its reply; how long that took, from the call
 * (a change another process made, seen by a running server). Throws after 10 s.
 */
export const untilAnswered = async <A>(probe: () => Promise<A>, done: (a: A) => boolean, timeoutMs = 10_000) => {
  const started = Date.now()
  for (;;) {
    const reply = await probe()
    if (done(reply)) return Date.now() - started
    if (Date.now() - started > timeoutMs) throw new Error(`never: ${JSON.stringify(reply)}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** SIGTERM, then SIGKILL if it has not exited within 30 s; resolves with how it ended. */
export const stopProcess = (child: ChildProcess) =>
  new Promise<{ readonly code: number | null; readonly signal: string | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode })
    const force = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.once("exit", (code, signal) => {
      clearTimeout(force)
      resolve({ code, signal })
    })
    child.kill("SIGTERM")
  })

export const makeHome = (prefix: string) => {
  const dataDir = mkdtempSync(join(tmpdir(), prefix))

  const run = (...args: ReadonlyArray<string>): Promise<Run> => runTender([...args, "--data-dir", dataDir])

  /** A command with `--json` prints exactly one JSON document on stdout and nothing on stderr. */
  const runJson = async (...args: ReadonlyArray<string>) => {
    const result = await run(...args, "--json")
    expect(result, result.stderr).toMatchObject({ code: 0, stderr: "" })
    return JSON.parse(result.stdout)
  }

  /** A failing command with `--json`: non-zero exit, empty stdout, one `{code, message}` object on stderr. */
  const runJsonError = async (...args: ReadonlyArray<string>) => {
    const result = await run(...args, "--json")
    expect(result.code).not.toBe(0)
    expect(result.stdout).toBe("")
    const error = JSON.parse(result.stderr)
    expect(typeof error.message).toBe("string")
    return error
  }

  /** Starts `tender ARGS…` in the background against this home's data dir. */
  const start = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Running => {
    let log = ""
    const child = spawn(NODE, [BIN, ...args, "--data-dir", dataDir], { cwd: ROOT, env: cleanEnv(env) })
    child.stdout?.on("data", (chunk) => (log += chunk))
    child.stderr?.on("data", (chunk) => (log += chunk))
    return { process: child, log: () => log, stop: () => stopProcess(child) }
  }

  /** `tender serve` on `port` (default a free one) with `args` (e.g. `--host ::`), answering before this resolves. */
  const serve = async (env: Record<string, string> = {}, port?: number, args: ReadonlyArray<string> = []): Promise<Served> => {
    port ??= await freePort()
    const url = `http://127.0.0.1:${port}`
    const running = start(["serve", "--port", String(port), ...args], env)
    const deadline = Date.now() + 100_000
    for (;;) {
      if (running.process.exitCode !== null) throw new Error(`serve exited with ${running.process.exitCode}:\n${running.log()}`)
      if (await fetch(`${url}/v1/openapi.json`).then((r) => r.ok, () => false)) break
      if (Date.now() > deadline) throw new Error(`serve did not answer in time:\n${running.log()}`)
      await new Promise((r) => setTimeout(r, 250))
    }
    return { ...running, url }
  }

  /** A pool of clients of the embedded PostgreSQL the served processes share (the caller ends it). */
  const database = () => {
    const info = JSON.parse(readFileSync(join(dataDir, "pg.json"), "utf8")) as { port: number; password: string }
    return new pg.Pool({
      host: EmbeddedPostgres.HOST,
      port: info.port,
      user: EmbeddedPostgres.USER,
      password: info.password,
      database: EmbeddedPostgres.DATABASE,
      max: 4
    })
  }

  const databaseRunning = () => Effect.runPromise(Effect.map(EmbeddedPostgres.status(dataDir), (s) => s.running))

  /** Stops whatever is left (adopting an orphaned database) and removes the data dir. */
  const cleanup = async () => {
    if (await databaseRunning()) await run("migrate")
    rmSync(dataDir, { recursive: true, force: true })
  }

  return { dataDir, run, runJson, runJsonError, start, serve, database, databaseRunning, cleanup }
}

/**
 * For a test file racing two `serve` processes over `home` (the second joins the first's embedded
 * PostgreSQL): starts them and a client of that database before its tests; after them stops the
 * client, then the joiner, then the owner of the database, and removes the data dir.
 */
export const twoServers = (home: ReturnType<typeof makeHome>, env: Record<string, string>) => {
  const servers: Array<Served> = []
  let db: pg.Pool | undefined
  beforeAll(async () => {
    servers.push(await home.serve(env))
    servers.push(await home.serve(env))
    db = home.database()
  }, 240_000)
  afterAll(async () => {
    await db?.end()
    for (const server of [...servers].reverse()) await server.stop()
    await home.cleanup()
  }, 120_000)
  return {
    servers: servers as ReadonlyArray<Served>,
    /** Request i goes to server i mod 2. */
    on: (i: number) => servers[i % servers.length],
    /** The shared PostgreSQL, for what no endpoint shows (the sandbox's ledger, the events). */
    database: () => db!
  }
}

/**
 * A receiver's own check of a webhook's `X-Signature: t=…, v1=…` (contract.md, Signatures: t + the
 * URL's path + the body bytes, HMAC-SHA256 under `secret`), with no Tender code: one `v1` verifying
 * is enough.
 */
export const verifiesWebhook = (secret: string | undefined, header: string | undefined, path: string, body: Buffer): boolean => {
  const t = header === undefined ? undefined : /t=(\d+)/.exec(header)?.[1]
  if (secret === undefined || secret === "" || t === undefined) return false
  const expected = createHmac("sha256", secret).update(`${t}${path}`).update(body).digest()
  return [...header!.matchAll(/v1=([0-9a-f]{64})/g)].some(([, v1]) => timingSafeEqual(Buffer.from(v1!, "hex"), expected))
}
