/**
 * The operator CLI as an operator runs it: `tender` child processes on Node 22, against one
 * temporary data dir. `serve` starts first and owns the embedded PostgreSQL; every other command
 * joins that instance (contract.md, Operator set-up), so the CLI and the running server share one
 * database, and a key rolled by the CLI is refused by the server at once.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { EmbeddedPostgres } from "@tender/adapters"
import { signatureHeader } from "@tender/adapters/Signature"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const ROOT = fileURLToPath(new URL("../../..", import.meta.url))
const NODE = join(ROOT, "node_modules/.bin/node")
const BIN = join(ROOT, "packages/cli/bin/tender.js")

const dataDir = mkdtempSync(join(tmpdir(), "tender-cli-"))

/** The machine's settings must not leak in: these tests own their storage. */
const env = (() => {
  const copy: Record<string, string | undefined> = { ...process.env }
  for (const name of ["DATABASE_URL", "REDIS_URL", "TENDER_VAULT_KEY", "TENDER_DATA_DIR", "PORT"]) delete copy[name]
  return copy
})()

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const tender = (...args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve) => {
    execFile(NODE, [BIN, ...args, "--data-dir", dataDir], { cwd: ROOT, env, timeout: 90_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
      resolve({ code, stdout, stderr })
    })
  })

/** A command with `--json` prints exactly one JSON document on stdout and nothing on stderr. */
const tenderJson = async (...args: ReadonlyArray<string>) => {
  const run = await tender(...args, "--json")
  expect(run, run.stderr).toMatchObject({ code: 0, stderr: "" })
  return JSON.parse(run.stdout)
}

/** A failing command with `--json`: non-zero exit, empty stdout, one `{code, message}` object on stderr. */
const tenderJsonError = async (...args: ReadonlyArray<string>) => {
  const run = await tender(...args, "--json")
  expect(run.code).not.toBe(0)
  expect(run.stdout).toBe("")
  const error = JSON.parse(run.stderr)
  expect(typeof error.message).toBe("string")
  return error
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => typeof address === "object" && address !== null ? resolve(address.port) : reject(address))
    })
  })

let server: ChildProcess
let serverLog = ""
let baseUrl = ""

const waitForServer = async (deadline: number): Promise<void> => {
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`serve exited with ${server.exitCode}:\n${serverLog}`)
    const ok = await fetch(`${baseUrl}/v1/openapi.json`).then((r) => r.ok, () => false)
    if (ok) return
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error(`serve did not answer in time:\n${serverLog}`)
}

/** SIGTERM, then SIGKILL if it has not exited within 30 s; resolves with how it ended. */
const stopServer = (): Promise<{ readonly code: number | null; readonly signal: string | null }> =>
  new Promise((resolve) => {
    if (server.exitCode !== null || server.signalCode !== null) {
      return resolve({ code: server.exitCode, signal: server.signalCode })
    }
    const force = setTimeout(() => server.kill("SIGKILL"), 30_000)
    server.once("exit", (code, signal) => {
      clearTimeout(force)
      resolve({ code, signal })
    })
    server.kill("SIGTERM")
  })

const databaseRunning = () => Effect.runPromise(Effect.map(EmbeddedPostgres.status(dataDir), (s) => s.running))

beforeAll(async () => {
  const port = await freePort()
  baseUrl = `http://127.0.0.1:${port}`
  server = spawn(NODE, [BIN, "serve", "--port", String(port), "--data-dir", dataDir], { cwd: ROOT, env })
  server.stdout?.on("data", (chunk) => (serverLog += chunk))
  server.stderr?.on("data", (chunk) => (serverLog += chunk))
  await waitForServer(Date.now() + 100_000)
}, 120_000)

afterAll(async () => {
  if (server !== undefined) await stopServer()
  // A server whose owner died (SIGKILL) is adopted, and so stopped, by the next process to use it.
  if (await databaseRunning()) await tender("migrate")
  rmSync(dataDir, { recursive: true, force: true })
}, 120_000)

/** A signed GET as a merchant's server sends it. */
const merchantGet = (secretKey: string, signingSecret: string, path: string) =>
  fetch(baseUrl + path, {
    headers: {
      authorization: `Bearer ${secretKey}`,
      "x-signature": signatureHeader(signingSecret, Math.floor(Date.now() / 1000), path, "")
    }
  })

describe("tender serve", () => {
  it("answers on its port with the OpenAPI document", async () => {
    const response = await fetch(`${baseUrl}/v1/openapi.json`)
    expect(response.status).toBe(200)
    expect(await response.json()).toHaveProperty("openapi")
  })
})

describe("tender migrate", () => {
  it("finds the schema up to date once the server has migrated it", async () => {
    expect(await tenderJson("migrate")).toEqual({ applied: [] })
  })
})

describe("--storage memory", () => {
  it("runs a command without any database", async () => {
    expect(await tenderJson("--storage", "memory", "accounts", "list")).toEqual({ data: [] })
  })
})

