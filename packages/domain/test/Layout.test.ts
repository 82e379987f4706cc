/**
 * The domain's shape (docs/domain.md): feature folders and a kernel that imports none of them,
 * no file over 300 lines, and no import cycle between the domain's modules.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, normalize } from "node:path"
import { expect, it } from "vitest"

const root = new URL("../src", import.meta.url).pathname
const sources = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") ? [path] : []
  })
const relative = (path: string) => path.slice(root.length + 1)
const files = sources(root)
/** Every relative import of a module (type-only ones too: a cycle of types is still a knot to read). */
const importsOf = (path: string): Array<string> =>
  [...readFileSync(path, "utf8").matchAll(/^(?:import|export)[^"]*?from "(\.{1,2}\/[^"]+)"/gm)].map((m) => normalize(join(dirname(path), m[1]!)))

it("no domain file is over 300 lines", () => {
  const long = files.map((path) => [relative(path), readFileSync(path, "utf8").split("\n").length] as const).filter(([, lines]) => lines > 300)
  expect(long).toEqual([])
})

it("the kernel imports no feature", () => {
  const outward = files.filter((path) => relative(path).startsWith("kernel/"))
    .flatMap((path) => importsOf(path).filter((target) => !relative(target).startsWith("kernel/")).map((target) => `${relative(path)} → ${relative(target)}`))
  expect(outward).toEqual([])
})

it("no import cycle among the domain's modules", () => {
  const graph = new Map(files.map((path) => [path, importsOf(path)]))
  const state = new Map<string, "open" | "done">()
  const cycles: Array<string> = []
  const visit = (path: string, trail: Array<string>) => {
    if (state.get(path) === "done") return
    if (state.get(path) === "open") {
      cycles.push([...trail.slice(trail.indexOf(path)), path].map(relative).join(" → "))
      return
    }
    state.set(path, "open")
    for (const next of graph.get(path) ?? []) visit(next, [...trail, path])
    state.set(path, "done")
  }
  for (const path of files) visit(path, [])
  expect(cycles).toEqual([])
})
