/**
 * The console's Watch figures (design26): every 10 s the sampler takes the same snapshot /metrics
 * renders (Metrics.MetricsSnapshot: cluster-merged, with the database's gauges) and keeps what the
 * charts read as one point per minute (the minute's latest sample), the last 60 minutes, and the
 * origin the counters' differences start from: the first sample taken, then the point that fell out
 * of the window (so the first minute's payments are counted too). In memory, per process: a restart
 * starts the charts over, and /metrics with Prometheus remains the record.
 */
import { Context, Effect, Layer, Schedule } from "effect"
import { MetricsSnapshot, type WireMetric } from "../Metrics.ts"

const SAMPLE_EVERY_MS = 10_000
/** Minutes kept. */
export const POINTS = 60

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
const pointOf = (metrics: ReadonlyArray<WireMetric>, nowMs: number): MinutePoint => {
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

/** The minute points, oldest first, and the cumulative figures the first point's differences start from. */
export interface Window {
  readonly origin: MinutePoint | undefined
  readonly points: ReadonlyArray<MinutePoint>
}

export const EMPTY_WINDOW: Window = { origin: undefined, points: [] }

/**
 * The window after one more sample: it replaces its minute's point, or starts the next one; the very
 * first sample is also the origin, and a point that falls out of the window becomes it.
 */
export const addPoint = (window: Window, point: MinutePoint): Window => {
  const last = window.points[window.points.length - 1]
  const kept = last !== undefined && last.minute === point.minute ? window.points.slice(0, -1) : window.points.slice()
  kept.push(point)
  const dropped = kept.length > POINTS ? kept[kept.length - POINTS - 1] : undefined
  return { origin: dropped ?? window.origin ?? point, points: kept.slice(-POINTS) }
}

export class Sampler extends Context.Service<Sampler, {
  /** The window after a sample taken now (a reload shows the current minute as it stands). */
  readonly window: Effect.Effect<Window>
}>()("@tender/http/console/Sampler") {}

export const layer = Layer.effect(
  Sampler,
  Effect.gen(function*() {
    const snapshot = yield* MetricsSnapshot
    let window = EMPTY_WINDOW
    const sample = Effect.map(snapshot.take, (metrics) => {
      window = addPoint(window, pointOf(metrics, Date.now()))
    })
    // The first sample at once, so the page has a point from the start; a failed one only skips a beat.
    yield* Effect.forkScoped(Effect.repeat(Effect.ignore(sample), Schedule.spaced(SAMPLE_EVERY_MS)))
    return Sampler.of({ window: Effect.andThen(Effect.ignore(sample), Effect.sync(() => window)) })
  })
)
