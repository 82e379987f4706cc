/**
 * Metrics the domain's workers record (issue 13, operations). Effect's Metric registry is in-process
 * state, no I/O: the HTTP server's /metrics exposes it (packages/http/src/Metrics.ts).
 */
import { Metric } from "effect"
import type { RoutingReason } from "../channels/RoutingModel.ts"

/**
 * Commit → first attempt of a webhook delivery, in seconds (target: p99 ≤ 1 s under load). Observed by
 * the dispatcher of the process that makes the attempt (`serve`, or `tender worker`).
 */
export const webhookFirstAttemptLag = Metric.histogram("tender_webhook_first_attempt_lag_seconds", {
  description: "Seconds from a webhook delivery's creation (its event's commit) to its first attempt",
  boundaries: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]
})

/**
 * Payment attempts the provider answered, by outcome (`approved` or `declined`), channel (the
 * provider's name: sandbox, stripe, adyen, or http for an operator's own) and payment method code:
 * the operator console's authorization rate (issue 26). Labels come from fixed sets only.
 */
export const authorizationsTotal = Metric.counter("tender_authorizations_total", {
  description: "Payment attempts answered by the provider, by channel (provider name), payment method and outcome (approved, declined)"
})

const authorizationTagged = new Map<string, Metric.Counter<number>>()

/** Counts one answered attempt; the caller passes low-cardinality labels (a known provider name and method code). */
export const observeAuthorization = (channel: string, method: string, outcome: "approved" | "declined") => {
  const key = `${channel} ${method} ${outcome}`
  let metric = authorizationTagged.get(key)
  if (metric === undefined) {
    metric = Metric.withAttributes(authorizationsTotal, { channel, method, outcome })
    authorizationTagged.set(key, metric)
  }
  return Metric.update(metric, 1)
}

/**
 * Routing decisions by reason (issue 27: rule, split, success_rate, exploration, breaker, default,
 * retry): how often each way of choosing a channel decides, so an operator sees exploration and
 * breakers at work. Observed where a payment's route is chosen (one per try).
 */
export const routingDecisionsTotal = Metric.counter("tender_routing_decisions_total", {
  description: "Channels chosen for a payment's try, by the reason of the choice (rule, split, success_rate, exploration, breaker, default, retry)"
})

const routingTagged = new Map<RoutingReason, Metric.Counter<number>>()

/** Counts one routing decision; the reason is one of ROUTING_REASONS (a fixed set: a safe label). */
export const observeRoutingDecision = (reason: RoutingReason) => {
  let metric = routingTagged.get(reason)
  if (metric === undefined) {
    metric = Metric.withAttributes(routingDecisionsTotal, { reason })
    routingTagged.set(reason, metric)
  }
  return Metric.update(metric, 1)
}
