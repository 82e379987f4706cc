/**
 * The production topology with real processes (scripts/topology.ts): one `tender serve
 * --no-background`, two `tender worker` processes, a webhook receiver, over one data dir (and
 * REDIS_URL when set), under a short load. The script checks every payment and every event's
 * delivery itself and exits 0 only when all held; this runs it as CI does.
 */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { expect, it } from "vitest"

const ROOT = path.resolve(import.meta.dirname, "../../..")

it("scripts/topology.ts: two server processes (serve --workers 2) and two workers take a short load; every payment succeeds, every event arrives", async () => {
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      process.execPath,
      ["scripts/topology.ts", "--charges", "30", "--captures", "6", "--connections", "6", "--servers-workers", "2", "--workers", "2", "--timeout", "100"],
      { cwd: ROOT, env: process.env, timeout: 110_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error as { code?: number }).code ?? null, output: `${stdout}\n${stderr}` })
    )
  })
  expect(output).toContain("topology: ok")
  expect(output).toMatch(/events: 43 \(.*\), 43 delivered/)
  expect(code).toBe(0)
}, 120_000)