describe("tender accounts", () => {
  let acme: { account_id: string; secret_key: string; signing_secret: string }

  it("create --json prints exactly the documented keys, test keys by default", async () => {
    const run = await tender("accounts", "create", "--name", "Acme", "--json")
    expect(run.stderr).toBe("")
    expect(run.stdout.trim().split("\n")).toHaveLength(1)
    const created = JSON.parse(run.stdout)
    expect(Object.keys(created)).toEqual(["account_id", "mode", "secret_key", "publishable_key", "signing_secret"])
    expect(created).toMatchObject({
      account_id: expect.stringMatching(/^acct_/),
      mode: "test",
      secret_key: expect.stringMatching(/^sk_test_/),
      publishable_key: expect.stringMatching(/^pk_test_/),
      signing_secret: expect.any(String)
    })
    acme = created
  })

  it("create --mode live issues live keys; without --json it warns the secret key is shown once", async () => {
    const run = await tender("accounts", "create", "--name", "Live shop", "--mode", "live")
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/sk_live_[0-9a-f]+/)
    expect(run.stdout).toMatch(/pk_live_[0-9a-f]+/)
    expect(run.stdout).toMatch(/shown only this once/)
  })

  it("create refuses a bad mode with a validation error", async () => {
    const error = await tenderJsonError("accounts", "create", "--name", "Nope", "--mode", "sandbox")
    expect(error).toMatchObject({ code: "validation_failed", errors: [{ field: "mode" }] })
  })

  it("suspend, then suspend again: a conflict, a one-line message and a non-zero exit", async () => {
    expect(await tenderJson("accounts", "suspend", acme.account_id)).toMatchObject({ status: "suspended" })
    const again = await tender("accounts", "suspend", acme.account_id)
    expect(again.code).not.toBe(0)
    expect(again.stdout).toBe("")
    expect(again.stderr.trim()).toBe(`error: Account ${acme.account_id} is already suspended`)
  })

  it("activate restores the account", async () => {
    const run = await tender("accounts", "activate", acme.account_id)
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^Activated acct_/)
    expect(run.stdout).toMatch(/status\s+active/)
  })

  it("allowlist replaces the list, refuses an invalid CIDR, and 0.0.0.0/0 ::/0 lifts it", async () => {
    expect(await tenderJson("accounts", "allowlist", acme.account_id, "10.0.0.0/8", "2001:db8::/32"))
      .toMatchObject({ ip_allowlist: ["10.0.0.0/8", "2001:db8::/32"] })
    const invalid = await tenderJsonError("accounts", "allowlist", acme.account_id, "10.0.0.0/8", "10.0.0.300/8")
    expect(invalid).toMatchObject({ code: "validation_failed", errors: [{ field: "cidrs[1]" }] })
    expect(await tenderJson("accounts", "allowlist", acme.account_id, "0.0.0.0/0", "::/0"))
      .toMatchObject({ ip_allowlist: [] })
  })

  it("profiles add and disable", async () => {
    expect(await tenderJson("accounts", "profiles", "add", acme.account_id, "--code", "eu", "--name", "Europe"))
      .toMatchObject({ processing_profiles: [{ code: "eu", name: "Europe", status: "active" }] })
    expect(await tenderJson("accounts", "profiles", "disable", acme.account_id, "eu"))
      .toMatchObject({ processing_profiles: [{ code: "eu", status: "disabled" }] })
  })

  it("vault enable and rate-limit", async () => {
    expect(await tenderJson("accounts", "vault", "enable", acme.account_id)).toMatchObject({ vault_enabled: true })
    expect(await tenderJson("accounts", "rate-limit", acme.account_id, "--per-second", "50", "--burst", "80"))
      .toMatchObject({ rate_limit: { per_second: 50, burst: 80 } })
  })

  it("keys roll prints a new key; the server refuses the old one at once", async () => {
    const path = "/v1/payment-methods?country=US&currency=USD"
    expect((await merchantGet(acme.secret_key, acme.signing_secret, path)).status).toBe(200)
    const rolled = await tenderJson("accounts", "keys", "roll", acme.account_id)
    expect(rolled).toEqual({ account_id: acme.account_id, secret_key: expect.stringMatching(/^sk_test_/) })
    expect(rolled.secret_key).not.toBe(acme.secret_key)
    const old = await merchantGet(acme.secret_key, acme.signing_secret, path)
    expect(old.status).toBe(401)
    expect(await old.json()).toMatchObject({ code: "invalid_api_key" })
    expect((await merchantGet(rolled.secret_key, acme.signing_secret, path)).status).toBe(200)
  })

  it("list and get show the account but never a key hash, a secret key or the signing secret", async () => {
    const listed = await tenderJson("accounts", "list")
    expect(listed.data.map((a: { id: string }) => a.id)).toContain(acme.account_id)
    const got = await tenderJson("accounts", "get", acme.account_id)
    expect(got).toMatchObject({ id: acme.account_id, status: "active", secret_keys: [{ revoked_at: expect.any(String) }, { revoked_at: null }] })
    const shown = await tender("accounts", "get", acme.account_id)
    expect(shown.code).toBe(0)
    expect(shown.stdout).toMatch(/vault\s+enabled/)
    for (const output of [JSON.stringify(listed), JSON.stringify(got), shown.stdout]) {
      expect(output).not.toContain(acme.signing_secret)
      expect(output).not.toMatch(/sk_(test|live)_[0-9a-f]{16,}/)
      expect(output).not.toMatch(/"hash"|[0-9a-f]{64}/)
    }
  })

  it("an unknown account id fails with account_not_found", async () => {
    expect(await tenderJsonError("accounts", "get", "acct_doesnotexist0000")).toMatchObject({ code: "account_not_found" })
  })
})

describe("after the server stops", () => {
  it("serve exits on SIGTERM and stops the embedded database it started", async () => {
    expect((await stopServer()).signal).toBeNull()
    expect(await databaseRunning()).toBe(false)
  }, 60_000)

  it("a command alone starts the embedded database, finds the data, and stops it on exit", async () => {
    const listed = await tenderJson("accounts", "list")
    expect(listed.data.map((a: { name: string }) => a.name)).toEqual(expect.arrayContaining(["Acme", "Live shop"]))
    expect(await databaseRunning()).toBe(false)
  }, 60_000)
})
