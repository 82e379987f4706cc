/**
 * Prometheus metrics (issue 13, operations): GET /metrics in the text exposition format, through
 * Effect's Metric registry and its PrometheusMetrics formatter.
 *
 *   tender_http_requests_total{method,route,status}           every response, by route template
 *   tender_http_request_duration_seconds{method,route}         latency histogram
 *   tender_payments_total{operation,status,method}             payments by outcome (never card data)
 *   tender_authorizations_total{channel,method,outcome}        attempts the provider answered (domain/OperationalMetrics)
 *   tender_routing_decisions_total{reason}                     channels chosen, by why (domain/OperationalMetrics)
 *   tender_channel_breaker_open{channel}                       1 while a channel's breaker is open or half open (ChannelHealth)
 *   tender_webhook_first_attempt_lag_seconds                   commit → first attempt (domain/Telemetry)
 *   tender_webhook_backlog, tender_webhook_oldest_unattempted_seconds, tender_reconciliation_backlog,
 *   tender_db_connections{state}                               from the database, at scrape time
 *   tender_processes, process_cpu_seconds_total, process_resident_memory_bytes, nodejs_heap_used_bytes,
 *   nodejs_eventloop_delay_p99_seconds                         process basics
 *
 * Labels are route templates (`/v1/orders/:id`), never raw paths: no ids, references or card data.
 *
 * Clusters (`tender serve --workers N`): a scrape reaches one child. The child asks the primary,
 * which asks every child for its snapshot and merges them (counters, histogram buckets and process
 * gauges add; the event-loop delay takes the worst) — `aggregateInPrimary` is the primary's side.
 * Figures from the database are cluster-wide already: the scraped child adds them after the merge,
 * as it adds the breakers (every process of a deployment shares one view of the channels' health).
 */
import cluster, { type Worker } from "node:cluster"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { Cause, Clock, Config, Context, Effect, Layer, Metric, Option, Redacted, Tracer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { Operations } from "@tender/adapters/Operations"
import * as Breaker from "@tender/domain/channels/Breaker"
import { ChannelHealth } from "@tender/domain/channels/RoutingPorts"
import { DEFAULT_RECONCILE } from "@tender/domain/payments/operations/Reconcile"
import { findMethod } from "@tender/domain/payments/PaymentMethods"
import { sameSecret } from "./SameSecret.ts"

export const METRICS_PATH = "/metrics"

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const requestsTotal = Metric.counter("tender_http_requests_total", { description: "HTTP responses by method, route template and status" })
const requestDuration = Metric.histogram("tender_http_request_duration_seconds", {
  description: "HTTP request latency by method and route template, from the gateway's view",
  boundaries: LATENCY_BUCKETS
})
const paymentsTotal = Metric.counter("tender_payments_total", {
  description: "Payment operations by outcome: the resulting status, or the error code; method is the payment method code"
})

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

/**
 * The tagged metrics of each label set, made once: tagging copies the metric and its key, which a
 * request should not pay for on every response.
 */
const tagged = new Map<string, { readonly count: Metric.Counter<number>; readonly duration: Metric.Histogram<number> }>()

const UNMATCHED = "unmatched"

/** Records one response (the gateway calls it once per request): its route template, never its path. */
export const observeRequest = (method: string, route: string | undefined, status: number, seconds: number) => {
  const m = KNOWN_METHODS.has(method) ? method : "OTHER"
  const r = route ?? UNMATCHED
  const key = `${m} ${r} ${status}`
  let metrics = tagged.get(key)
  if (metrics === undefined) {
    metrics = {
      count: Metric.withAttributes(requestsTotal, { method: m, route: r, status: String(status) }),
      duration: Metric.withAttributes(requestDuration, { method: m, route: r })
    }
    tagged.set(key, metrics)
  }
  const { count, duration } = metrics
  // Synchronous updates in the fiber's context: on every request, two effects' worth of runtime is not free.
  return Effect.withFiber((fiber) => {
    count.updateUnsafe(1, fiber.context)
    duration.updateUnsafe(seconds, fiber.context)
    return Effect.void
  })
}

const paymentTagged = new Map<string, Metric.Counter<number>>()

/**
 * Records a payment operation's outcome: the payment's status, or the error code it was refused
 * with. `method` must be a known payment method code (the caller checks): free text never becomes a label.
 */
export const observePayment = (operation: string, outcome: string, method: string) => {
  const key = `${operation} ${outcome} ${method}`
  let metric = paymentTagged.get(key)
  if (metric === undefined) {
    metric = Metric.withAttributes(paymentsTotal, { operation, status: outcome, method })
    paymentTagged.set(key, metric)
  }
  return Metric.update(metric, 1)
}

/**
 * Names the request on its server span (the router adds `http.route`): only when a tracer exports
 * spans (OTEL_EXPORTER_OTLP_ENDPOINT); without one there is no span and this costs a lookup.
 */
export const annotateSpan = (requestId: string) =>
  Effect.withFiber((fiber) => {
    const span = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
    if (span !== undefined && span._tag === "Span" && span.sampled) span.attribute("tender.request_id", requestId)
    return Effect.void
  })

/**
 * Counts a payment operation by its outcome: the payment's status when it succeeds, the error
 * code when it is refused or fails. The method label is a known payment method code or `other`
 * (`none` for operations that name none): never what a client typed, never card data.
 */
export const trackPayment = (operation: "create" | "capture" | "void", methodCode?: string | undefined) =>
<A extends { readonly status: string }, E extends { readonly code: string }, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const method = methodCode === undefined ? "none" : findMethod(methodCode) !== undefined ? methodCode : "other"
  return Effect.onExit(effect, (exit) => {
    if (exit._tag === "Success") return observePayment(operation, exit.value.status, method)
    // A client that hung up is no outcome of ours: counting it as internal_error would page someone.
    if (Cause.hasInterruptsOnly(exit.cause)) return Effect.void
    const failure = Cause.findErrorOption(exit.cause)
    return Option.isSome(failure) ? observePayment(operation, failure.value.code, method) : observePayment(operation, "internal_error", method)
  })
}

