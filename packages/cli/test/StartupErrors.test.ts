/**
 * contract.md: "A server that cannot start says why in one line and exits 1: port in use (naming
 * the port), data directory not writable, database refusing, vault key missing, migrations newer
 * than the code" (docs/decisions.md, "Start-up failures"). Each case runs `tender serve` as a
 * process and reads what an operator reads: exit status 1 within a bounded time (no restart loop),
 * and on stderr exactly one line, naming the thing and what to do. Cases that need no database
 * start none; those that do use this file's database on the run's PostgreSQL (DATABASE_URL).
 */
import { spawn } from "node:child_process"
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { tmpdir, userInfo } from "node:os"
import { join } from "node:path"
import { EmbeddedPostgres } from "@tender/adapters"
import { VaultCipher } from "@tender/adapters/crypto/VaultCipher"
import { migrations } from "@tender/adapters/storage/postgres/migrations/index"
import { fileDatabaseUrl, TEST_VAULT_KEY, urlOf } from "@tender/adapters/test/PgTestDatabase"
import { freePort } from "@tender/http/testing/TestServer"
import { Effect } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ROOT, type Run, type RunOptions, runTender } from "./support/Tender.ts"

const scratch = mkdtempSync(join(tmpdir(), "tender-startup-"))
// mkdtemp makes it 0700: the cases below decide who may enter what inside it.
chmodSync(scratch, 0o755)
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A server holding a port, as another program would. */
let holder: Server
let taken: number
beforeAll(async () => {
  holder = createServer()
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve))
  taken = (holder.address() as { port: number }).port
})
afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())))

const PORT_IN_USE = (port: number) => `error: port ${port} is in use (another server?): stop it or choose another with --port or PORT`

/** Within this, or the process is looping (restarting its children) rather than giving up. */
const BOUND_MS = 30_000

let dirs = 0
/** A data directory of its own for one case (not created: some cases want it missing). */
const dataDir = () => join(scratch, `data-${++dirs}`)

/**
 * `tender serve ARGS…` that must not start: exit status 1 within BOUND_MS, and stderr exactly the
 * one line `expected`.
 */
const failsToStart = async (args: ReadonlyArray<string>, expected: string, options: RunOptions = {}) => {
  const started = Date.now()
  const run: Run = await runTender(["serve", ...args], { timeout: BOUND_MS, ...options })
  const elapsed = Date.now() - started
  expect(run.stderr.split("\n").filter((line) => line.trim() !== ""), `stdout:\n${run.stdout}`).toEqual([expected])
  expect(run.code, run.stderr).toBe(1)
  expect(elapsed).toBeLessThan(BOUND_MS)
  return run
}

describe("a port in use", () => {
  it("one process: the line names the port, and nothing else was started (no database in the data dir)", async () => {
    const dir = dataDir()
    await failsToStart(["--port", String(taken), "--data-dir", dir], PORT_IN_USE(taken))
    expect(existsSync(join(dir, "pg"))).toBe(false)
  })

  it("TENDER_WORKERS=2: the primary checks the port before it forks a child", async () => {
    const dir = dataDir()
    const run = await failsToStart(["--port", String(taken), "--data-dir", dir], PORT_IN_USE(taken), { env: { TENDER_WORKERS: "2" } })
    expect(run.stdout).not.toContain("worker processes")
    expect(existsSync(join(dir, "pg"))).toBe(false)
  })

  it("memory storage: the same line", () => failsToStart(["--port", String(taken), "--storage", "memory"], PORT_IN_USE(taken)))

  it("`npm start` surfaces the same line", async () => {
    // --ignore-scripts skips prestart (a rebuild of the browser SDK that other test files serve
    // meanwhile); the start script itself still runs.
    const run = await new Promise<Run>((resolve) => {
      const child = spawn("npm", ["start", "--ignore-scripts", "--", "--port", String(taken), "--data-dir", dataDir()], {
        cwd: ROOT,
        env: { ...process.env, TENDER_WORKERS: "2", DATABASE_URL: "", PORT: "" }
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk) => (stdout += chunk))
      child.stderr.on("data", (chunk) => (stderr += chunk))
      child.once("exit", (code) => resolve({ code: code ?? -1, stdout, stderr }))
    })
    expect(run.code, run.stderr).toBe(1)
    // npm adds its own lines about the failed script; Tender's is the one that says why.
    expect(run.stderr.split("\n").filter((line) => line.startsWith("error:"))).toEqual([PORT_IN_USE(taken)])
  }, 60_000)
})

