/**
 * A quick reading of a V8 `.cpuprofile` (from `node --cpu-prof`): where the server's CPU time went,
 * by self time, grouped by package and listed by function.
 *
 *   npx node bench/profile.ts <file.cpuprofile> [top]
 */
import { readFileSync, realpathSync } from "node:fs"
import { fileURLToPath } from "node:url"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}
interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly endTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** Which package (or part of Tender, or of Node) a frame's script belongs to. */
const groupOf = (frame: CallFrame): string => {
  const url = frame.url
  if (url === "") {
    if (frame.functionName === "(garbage collector)") return "(garbage collector)"
    if (frame.functionName === "(idle)" || frame.functionName === "(program)") return frame.functionName
    return "(native)"
  }
  if (url.startsWith("node:")) return "node internals"
  const modules = url.lastIndexOf("/node_modules/")
  if (modules >= 0) {
    const rest = url.slice(modules + "/node_modules/".length).split("/")
    const name = rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]
    if (name.startsWith("@tender/")) return name
    return name === "effect" ? `effect/${rest.includes("dist") ? rest[rest.indexOf("dist") + 1] ?? "" : ""}` : name
  }
  const pkg = /\/packages\/([^/]+)\//.exec(url)
  return pkg !== null ? `@tender/${pkg[1]}` : url
}

const shortUrl = (url: string) => {
  const modules = url.lastIndexOf("/node_modules/")
  if (modules >= 0) return url.slice(modules + "/node_modules/".length)
  const pkg = url.indexOf("/packages/")
  return pkg >= 0 ? url.slice(pkg + 1) : url
}

export interface ProfileSummary {
  readonly totalMs: number
  readonly byGroup: ReadonlyArray<{ readonly name: string; readonly ms: number }>
  readonly byFunction: ReadonlyArray<{ readonly name: string; readonly ms: number }>
}

export const summarize = (file: string, top = 15): ProfileSummary => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfMs = new Map<number, number>()
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = (profile.timeDeltas[i + 1] ?? 0) / 1000
    selfMs.set(profile.samples[i], (selfMs.get(profile.samples[i]) ?? 0) + delta)
  }
  const groups = new Map<string, number>()
  const functions = new Map<string, number>()
  let totalMs = 0
  for (const [id, ms] of selfMs) {
    const frame = byId.get(id)?.callFrame
    if (frame === undefined) continue
    const group = groupOf(frame)
    if (group === "(idle)") continue
    totalMs += ms
    groups.set(group, (groups.get(group) ?? 0) + ms)
    const name = `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ""}`
    functions.set(name, (functions.get(name) ?? 0) + ms)
  }
  const sorted = (map: Map<string, number>) =>
    [...map].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms).slice(0, top)
  return { totalMs, byGroup: sorted(groups), byFunction: sorted(functions) }
}

export const format = (summary: ProfileSummary): string => {
  const pct = (ms: number) => `${((100 * ms) / summary.totalMs).toFixed(1).padStart(5)}%`
  const lines = [`busy CPU (self time, idle excluded): ${(summary.totalMs / 1000).toFixed(1)} s`, "", "by package:"]
  for (const g of summary.byGroup) lines.push(`  ${pct(g.ms)}  ${g.name}`)
  lines.push("", "by function:")
  for (const f of summary.byFunction) lines.push(`  ${pct(f.ms)}  ${f.name}`)
  return lines.join("\n")
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [file, top] = process.argv.slice(2)
  if (file === undefined) {
    console.error("usage: bench/profile.ts <file.cpuprofile> [top]")
    process.exit(2)
  }
  console.log(format(summarize(file, top === undefined ? 15 : Number(top))))
}