// --- process basics ------------------------------------------------------------------------

const processes = Metric.gauge("tender_processes", { description: "Server processes reporting (a cluster's children)" })
const cpuSeconds = Metric.counter("process_cpu_seconds_total", { description: "User and system CPU time spent, in seconds" })
const residentMemory = Metric.gauge("process_resident_memory_bytes", { description: "Resident memory size in bytes" })
const heapUsed = Metric.gauge("nodejs_heap_used_bytes", { description: "V8 heap in use, in bytes" })
const loopDelay = Metric.gauge("nodejs_eventloop_delay_p99_seconds", {
  description: "99th percentile of the event loop's delay since the previous scrape (a cluster reports its worst process)"
})

/** Gauges that merge across processes by their maximum; every other gauge adds. */
const MAX_GAUGES = new Set(["nodejs_eventloop_delay_p99_seconds"])

let delayMonitor: ReturnType<typeof monitorEventLoopDelay> | undefined
let cpuReported = 0

/** This process's basics, written into the registry just before a snapshot. */
const sampleProcess = Effect.suspend(() => {
  if (delayMonitor === undefined) {
    delayMonitor = monitorEventLoopDelay({ resolution: 10 })
    delayMonitor.enable()
  }
  const usage = process.cpuUsage()
  const cpu = (usage.user + usage.system) / 1e6
  const delta = cpu - cpuReported
  cpuReported = cpu
  const delay = delayMonitor.percentile(99) / 1e9
  delayMonitor.reset()
  return Effect.all([
    Metric.update(processes, 1),
    Metric.update(cpuSeconds, delta),
    Metric.update(residentMemory, process.memoryUsage.rss()),
    Metric.update(heapUsed, process.memoryUsage().heapUsed),
    Metric.update(loopDelay, Number.isFinite(delay) ? delay : 0)
  ], { discard: true })
})

