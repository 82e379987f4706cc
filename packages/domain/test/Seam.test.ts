/**
 * The seam stays typed (docs/domain.md, "The seam"): a use case runs its operations through `run`,
 * typed by the services it captured (kernel/Seam.ts). An `any` in an effect's requirements, or a cast
 * of an effect where a context is provided, would let an operation needing an uncaptured service
 * compile and fail only at run time; these greps keep both out.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"

const root = new URL("../src", import.meta.url).pathname
const sources = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") ? [path] : []
  })
const files = sources(root).map((path) => ({ path: path.slice(root.length + 1), text: readFileSync(path, "utf8") }))
/** Where a context meets operations: the use cases' facades (and the seam itself). */
const providing = files.filter((f) => /Effect\.provide(Context)?\(|\b(seam|runWith)[<(]/.test(f.text))

it("finds the use cases' facades", () => {
  const found = providing.map((f) => f.path)
  for (const facade of ["payments/Payments.ts", "money-out/Outflows.ts", "money-out/Transfers.ts", "channels/Channels.ts", "webhooks/Webhooks.ts"]) {
    expect(found).toContain(facade)
  }
})

it("no effect in the domain requires `any`", () => {
  const anyRequirements = files.flatMap((f) =>
    f.text.split("\n").flatMap((line, i) => /Effect(\.Effect)?<[^\n]*,\s*any\s*>/.test(line) ? [`${f.path}:${i + 1}: ${line.trim()}`] : [])
  )
  expect(anyRequirements).toEqual([])
})

it("no use case casts an effect where it provides its context", () => {
  const casts = providing.flatMap((f) =>
    f.text.split("\n").flatMap((line, i) => /\bas Effect(\.Effect)?</.test(line) ? [`${f.path}:${i + 1}: ${line.trim()}`] : [])
  )
  expect(casts).toEqual([])
})

it("no facade widens a method's errors to the whole vocabulary", () => {
  // A method declares what its operations raise (Seam.ErrorOf), so callers see what can actually fail.
  const widened = providing.flatMap((f) =>
    f.text.split("\n").flatMap((line, i) => /Effect(\.Effect)?<[^\n]*,\s*DomainError\s*>/.test(line) ? [`${f.path}:${i + 1}: ${line.trim()}`] : [])
  )
  expect(widened).toEqual([])
})
