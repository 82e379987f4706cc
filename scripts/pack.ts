/**
 * `npm run pack [outDir]` (`node scripts/pack.ts [outDir]`, default `.pack`): builds @tender/domain
 * and @tender/adapters to JavaScript with declaration files and packs each into a tarball
 * (`<outDir>/tender-domain-0.1.0.tgz`, `<outDir>/tender-adapters-0.1.0.tgz`) that installs and runs
 * on plain Node 22 outside this repository.
 *
 * The repository itself runs from source; packages are built only here (docs/packaging.md). One tsc
 * program compiles both packages' `src/` (tests are not part of it) into a staging directory, so the
 * adapters' imports of `@tender/domain` resolve to the domain's source through the workspace link and
 * their declaration files name the domain by its package name. Each staged package gets a
 * publishable package.json (built exports, `files`, dependencies with `@tender/*` pinned to the
 * version packed beside it) and its README, CHANGELOG and the repository's LICENSE; then `npm pack`.
 */
import { execFileSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const outDir = resolve(process.argv[2] ?? join(root, ".pack"))
const staging = join(outDir, "staging")

/** The packed packages, in dependency order. */
const PACKAGES = [
  { dir: "domain", description: "Tender's payment domain on Effect: use cases (payments, refunds, payouts, webhooks) over ports." },
  {
    dir: "adapters",
    description: "Tender's driven adapters: memory and PostgreSQL storage (embedded or by URL), the sandbox, Stripe and Adyen providers, Redis coordination.",
    // `@tender/adapters/testing`: the storage and provider contracts as vitest suites, for a team's
    // own adapters. It imports vitest, which the package does not bring: optional peers.
    testing: { peers: { vitest: ">=5.0.0 <6.0.0", "@effect/vitest": "^4.0.5" } }
  }
] as const

interface Manifest {
  readonly name: string
  readonly version: string
  readonly dependencies?: Record<string, string>
}

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Manifest
const manifests = PACKAGES.map((p) => readJson(join(root, "packages", p.dir, "package.json")))
const versionOf = new Map(manifests.map((m) => [m.name, m.version]))

rmSync(staging, { recursive: true, force: true })
mkdirSync(staging, { recursive: true })

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
        composite: false,
        incremental: false,
        declaration: true,
        emitDeclarationOnly: false,
        // The tsconfig sits outside the repository: @types/node is the repository's.
        typeRoots: [join(root, "node_modules", "@types")]
      },
      include: PACKAGES.map((p) => join(root, "packages", p.dir, "src"))
    },
    null,
    2
  )
)
const started = Date.now()
execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", tsconfig], { stdio: "inherit" })
console.log(`tsc: ${Date.now() - started} ms`)

const license = join(root, "LICENSE")
if (!existsSync(license)) throw new Error(`${license} is missing`)

for (const [i, p] of PACKAGES.entries()) {
  const manifest = manifests[i]!
  const source = join(root, "packages", p.dir)
  const stage = join(staging, p.dir)
  mkdirSync(stage, { recursive: true })
  cpSync(join(build, p.dir, "src"), join(stage, "dist"), { recursive: true })
  for (const file of ["README.md", "CHANGELOG.md"]) {
    if (!existsSync(join(source, file))) throw new Error(`${join(source, file)} is missing`)
    cpSync(join(source, file), join(stage, file))
  }
  cpSync(license, join(stage, "LICENSE"))

  const dependencies = Object.fromEntries(
    Object.entries(manifest.dependencies ?? {}).map(([name, range]) => {
      if (!name.startsWith("@tender/")) return [name, range]
      const version = versionOf.get(name)
      if (version === undefined) throw new Error(`${manifest.name} depends on ${name}, which is not packed`)
      return [name, version]
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
    // repository's test-only exports (`./test/…`) are not built and not exported. `./testing` (the
    // adapter contracts) is its own entry: `.` never imports it, so vitest stays optional.
    exports: {
      ".": { types: "./dist/index.d.ts", import: "./dist/index.js" },
      ...("testing" in p ? { "./testing": { types: "./dist/testing/index.d.ts", import: "./dist/testing/index.js" } } : {}),
      "./*": { types: "./dist/*.d.ts", import: "./dist/*.js" },
      "./package.json": "./package.json"
    },
    files: ["dist", "README.md", "LICENSE", "CHANGELOG.md"],
    dependencies,
    ...("testing" in p
      ? {
        peerDependencies: p.testing.peers,
        peerDependenciesMeta: Object.fromEntries(Object.keys(p.testing.peers).map((name) => [name, { optional: true }]))
      }
      : {})
  }
  writeFileSync(join(stage, "package.json"), `${JSON.stringify(publishable, null, 2)}\n`)
  const packed = execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", outDir], {
    cwd: stage,
    encoding: "utf8"
  }).trim()
  console.log(join(outDir, packed.split("\n").at(-1)!))
}