describe("a setting that does not parse", () => {
  it("names the variable and what it takes (one process, and TENDER_WORKERS=2's primary)", async () => {
    const expected = "error: TENDER_RATE_LIMIT_BURST is invalid: expected a string representing a finite number"
    await failsToStart(["--storage", "memory", "--port", "0"], expected, { env: { TENDER_RATE_LIMIT_BURST: "lots" } })
    await failsToStart(["--storage", "memory", "--port", "0"], expected, { env: { TENDER_RATE_LIMIT_BURST: "lots", TENDER_WORKERS: "2" } })
  })
})

describe("a data directory that cannot be used", () => {
  const CHOOSE = "choose another with --data-dir or TENDER_DATA_DIR"
  const isRoot = process.getuid?.() === 0

  it("a file where a directory should be", async () => {
    const file = join(scratch, "a-file")
    writeFileSync(file, "")
    const dir = join(file, "data")
    await failsToStart(["--port", "0", "--data-dir", dir], `error: data directory ${dir} cannot be created: ${file} is a file, not a directory: ${CHOOSE}`)
  })

  it("owned by another user, not writable by this one", async () => {
    const dir = dataDir()
    // Root writes anywhere: as root, tender runs as nobody (65534) against root's directory; else
    // against a directory of this user's that nobody may write.
    mkdirSync(dir, { mode: isRoot ? 0o755 : 0o555 })
    const as = isRoot ? { uid: 65534, gid: 65534 } : {}
    const [me, owner] = isRoot ? ["nobody", "root"] : [userInfo().username, userInfo().username]
    await failsToStart(
      ["--port", "0", "--data-dir", dir],
      `error: data directory ${dir} is not writable by ${me} (it belongs to ${owner}): run tender as ${owner}, or ${CHOOSE}`,
      as
    )
    expect(existsSync(join(dir, "vault.key"))).toBe(false)
  })

  it.skipIf(!isRoot)("as root: a PostgreSQL cluster in it that belongs to another user (the server runs as postgres)", async () => {
    const dir = dataDir()
    mkdirSync(join(dir, "pg"), { recursive: true })
    chownSync(join(dir, "pg"), 65534, 65534)
    await failsToStart(
      ["--port", "0", "--data-dir", dir],
      `error: data directory ${dir} holds a PostgreSQL cluster (${join(dir, "pg")}) that belongs to nobody, but the server would run as ` +
        `postgres (tender runs it so as root): run tender as nobody, or ${CHOOSE}`
    )
  })

  it.skipIf(!isRoot)("as root: inside a directory the postgres user cannot enter", async () => {
    const closed = join(scratch, "closed")
    mkdirSync(closed, { mode: 0o700 })
    const dir = join(closed, "data")
    await failsToStart(
      ["--port", "0", "--data-dir", dir],
      `error: data directory ${dir} is inside ${closed}, which the postgres user cannot enter (as root, tender runs the embedded ` +
        `PostgreSQL as postgres): let it through (chmod o+x ${closed}), or ${CHOOSE}`
    )
  })
})

describe("the embedded PostgreSQL's vault key", () => {
  it("lost while the database holds what it sealed: the start is refused (a new key would open none of it), the server stopped", async () => {
    const dir = dataDir()
    const tender = (...args: ReadonlyArray<string>) => runTender([...args, "--data-dir", dir])
    const created = await tender("accounts", "create", "--name", "sealed", "--mode", "live", "--json")
    expect(created.code, created.stderr).toBe(0)
    const credentials = join(scratch, "stripe.json")
    writeFileSync(credentials, JSON.stringify({ secret_key: "sk_live_51StartupSecretKeyXYZ", webhook_secret: "whsec_StartupWebhookSecret" }))
    const added = await tender(
      "accounts", "channels", "add", JSON.parse(created.stdout).account_id, "--provider", "stripe", "--mode", "live",
      "--credentials-file", credentials
    )
    expect(added.code, added.stderr).toBe(0)
    rmSync(join(dir, "vault.key"))
    await failsToStart(
      ["--port", "0", "--data-dir", dir],
      `error: ${join(dir, "vault.key")} does not open the cards and credentials this database holds (was it lost and generated anew?): ` +
        "restore the file that sealed them, or set TENDER_VAULT_KEY to that key"
    )
    expect((await Effect.runPromise(EmbeddedPostgres.status(dir))).running).toBe(false)
  })
})