// --- snapshots across processes --------------------------------------------------------------

/**
 * A snapshot as it crosses IPC (JSON): histogram boundaries and counts as plain numbers, the
 * infinite boundary as null.
 */
export interface WireMetric {
  readonly id: string
  readonly type: Metric.Metric.Type
  readonly description: string | undefined
  readonly attributes: Record<string, string> | undefined
  readonly state: unknown
}

const toWire = (snapshot: ReadonlyArray<Metric.Metric.Snapshot>): Array<WireMetric> =>
  snapshot.flatMap((metric): Array<WireMetric> => {
    const base = { id: metric.id, type: metric.type, description: metric.description, attributes: metric.attributes as Record<string, string> | undefined }
    switch (metric.type) {
      case "Counter": {
        const state = metric.state as Metric.CounterState<number | bigint>
        return [{ ...base, state: { count: Number(state.count) } }]
      }
      case "Gauge": {
        const state = metric.state as Metric.GaugeState<number | bigint>
        return [{ ...base, state: { value: Number(state.value) } }]
      }
      case "Histogram": {
        const state = metric.state as Metric.HistogramState
        return [{
          ...base,
          state: { ...state, buckets: state.buckets.map(([le, n]) => [Number.isFinite(le) ? le : null, n]) }
        }]
      }
      // Frequencies and summaries are not used by Tender (a summary's quantiles cannot be merged).
      default:
        return []
    }
  })

const fromWireBuckets = (buckets: ReadonlyArray<readonly [number | null, number]>): Array<[number, number]> =>
  buckets.map(([le, n]) => [le === null ? Number.POSITIVE_INFINITY : le, n])

const keyOf = (metric: WireMetric) =>
  `${metric.id}\u0000${metric.type}\u0000${JSON.stringify(Object.entries(metric.attributes ?? {}).sort(([a], [b]) => a < b ? -1 : 1))}`

/**
 * Merges the snapshots of several processes: counters and histogram buckets add; gauges add (the
 * cluster's total memory, connections, processes) except MAX_GAUGES, which take the worst.
 */
export const merge = (snapshots: ReadonlyArray<ReadonlyArray<WireMetric>>): Array<WireMetric> => {
  const merged = new Map<string, WireMetric>()
  for (const snapshot of snapshots) {
    for (const metric of snapshot) {
      const key = keyOf(metric)
      const existing = merged.get(key)
      if (existing === undefined) {
        merged.set(key, metric)
        continue
      }
      switch (metric.type) {
        case "Counter": {
          const a = existing.state as { count: number }, b = metric.state as { count: number }
          merged.set(key, { ...existing, state: { count: a.count + b.count } })
          break
        }
        case "Gauge": {
          const a = existing.state as { value: number }, b = metric.state as { value: number }
          merged.set(key, { ...existing, state: { value: MAX_GAUGES.has(metric.id) ? Math.max(a.value, b.value) : a.value + b.value } })
          break
        }
        case "Histogram": {
          type Wire = { buckets: Array<[number | null, number]>; count: number; min: number; max: number; sum: number }
          const a = existing.state as Wire, b = metric.state as Wire
          // Every process declares the same boundaries (one source): the cumulative counts add.
          merged.set(key, {
            ...existing,
            state: {
              buckets: a.buckets.map(([le, n], i) => [le, n + (b.buckets[i]?.[1] ?? 0)]),
              count: a.count + b.count,
              min: Math.min(a.min, b.min),
              max: Math.max(a.max, b.max),
              sum: a.sum + b.sum
            }
          })
          break
        }
        default:
          break
      }
    }
  }
  return [...merged.values()]
}

