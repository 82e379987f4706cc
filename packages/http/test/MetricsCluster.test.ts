/**
 * /metrics across a node:cluster (issue 13, item 5): a scrape reaches one child, and reports the
 * whole cluster — the child asks the primary (`Metrics.aggregateInPrimary`), which merges every
 * child's snapshot: counters and histogram buckets add, `tender_processes` counts the children.
 * Real processes: a primary and two children on one port (support/ClusterMetrics.ts).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../src/testing/TestServer.ts"

const ROOT = join(import.meta.dirname, "../../..")
// Node 22.18+ runs the TypeScript fixture as is (the CLI's own runtime, bin/tender.js).
const NODE = join(ROOT, "node_modules/.bin/node")
const FIXTURE = join(import.meta.dirname, "support/ClusterMetrics.ts")

const sample = (text: string, line: string) =>
  Number(text.split("\n").find((l) => l.startsWith(line + " "))?.slice(line.length + 1))

describe("metrics of a cluster", () => {
  let primary: ChildProcess
  let port: number

  beforeAll(async () => {
    port = await freePort()
    primary = spawn(NODE, [FIXTURE], { cwd: ROOT, env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "pipe", "inherit"] })
    await new Promise<void>((resolve, reject) => {
      let out = ""
      primary.stdout!.on("data", (chunk) => {
        out += String(chunk)
        if (out.includes(`{"ready":true}`)) resolve()
      })
      primary.once("exit", (code) => reject(new Error(`the cluster exited (${code}) before listening: ${out}`)))
    })
  })
  afterAll(() => {
    primary?.kill("SIGTERM")
  })

  it("every scrape, whichever child it reaches, sums both children", async () => {
    // Round-robin between the children: several scrapes reach both.
    for (let i = 0; i < 4; i++) {
      const response = await fetch(`http://127.0.0.1:${port}/metrics`)
      expect(response.status).toBe(200)
      const text = await response.text()
      // Child 1 recorded one request, child 2 two.
      expect(sample(text, `tender_http_requests_total{method="GET",route="/v1/orders/:id",status="200"}`)).toBe(3)
      expect(sample(text, `tender_http_request_duration_seconds_count{method="GET",route="/v1/orders/:id"}`)).toBe(3)
      // Observed 0.004 (each child) and 0.104 (child 2): buckets add per boundary.
      expect(sample(text, `tender_http_request_duration_seconds_bucket{method="GET",route="/v1/orders/:id",le="0.005"}`)).toBe(2)
      expect(sample(text, `tender_http_request_duration_seconds_bucket{method="GET",route="/v1/orders/:id",le="0.25"}`)).toBe(3)
      expect(sample(text, `tender_http_request_duration_seconds_sum{method="GET",route="/v1/orders/:id"}`)).toBeCloseTo(0.112, 6)
      expect(sample(text, "tender_processes")).toBe(2)
      expect(sample(text, "tender_metrics_cluster_missing")).toBe(0)
    }
  })
})
