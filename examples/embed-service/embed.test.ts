/**
 * What a team outside this repository gets: scripts/pack.ts builds and packs @tender/domain and
 * @tender/adapters, this example is copied to a directory outside the repository and installs the
 * tarballs with npm (registry dependencies only, no workspace links; vitest among its
 * devDependencies), and there, on Node 22 without type stripping, each package imports, the example
 * takes, captures and refunds a card payment on memory storage and on the embedded PostgreSQL, on
 * the sandbox and on its own provider (acme.mjs), which passes the provider contract of
 * @tender/adapters/testing under vitest, and a consumer's TypeScript type-checks strictly against
 * the packages' declarations. One pack and one install for all of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { copyExample, node, npmInstall, pack, stopwatch, typecheck, workDir } from "../support/Installed.ts"

const EXAMPLE_FILES = ["service.mjs", "acme.mjs", "acme.contract.test.mjs", "consumer.ts", "contracts.ts", "tsconfig.json", "package.json", "README.md"]

describe("the packed @tender/domain, @tender/adapters and the server's packages, installed outside the repository", () => {
  let work = ""
  let app = ""
  const { timed, summary } = stopwatch()

  beforeAll(async () => {
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22)
    work = await workDir("tender-embed-")
    const packDir = path.join(work, "pack")
    app = path.join(work, "embed-service")
    await timed("pack", () => pack(packDir, ["api", "domain", "adapters", "browser-sdk", "http"]))
    // Beside the example's own, the HTTP server's packages, so that every package built with tsc is
    // imported from an install here (the client's is, by examples/installed-cli).
    await copyExample("embed-service", EXAMPLE_FILES, app, packDir, {
      "@tender/http": `file:${packDir}/tender-http-0.1.0.tgz`,
      "@tender/browser-sdk": `file:${packDir}/tender-browser-sdk-0.1.0.tgz`
    })
    await timed("install", () => npmInstall(app))
  }, 600_000)

  afterAll(async () => {
    console.log(`embed-service: ${summary()}`)
    if (work !== "") await fs.rm(work, { recursive: true, force: true })
  })

  it("installs built packages: JavaScript and declarations, no sources, no tests", async () => {
    for (const name of ["api", "domain", "adapters", "browser-sdk", "http"]) {
      const dir = path.join(app, "node_modules/@tender", name)
      const manifest = JSON.parse(await fs.readFile(path.join(dir, "package.json"), "utf8"))
      expect(manifest).toMatchObject({ name: `@tender/${name}`, version: "0.1.0", license: "MIT", type: "module" })
      expect(manifest.private).toBeUndefined()
      const files = await fs.readdir(dir, { recursive: true })
      // The browser SDK has no index: its modules by path, and its built scripts.
      const entry = name === "browser-sdk" ? ["dist/assets.js", "dist/assets.d.ts", "dist/www/tender.js"] : ["dist/index.js", "dist/index.d.ts"]
      expect(files).toEqual(expect.arrayContaining(["LICENSE", "README.md", "CHANGELOG.md", ...entry]))
      expect(files.filter((f) => /(^|\/)test\/|\.test\.|(?<!\.d)\.ts$/.test(f))).toEqual([])
    }
    // The adapters use the domain installed beside them, not a copy of their own.
    await expect(fs.access(path.join(app, "node_modules/@tender/adapters/node_modules"))).rejects.toThrow()
    // The adapter contracts are an entry of their own, on vitest the consumer brings (optional peers).
    const adapters = JSON.parse(await fs.readFile(path.join(app, "node_modules/@tender/adapters/package.json"), "utf8"))
    expect(adapters.exports["./testing"]).toEqual({ types: "./dist/testing/index.d.ts", import: "./dist/testing/index.js" })
    expect(Object.keys(adapters.peerDependencies).sort()).toEqual(["@effect/vitest", "effect", "vitest"])
    expect(adapters.peerDependenciesMeta).toEqual({ vitest: { optional: true }, "@effect/vitest": { optional: true } })
    expect(Object.keys(adapters.dependencies)).not.toContain("vitest")
  })

  it("imports each package, and a module by its path, on Node 22 without type stripping; only ./testing reaches for vitest", async () => {
    const out = await timed("import", () =>
      node([
        "--input-type=module",
        "-e",
        // vitest is installed here (the example's devDependency): a resolve hook refuses it instead,
        // as a service installed without vitest would.
        `import { registerHooks } from "node:module"
registerHooks({ resolve: (specifier, context, next) => {
  if (["vitest", "@effect/vitest"].includes(specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/"))) {
    throw new Error("imports " + specifier)
  }
  return next(specifier, context)
} })
const domain = await import("@tender/domain")
const adapters = await import("@tender/adapters")
const config = await import("@tender/adapters/Config")
const testing = await import("@tender/adapters/testing").then(() => "imported", (error) => error.message)
const api = await import("@tender/api")
const http = await import("@tender/http")
const assets = await import("@tender/browser-sdk/assets")
const sdk = assets.loadScript("tender.js", { apiUrl: "https://a.example", fieldsUrl: "https://f.example" })
console.log(JSON.stringify({ domain: typeof domain.UseCases.layer, adapters: typeof adapters.Infrastructure.layer, config: typeof config.configFromEnv, testing,
  api: typeof api.Api, http: typeof http.Server.app, sdk: sdk.contentType }))`
      ], app))
    expect(JSON.parse(out)).toEqual({
      domain: "object", adapters: "function", config: "function", testing: "imports @effect/vitest",
      api: "function", http: "function", sdk: expect.stringMatching(/^text\/javascript/)
    })
  })

  const demoOutput = (provider: string) =>
    new RegExp(`^payment (ord_\\w+): authorized on ${provider}\ncaptured: completed\nrefund (re_\\w+): succeeded 10 USD\nevents: payment\\.authorized, payment\\.succeeded, refund\\.succeeded\n$`)

  it("runs the example on memory storage: a card payment authorized, captured, partly refunded, its events read", async () => {
    const out = await timed("demo (memory)", () => node(["service.mjs", "--demo"], app))
    expect(out).toMatch(demoOutput("sandbox"))
  })

  it("runs the example on its own provider, acme, in the sandbox's place", async () => {
    const out = await timed("demo (acme)", () => node(["service.mjs", "--demo", "--provider", "acme"], app))
    expect(out).toMatch(demoOutput("acme"))
  })

  it("acme passes the provider contract of @tender/adapters/testing (vitest installed from the registry)", async () => {
    const report = path.join(work, "contract.json")
    await timed("provider contract (acme)", () =>
      node(["node_modules/vitest/vitest.mjs", "run", "acme.contract.test.mjs", "--reporter=json", `--outputFile=${report}`], app))
    const result = JSON.parse(await fs.readFile(report, "utf8"))
    expect({ failed: result.numFailedTests, skipped: result.numPendingTests + result.numTodoTests }).toEqual({ failed: 0, skipped: 0 })
    const titles = result.testResults.flatMap((file: { assertionResults: Array<{ title: string }> }) => file.assertionResults.map((t) => t.title))
    expect(titles).toEqual(expect.arrayContaining([
      "authorizes the approving card (manual capture): Approved, with a provider id",
      "declines the declining card: Declined, with a decline code",
      "a capture, a void and a refund sent twice with one idempotency key: the same answer, one effect",
      "lookup tells what became of each call by its key: authorize, capture, void, refund"
    ]))
    expect(result.numPassedTests).toBe(titles.length)
  })

  it("runs the example on the embedded PostgreSQL (migrated on start, stopped at exit)", async () => {
    const dataDir = path.join(work, "data")
    const out = await timed("demo (embedded PostgreSQL)", () => node(["service.mjs", "--demo", "--postgres"], app, { TENDER_DATA_DIR: dataDir }))
    expect(out).toMatch(demoOutput("sandbox"))
    expect(JSON.parse(await fs.readFile(path.join(dataDir, "pg.json"), "utf8"))).toMatchObject({ port: expect.any(Number) })
  })

  it("type-checks a consumer's TypeScript (strict, nodenext) against the packages' declarations", async () => {
    await timed("tsc (consumer)", () => typecheck(app))
  })
})