/** The exposition text of wire snapshots, by Effect's own formatter over a registry holding them. */
export const format = (metrics: ReadonlyArray<WireMetric>): string => {
  const registry: Metric.MetricRegistry = new Map()
  for (const metric of metrics) {
    const state = metric.type === "Histogram"
      ? { ...(metric.state as object), buckets: fromWireBuckets((metric.state as { buckets: Array<[number | null, number]> }).buckets) }
      : metric.state
    registry.set(keyOf(metric), {
      id: metric.id,
      type: metric.type,
      description: metric.description,
      attributes: metric.attributes,
      hooks: { get: () => state, update: () => {}, modify: () => {} }
    } as unknown as Metric.MetricRegistry extends Map<string, infer V> ? V : never)
  }
  return PrometheusMetrics.formatUnsafe(Context.make(Metric.MetricRegistry, registry))
}

/** This process's metrics, sampled now, as they cross IPC. */
const localSnapshot = Effect.andThen(sampleProcess, Effect.map(Metric.snapshot, toWire))

// --- the cluster protocol (node:cluster IPC) -------------------------------------------------

const ASK = "tender.metrics.ask"
const COLLECT = "tender.metrics.collect"
const SNAPSHOT = "tender.metrics.snapshot"
const MERGED = "tender.metrics.merged"

type Message =
  | { readonly tender: typeof ASK; readonly id: number }
  | { readonly tender: typeof COLLECT; readonly id: number }
  | { readonly tender: typeof SNAPSHOT; readonly id: number; readonly metrics: Array<WireMetric> }
  | { readonly tender: typeof MERGED; readonly id: number; readonly metrics: Array<WireMetric>; readonly missing: number }

const isMessage = (value: unknown): value is Message =>
  typeof value === "object" && value !== null && typeof (value as { tender?: unknown }).tender === "string" &&
  (value as { tender: string }).tender.startsWith("tender.metrics.")

/** How long the primary waits for the children's snapshots; a child that has not answered is left out (and counted). */
export const COLLECT_TIMEOUT_MS = 2_000

/**
 * The primary's side, to call once in the primary of a `node:cluster` (the `serve --workers N`
 * primary): answers a child's request for the cluster's metrics by asking every live child for its
 * snapshot and merging them. Returns a function that stops answering.
 */
export const aggregateInPrimary = (options: { readonly timeoutMs?: number } = {}): () => void => {
  const timeoutMs = options.timeoutMs ?? COLLECT_TIMEOUT_MS
  let next = 0
  const ignoreSendError = () => {}
  const pending = new Map<number, { readonly answers: Array<Array<WireMetric>>; readonly waiting: Set<number>; readonly done: () => void }>()

  const onMessage = (worker: Worker, message: unknown) => {
    if (!isMessage(message)) return
    if (message.tender === SNAPSHOT) {
      const round = pending.get(message.id)
      if (round === undefined || !round.waiting.delete(worker.id)) return
      round.answers.push(message.metrics)
      if (round.waiting.size === 0) round.done()
      return
    }
    if (message.tender !== ASK) return
    const id = ++next
    const children = Object.values(cluster.workers ?? {}).filter((child): child is Worker => child !== undefined && child.isConnected())
    const answers: Array<Array<WireMetric>> = []
    const waiting = new Set(children.map((child) => child.id))
    const timer = setTimeout(() => finish(), timeoutMs)
    const finish = () => {
      clearTimeout(timer)
      if (!pending.delete(id)) return
      if (worker.isConnected()) {
        // A callback, so a child that died since isConnected() was read fails this send quietly
        // instead of raising EPIPE as an uncaught error that would take the primary down.
        worker.send({ tender: MERGED, id: message.id, metrics: merge(answers), missing: waiting.size } satisfies Message, undefined, ignoreSendError)
      }
    }
    pending.set(id, { answers, waiting, done: finish })
    for (const child of children) child.send({ tender: COLLECT, id } satisfies Message, undefined, ignoreSendError)
    if (waiting.size === 0) finish()
  }
  cluster.on("message", onMessage)
  return () => {
    cluster.off("message", onMessage)
  }
}