describe("DATABASE_URL", () => {
  let url: URL
  beforeAll(async () => {
    url = new URL(await fileDatabaseUrl())
  })
  const withUrl = (databaseUrl: string, extra: Record<string, string> = {}) => ({
    env: { DATABASE_URL: databaseUrl, TENDER_VAULT_KEY: TEST_VAULT_KEY, ...extra }
  })
  const serve = ["--port", "0", "--data-dir", join(scratch, "unused")]

  it("nothing listening: the line names host:port/database", async () => {
    const port = await freePort()
    await failsToStart(
      serve,
      `error: PostgreSQL at 127.0.0.1:${port}/tender refuses connections (is it running?): start it, or correct DATABASE_URL`,
      withUrl(`postgres://tender:s3cret@127.0.0.1:${port}/tender`)
    )
  })

  it("a wrong password: named, the password is not", async () => {
    const wrong = new URL(url)
    wrong.password = "not-the-password"
    const run = await failsToStart(
      serve,
      `error: PostgreSQL at ${url.hostname}:${url.port}${url.pathname} refused the password of user ${url.username}: correct DATABASE_URL`,
      withUrl(wrong.toString())
    )
    expect(run.stderr).not.toContain("not-the-password")
  })

  it("an unknown database", async () => {
    await failsToStart(
      serve,
      `error: PostgreSQL at ${url.hostname}:${url.port}/no_such_db: there is no database no_such_db: create it (createdb no_such_db), ` +
        "or correct DATABASE_URL",
      withUrl(urlOf(url.toString(), "no_such_db"))
    )
  })

  it("vault key missing: TENDER_VAULT_KEY is required with a database reached by URL", async () => {
    await failsToStart(
      serve,
      "error: TENDER_VAULT_KEY is required with DATABASE_URL (64 hex characters, e.g. `openssl rand -hex 32`); " +
        "every process that shares the database must use the same key",
      { env: { DATABASE_URL: url.toString() } }
    )
  })

  describe("with something in the database", () => {
    let db: pg.Pool
    beforeAll(() => {
      db = new pg.Pool({ connectionString: url.toString(), max: 1 })
    })
    afterAll(() => db.end())

    it("a vault key that does not open what the database holds sealed (lost and generated anew, or another process's)", async () => {
      const account = await runTender(["accounts", "create", "--name", "sealed", "--json"], withUrl(url.toString()))
      expect(account.code, account.stderr).toBe(0)
      const accountId: string = JSON.parse(account.stdout).account_id
      // A card sealed under another key, as the database's other processes would have stored it.
      const other = VaultCipher.make(Buffer.alloc(32, 7))
      const sealed = await Effect.runPromise(other.seal(accountId, "tok_sealedelsewhere", "4242424242424242"))
      await db.query(
        `INSERT INTO card_vault (token, account_id, number_iv, number_ciphertext, number_tag, brand, last4, bin, exp_month,
           exp_year, funding, created_at, last_used_at)
         VALUES ('tok_sealedelsewhere', $1, $2, $3, $4, 'visa', '4242', '424242', 12, 2035, 'credit', now(), now())`,
        [accountId, sealed.iv, sealed.ciphertext, sealed.tag]
      )
      try {
        await failsToStart(
          serve,
          "error: TENDER_VAULT_KEY does not open the cards and credentials this database holds: set it to the key that sealed them " +
            "(the one the database's other processes use)",
          withUrl(url.toString())
        )
      } finally {
        await db.query("DELETE FROM card_vault WHERE token = 'tok_sealedelsewhere'")
      }
    })

    /** The start refused with `expected` while the database lists a migration `name` this build lacks. */
    const refusedWith = async (name: string, expected: string) => {
      await db.query("INSERT INTO tender_migrations (name) VALUES ($1)", [name])
      try {
        await failsToStart(serve, expected, withUrl(url.toString()))
      } finally {
        await db.query("DELETE FROM tender_migrations WHERE name = $1", [name])
      }
    }

    it("migrations newer than the code: names the database's newest and this build's", () =>
      refusedWith(
        "9999_from_a_later_tender",
        "error: the database has migrations this build of Tender does not know (the database's newest: 9999_from_a_later_tender; " +
          `this build's newest: ${migrations.map((m) => m.name).sort().at(-1)}): upgrade Tender to the version that applied them`
      ))

    it("a migration this build never had, within its range (renamed in development): not called newer", () =>
      refusedWith(
        "0007_renamed_since",
        "error: the database has migrations this build of Tender never had (0007_renamed_since; renamed or dropped in " +
          "development?): use a database (or a data directory) that this build migrated"
      ))
  })

  it("TENDER_WORKERS=2 whose children cannot start (Redis refusing): the primary stops them and says why once", async () => {
    const redisPort = await freePort()
    const run = await failsToStart(
      serve,
      `error: could not connect to Redis at redis://127.0.0.1:${redisPort} (Connection is closed.): start it, or correct REDIS_URL`,
      withUrl(url.toString(), { TENDER_WORKERS: "2", REDIS_URL: `redis://127.0.0.1:${redisPort}` })
    )
    expect(run.stdout).toContain("2 worker processes")
  })
})
