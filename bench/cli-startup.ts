/**
 * CLI start-up: the median wall time of whole `tender` processes, from spawn to exit, for commands
 * that do little work, so what is measured is mostly loading modules. Run with the pinned Node:
 * `node_modules/.bin/node bench/cli-startup.ts [--runs 10] [--no-server]`. The last figure is an
 * account command against a running `tender serve` (embedded PostgreSQL on a temporary data dir).
 * Each command is timed twice: run from source (bin/tender.js, as in the repository) and bundled
 * (packages/cli/scripts/bundle.ts: what `@tender/cli` ships and the process tests spawn).
 */
import { execFileSync } from "node:child_process"
import { parseArgs } from "node:util"
import { bundle } from "@tender/cli/scripts/bundle"
import { CLI, machine, makeRun, positive, ROOT, startTender } from "./harness.ts"

const { values } = parseArgs({ options: { runs: { type: "string", default: "10" }, "no-server": { type: "boolean", default: false } } })
const runs = positive("runs", values.runs)

/** Median ms of `runs` runs of `tender <args>` from `entry` (one unmeasured warm-up first); a failed run throws. */
const timeOf = (entry: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): number => {
  const once = () => {
    const t0 = performance.now()
    execFileSync(process.execPath, [entry, ...args], { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] })
    return performance.now() - t0
  }
  once()
  const times = Array.from({ length: runs }, once).sort((a, b) => a - b)
  return times.length % 2 === 1 ? times[(times.length - 1) / 2] : (times[times.length / 2 - 1] + times[times.length / 2]) / 2
}

const BUNDLED = await bundle()
/** One line: from source, then bundled. */
const time = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) => [timeOf(CLI, args, env), timeOf(BUNDLED, args, env)] as const
const report = (label: string, [source, bundled]: readonly [number, number]) =>
  console.log(`${label.padEnd(60)} ${source.toFixed(0).padStart(6)} ms   bundled ${bundled.toFixed(0).padStart(6)} ms`)

const run = makeRun({ budgetMs: 600_000, keepData: false })
console.log(machine())
console.log(`NODE_COMPILE_CACHE=${process.env.NODE_COMPILE_CACHE ?? "(unset)"}, median of ${runs} runs\n`)
try {
  const env = run.env
  report("tender --help", time(["--help"], env))
  report("tender accounts --help", time(["accounts", "--help"], env))
  report("tender --storage memory accounts list --json", time(["--storage", "memory", "accounts", "list", "--json"], env))
  if (!values["no-server"]) {
    await startTender(run)
    const { account_id } = await run.createAccount("cli-startup")
    report("tender accounts get ID --json (against a running serve)", time(["accounts", "get", account_id, "--json", "--data-dir", run.dataDir], env))
  }
  await run.finish(0)
} catch (error) {
  console.error(error)
  await run.finish(1)
}
