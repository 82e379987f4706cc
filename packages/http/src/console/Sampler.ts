/**
 * The console's Watch figures (design26): every 10 s the sampler takes the same snapshot /metrics
 * renders (Metrics.MetricsSnapshot: cluster-merged, with the database's gauges) and keeps what the
 * charts read as one point per minute (the minute's latest sample), the last 61 minutes: 60 minutes
 * of differences for the counters. In memory, per process: a restart starts the charts over, and
 * /metrics with Prometheus remains the record.
 */
import { Context, Effect, Layer, Schedule } from "effect"
import { MetricsSnapshot, type WireMetric } from "../Metrics.ts"

export const SAMPLE_EVERY_MS = 10_000
/** 60 minutes of per-minute differences need 61 cumulative points. */
export const POINTS = 61

export interface MinutePoint {
  /** Start of the minute, epoch ms. */
  readonly minute: number
  /** tender_payments_total{operation="create"} by status (cumulative). */
  readonly payments: Readonly<Record<string, number>>
  /** tender_authorizations_total by `channel method` (cumulative). */
  readonly authorizations: Readonly<Record<string, { readonly approved: number; readonly declined: number }>>
  /** tender_webhook_backlog; null when the storage reports none (memory). */
  readonly webhookBacklog: number | null
  readonly reconciliationBacklog: number | null
  /** tender_webhook_first_attempt_lag_seconds's cumulative buckets (`le`, null = +Inf), null before any attempt. */
  readonly lagBuckets: ReadonlyArray<readonly [number | null, number]> | null
}

const gaugeOf = (metrics: ReadonlyArray<WireMetric>, id: string): number | null => {
  const found = metrics.find((m) => m.id === id && m.type === "Gauge")
  return found === undefined ? null : (found.state as { value: number }).value
}

/** One snapshot, reduced to what the charts read. */
export const pointOf = (metrics: ReadonlyArray<WireMetric>, nowMs: number): MinutePoint => {
  const payments: Record<string, number> = {}
  const authorizations: Record<string, { approved: number; declined: number }> = {}
  let lagBuckets: Array<readonly [number | null, number]> | null = null
  for (const metric of metrics) {
    const attributes = metric.attributes ?? {}
    if (metric.id === "tender_payments_total" && metric.type === "Counter" && attributes.operation === "create") {
      const status = attributes.status ?? "unknown"
      payments[status] = (payments[status] ?? 0) + (metric.state as { count: number }).count
    } else if (metric.id === "tender_authorizations_total" && metric.type === "Counter") {
      const key = `${attributes.channel ?? "?"} ${attributes.method ?? "?"}`
      const entry = authorizations[key] ??= { approved: 0, declined: 0 }
      if (attributes.outcome === "approved") entry.approved += (metric.state as { count: number }).count
      else entry.declined += (metric.state as { count: number }).count
    } else if (metric.id === "tender_webhook_first_attempt_lag_seconds" && metric.type === "Histogram") {
      lagBuckets = (metric.state as { buckets: Array<[number | null, number]> }).buckets
    }
  }
  return {
    minute: Math.floor(nowMs / 60_000) * 60_000,
    payments,
    authorizations,
    webhookBacklog: gaugeOf(metrics, "tender_webhook_backlog"),
    reconciliationBacklog: gaugeOf(metrics, "tender_reconciliation_backlog"),
    lagBuckets
  }
}

/** The ring after one more sample: it replaces its minute's point, or starts the next one. */
export const addPoint = (ring: ReadonlyArray<MinutePoint>, point: MinutePoint): Array<MinutePoint> => {
  const last = ring[ring.length - 1]
  const kept = last !== undefined && last.minute === point.minute ? ring.slice(0, -1) : ring.slice()
  kept.push(point)
  return kept.slice(-POINTS)
}

export class Sampler extends Context.Service<Sampler, {
  /** The minute points, oldest first, after a sample taken now (a reload shows the current minute as it stands). */
  readonly points: Effect.Effect<ReadonlyArray<MinutePoint>>
}>()("@tender/http/console/Sampler") {}

export const layer = Layer.effect(
  Sampler,
  Effect.gen(function*() {
    const snapshot = yield* MetricsSnapshot
    let ring: ReadonlyArray<MinutePoint> = []
    const sample = Effect.map(snapshot.take, (metrics) => {
      ring = addPoint(ring, pointOf(metrics, Date.now()))
    })
    // The first sample at once, so the page has a point from the start; a failed one only skips a beat.
    yield* Effect.forkScoped(Effect.repeat(Effect.ignore(sample), Schedule.spaced(SAMPLE_EVERY_MS)))
    return Sampler.of({ points: Effect.andThen(Effect.ignore(sample), Effect.sync(() => ring)) })
  })
)
