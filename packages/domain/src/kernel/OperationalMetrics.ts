/**
 * Metrics the domain's workers record (issue 13, operations). Effect's Metric registry is in-process
 * state, no I/O: the HTTP server's /metrics exposes it (packages/http/src/Metrics.ts).
 */
import { Metric } from "effect"

/**
 * Commit → first attempt of a webhook delivery, in seconds (target: p99 ≤ 1 s under load). Observed by
 * the dispatcher of the process that makes the attempt (`serve`, or `tender worker`).
 */
export const webhookFirstAttemptLag = Metric.histogram("tender_webhook_first_attempt_lag_seconds", {
  description: "Seconds from a webhook delivery's creation (its event's commit) to its first attempt",
  boundaries: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]
})
