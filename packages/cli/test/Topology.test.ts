/**
 * The production topology with real processes (scripts/topology.ts): one `tender serve
 * --no-background`, two `tender worker` processes, a webhook receiver, over one data dir (and
 * REDIS_URL when set), under a short load. The script checks every payment and every event's
 * delivery itself and exits 0 only when all held; this runs it as CI does. And once with a
 * streaming replica read through TENDER_READ_DATABASE_URL (`--replica`).
 */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { expect, it } from "vitest"

const ROOT = path.resolve(import.meta.dirname, "../../..")

/** Runs the topology script with `args`; its exit code and everything it printed. */
const topology = (args: ReadonlyArray<string>, timeoutMs: number) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      process.execPath,
      ["scripts/topology.ts", ...args],
      { cwd: ROOT, env: process.env, timeout: timeoutMs },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error as { code?: number }).code ?? null, output: `${stdout}\n${stderr}` })
    )
  })

it("scripts/topology.ts: two server processes (serve --workers 2) and two workers take a short load; every payment succeeds, every event arrives", async () => {
  const { code, output } = await topology(["--charges", "30", "--captures", "6", "--connections", "6", "--servers-workers", "2", "--workers", "2", "--timeout", "100"], 110_000)
  expect(output).toContain("topology: ok")
  expect(output).toMatch(/events: 43 \(.*\), 43 delivered/)
  expect(code).toBe(0)
}, 120_000)

it("scripts/topology.ts --replica: reads go to a streaming replica under the load, and no charge read back at once answers 404", async () => {
  const { code, output } = await topology(
    ["--replica", "--read-seconds", "4", "--charges", "30", "--captures", "6", "--connections", "6", "--servers-workers", "1", "--workers", "1", "--timeout", "80"],
    90_000
  )
  expect(output).toContain("topology: ok")
  expect(output).toMatch(/read-after-write 30 GETs, 0 404s/)
  expect(output).toMatch(/statements committed in [\d.]+ s: replica [1-9]\d* /)
  expect(output).toMatch(/replica caught up with 37\/37 orders/)
  expect(code).toBe(0)
}, 100_000)
