/**
 * What each package's shipped code may import: the modules its package.json declares
 * (dependencies and peer dependencies), Node's own, and its own files. One tsc program type-checks
 * the repository (tsconfig.json), where every package resolves every other through the workspace;
 * this is the boundary between them (the domain imports no adapter, the client no server code).
 * And @tender/api depends on `effect` alone: a merchant's install of the client carries no server code.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { builtinModules } from "node:module"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"

const PACKAGES = join(import.meta.dirname, "..", "..")

const files = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : /\.tsx?$/.test(path) ? [path] : []
  })

/** Every module specifier of a file: static imports and re-exports, `import(…)` and `import type`. */
const specifiers = (source: string): Array<string> => [
  ...source.matchAll(/^\s*(?:import|export)\b[^"'`]*?\bfrom\s*["']([^"']+)["']/gm),
  ...source.matchAll(/^\s*import\s*["']([^"']+)["']/gm),
  ...source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)
].map((match) => match[1]!)

/** The package a bare specifier names: `@scope/name` or `name`, without a subpath. */
const packageOf = (specifier: string) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")

/**
 * What a package's src imports beyond its manifest, and why: the adapters' `./testing` entry runs on
 * the vitest its user brings (scripts/pack.ts packs both as optional peers of the published
 * package); the browser SDK's build script loads esbuild, a devDependency, only when it builds.
 */
const BESIDES: Record<string, ReadonlyArray<readonly [RegExp, string]>> = {
  adapters: [[/^src\/testing\//, "vitest"], [/^src\/testing\//, "@effect/vitest"]],
  "browser-sdk": [[/^src\/build\.ts$/, "esbuild"]]
}

const packages = readdirSync(PACKAGES).filter((name) => statSync(join(PACKAGES, name, "src"), { throwIfNoEntry: false })?.isDirectory())

describe("each package's src imports what its package.json declares", () => {
  it("finds the packages", () => {
    expect(packages.sort()).toEqual(["adapters", "api", "browser-sdk", "cli", "client", "domain", "http"])
  })

  for (const name of packages) {
    it(`@tender/${name}`, () => {
      const dir = join(PACKAGES, name)
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
      const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})])
      const offending = files(join(dir, "src")).flatMap((file) =>
        specifiers(readFileSync(file, "utf8")).flatMap((s) => {
          const path = relative(dir, file)
          const at = `${path}: ${s}`
          // Its own files (the CLI reads its version from its package.json), none of another package.
          if (s.startsWith(".")) return relative(dir, join(file, "..", s)).startsWith("..") ? [`${at} (outside the package)`] : []
          if (s.startsWith("node:") || builtinModules.includes(s)) return []
          const besides = (BESIDES[name] ?? []).some(([where, what]) => where.test(path) && what === packageOf(s))
          return declared.has(packageOf(s)) || besides ? [] : [`${at} (not in package.json)`]
        })
      )
      expect(offending).toEqual([])
    })
  }

  it("@tender/api declares effect alone", () => {
    const pkg = JSON.parse(readFileSync(join(PACKAGES, "api", "package.json"), "utf8"))
    expect(Object.keys(pkg.dependencies)).toEqual(["effect"])
    expect(pkg.devDependencies).toBeUndefined()
    expect(pkg.peerDependencies).toBeUndefined()
  })
})
