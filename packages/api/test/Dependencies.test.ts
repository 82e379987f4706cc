/**
 * @tender/api depends on `effect` alone (and Node's own modules): a merchant's install of the
 * client carries no server code. Every source file's imports are read and checked.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"

const SRC = join(import.meta.dirname, "..", "src")

const files = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : []
  })

/** Every module specifier of a file: static imports and re-exports, `import(…)` and `import type`. */
const specifiers = (source: string): Array<string> => [
  ...source.matchAll(/^\s*(?:import|export)\b[^"'`]*?\bfrom\s*["']([^"']+)["']/gm),
  ...source.matchAll(/^\s*import\s*["']([^"']+)["']/gm),
  ...source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)
].map((match) => match[1])

const allowed = (specifier: string) =>
  specifier === "effect" || specifier.startsWith("effect/") || specifier.startsWith("node:") ||
  specifier.startsWith("./") || specifier.startsWith("../")

describe("@tender/api's dependencies", () => {
  const sources = files(SRC)

  it("has sources to check", () => {
    expect(sources.length).toBeGreaterThan(10)
  })

  it("imports only effect, effect/*, node:* and its own modules", () => {
    const offending = sources.flatMap((file) =>
      specifiers(readFileSync(file, "utf8")).filter((s) => !allowed(s)).map((s) => `${relative(SRC, file)}: ${s}`)
    )
    expect(offending).toEqual([])
  })

  it("its relative imports stay inside packages/api/src", () => {
    const escaping = sources.flatMap((file) =>
      specifiers(readFileSync(file, "utf8"))
        .filter((s) => s.startsWith("."))
        .filter((s) => relative(SRC, join(file, "..", s)).startsWith(".."))
        .map((s) => `${relative(SRC, file)}: ${s}`)
    )
    expect(escaping).toEqual([])
  })

  it("package.json declares effect alone", () => {
    const pkg = JSON.parse(readFileSync(join(SRC, "..", "package.json"), "utf8"))
    expect(Object.keys(pkg.dependencies)).toEqual(["effect"])
    expect(pkg.devDependencies).toBeUndefined()
  })
})