/** In a cluster child: answers the primary's collection rounds with this process's snapshot. */
const answerCollections = (context: Context.Context<never>) => {
  const onMessage = (message: unknown) => {
    if (!isMessage(message) || message.tender !== COLLECT) return
    const metrics = Effect.runSyncWith(context)(localSnapshot)
    process.send?.({ tender: SNAPSHOT, id: message.id, metrics } satisfies Message)
  }
  process.on("message", onMessage)
  return () => {
    process.off("message", onMessage)
  }
}

let asked = 0
const waitingForPrimary = new Map<number, (answer: { readonly metrics: Array<WireMetric>; readonly missing: number } | undefined) => void>()

/** In a cluster child: the cluster's merged metrics, or undefined when the primary does not answer in time. */
const askPrimary = Effect.callback<{ readonly metrics: Array<WireMetric>; readonly missing: number } | undefined>((resume) => {
  const id = ++asked
  const timer = setTimeout(() => {
    waitingForPrimary.delete(id)
    resume(Effect.succeed(undefined))
  }, COLLECT_TIMEOUT_MS + 500)
  waitingForPrimary.set(id, (answer) => {
    clearTimeout(timer)
    waitingForPrimary.delete(id)
    resume(Effect.succeed(answer))
  })
  process.send?.({ tender: ASK, id } satisfies Message)
  return Effect.sync(() => {
    clearTimeout(timer)
    waitingForPrimary.delete(id)
  })
})

const onMerged = (message: unknown) => {
  if (isMessage(message) && message.tender === MERGED) waitingForPrimary.get(message.id)?.({ metrics: message.metrics, missing: message.missing })
}

/** Children a cluster scrape lacks (they did not answer in time); -1: the primary did not answer, this child's figures only. */
const clusterMissing = (value: number): WireMetric => ({
  id: "tender_metrics_cluster_missing",
  type: "Gauge",
  description: "Cluster children whose figures this scrape lacks; -1 when the primary did not answer (this child's only)",
  attributes: undefined,
  state: { value }
})

// --- gauges from the database ----------------------------------------------------------------

/** Backlog queries run at most this often, however often (and through however many children) Prometheus scrapes. */
export const BACKLOG_CACHE_MS = 5_000

const databaseGauges = (backlogs: Operations["Service"]["backlogs"], reconcileGraceMs: number) => {
  let cached: { readonly at: number; readonly metrics: Array<WireMetric> } | undefined
  const gauge = (id: string, description: string, value: number, attributes?: Record<string, string>): WireMetric =>
    ({ id, type: "Gauge", description, attributes, state: { value } })
  return Effect.suspend(() => {
    const now = Date.now()
    if (cached !== undefined && now - cached.at < BACKLOG_CACHE_MS) return Effect.succeed(cached.metrics)
    return Effect.map(backlogs({ reconcileGraceMs }), (figures) => {
      const metrics = figures === undefined ? [] : [
        gauge("tender_webhook_backlog", "Webhook deliveries due now (pending or failed, not paused)", figures.webhooksDue),
        gauge(
          "tender_webhook_oldest_unattempted_seconds",
          "Age of the oldest due webhook delivery never attempted: the current commit-to-first-attempt lag",
          figures.webhookOldestUnattemptedSeconds
        ),
        gauge(
          "tender_reconciliation_backlog",
          "Provider calls not yet recorded whose grace has passed (what reconciliation still has to settle)",
          figures.reconciliationDue
        ),
        ...figures.connections.map((row) =>
          gauge("tender_db_connections", "Database connections held by Tender's processes, by state (pg_stat_activity)", row.count, { state: row.state })
        )
      ]
      cached = { at: now, metrics }
      return metrics
    })
  })
}

// --- channels' breakers ------------------------------------------------------------------------

/**
 * One gauge per channel whose breaker is not at rest (ChannelHealth.breakers): 1 while open or half
 * open, 0 while closed with unavailable answers counted towards opening it. A breaker at rest (it
 * never moved, or an answer closed it again, which resets it whole) has no series: absent, not 0.
 * Labelled by channel id (an account's channels are few: a bounded label, and no secret).
 */
const breakerGauges = (health: ChannelHealth["Service"]) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.map(health.breakers(now), (breakers) =>
      breakers.map(({ channel_id, state }): WireMetric => ({
        id: "tender_channel_breaker_open",
        type: "Gauge",
        description: "1 while the channel's circuit breaker is open or half open (its traffic goes elsewhere), 0 while closed with failures counted; absent for a breaker at rest",
        attributes: { channel: channel_id },
        state: { value: Breaker.position(state, now) === "closed" ? 0 : 1 }
      }))))

// --- the route ---------------------------------------------------------------------------------

export interface MetricsOptions {
  /** TENDER_METRICS_TOKEN: when set, a scrape must send `Authorization: Bearer <token>`. */
  readonly token?: string | undefined
}

const authorised = (header: string | undefined, token: string) => sameSecret(/^Bearer +(\S+)\s*$/.exec(header ?? "")?.[1], token)

/**
 * The figures /metrics renders: this process's registry (a cluster child: the whole cluster's,
 * merged by the primary), then the database's gauges and the channels' breakers. One home for both readers: the route below
 * and the operator console's sampler (console/Sampler.ts), so a chart and a scrape cannot disagree.
 * A snapshot resets the event-loop delay's window (`nodejs_eventloop_delay_p99_seconds` covers the
 * time since the previous snapshot, whoever took it).
 */
export class MetricsSnapshot extends Context.Service<MetricsSnapshot, {
  readonly take: Effect.Effect<Array<WireMetric>>
}>()("@tender/http/MetricsSnapshot") {}

/** Built once per server (Server.app provides it to every reader); a cluster child answers the primary's collections meanwhile. */
export const snapshotLayer = Layer.effect(
  MetricsSnapshot,
  Effect.gen(function*() {
    const operations = yield* Operations
    const graceMs = Option.getOrElse(yield* Config.option(Config.Int("TENDER_RECONCILE_GRACE_MS")), () => DEFAULT_RECONCILE.graceMs)
    const fromDatabase = databaseGauges(operations.backlogs, graceMs)
    const breakers = breakerGauges(yield* ChannelHealth)
    const context = yield* Effect.context<never>()

    if (cluster.isWorker) {
      const stop = answerCollections(context)
      process.on("message", onMerged)
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          stop()
          process.off("message", onMerged)
        })
      )
    }

    const processMetrics: Effect.Effect<Array<WireMetric>> = cluster.isWorker
      ? Effect.flatMap(askPrimary, (answer) =>
        answer === undefined
          // No primary answering (one not calling aggregateInPrimary): this child alone, said so.
          ? Effect.map(localSnapshot, (local) => [...local, clusterMissing(-1)])
          : Effect.succeed([...answer.metrics, clusterMissing(answer.missing)]))
      : localSnapshot

    return MetricsSnapshot.of({
      take: Effect.map(
        Effect.all([processMetrics, fromDatabase, breakers], { concurrency: 3 }),
        ([processes, database, channels]) => [...processes, ...database, ...channels]
      )
    })
  })
)

/** GET /metrics; the token from the options, else TENDER_METRICS_TOKEN. */
export const layer = (options: MetricsOptions = {}) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const snapshot = yield* MetricsSnapshot
    const token = options.token ??
      Option.getOrUndefined(Option.map(yield* Config.option(Config.Redacted("TENDER_METRICS_TOKEN")), Redacted.value))

    yield* router.add(
      "GET",
      METRICS_PATH,
      Effect.gen(function*() {
        if (token !== undefined) {
          const request = yield* HttpServerRequest.HttpServerRequest
          if (!authorised(request.headers["authorization"], token)) {
            return HttpServerResponse.text("Unauthorized: send Authorization: Bearer <TENDER_METRICS_TOKEN>\n", {
              status: 401,
              headers: { "www-authenticate": "Bearer" }
            })
          }
        }
        return HttpServerResponse.text(format(yield* snapshot.take), {
          contentType: "text/plain; version=0.0.4; charset=utf-8"
        })
      })
    )
  }))
