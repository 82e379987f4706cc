/**
 * Watch (design26): charts of the service read from the sampler's minute points (Sampler.ts), which
 * are the very figures /metrics renders: payments per minute by outcome, the authorization rate by
 * channel and method, the webhook backlog and delivery lag, and the reconciliation backlog.
 */
import { Effect } from "effect"
import { html } from "../hosted/Html.ts"
import type { Auth } from "./Auth.ts"
import { barChart, lineChart } from "./Charts.ts"
import { hhmm, pageResponse } from "./Layout.ts"
import type { MinutePoint, Sampler, Window } from "./Sampler.ts"

/** The bucket bound under which a fraction `q` of the minute's observations fall (an upper estimate). */
export const quantile = (buckets: ReadonlyArray<readonly [number | null, number]>, q: number): number | null => {
  const total = buckets[buckets.length - 1]?.[1] ?? 0
  if (total <= 0) return null
  const found = buckets.find(([, n]) => n >= q * total)
  // Past the last finite bound: that bound is the best the histogram can say (at least it).
  return found === undefined || found[0] === null ? buckets.filter(([le]) => le !== null).at(-1)?.[0] ?? null : found[0]
}

const bucketDelta = (now: MinutePoint["lagBuckets"], before: MinutePoint["lagBuckets"]) =>
  now === null ? [] : now.map(([le, n], i) => [le, n - (before?.[i]?.[1] ?? 0)] as const)

const charts = ({ origin, points }: Window) => {
  // Each minute's difference from the point before it; the first minute's, from the origin.
  const pairs = points.map((point, i) => ({ point, before: i === 0 ? origin ?? point : points[i - 1]! }))
  const minutes = pairs.map(({ point }) => hhmm(point.minute))
  const statuses = [...new Set(points.flatMap((p) => Object.keys(p.payments)))].sort()
  const first = origin
  const last = points[points.length - 1]
  const channels = last === undefined ? [] : Object.keys(last.authorizations).sort()
  const rates = channels.map((key) => {
    const now = last!.authorizations[key]!
    const then = first?.authorizations[key] ?? { approved: 0, declined: 0 }
    const approved = now.approved - then.approved, declined = now.declined - then.declined
    const total = approved + declined
    return { label: key, value: total === 0 ? null : approved / total, note: `${approved} approved of ${total}` }
  })
  const gaugeMinutes = points.map((p) => hhmm(p.minute))
  const seconds = (v: number) => `${v} s`
  return html`<div class="charts">
${
    lineChart({
      id: "payments",
      title: "Payments per minute by outcome",
      description: "Payments created each minute over the last hour, one line per resulting status or error code.",
      xLabels: minutes,
      counts: true,
      series: statuses.map((status) => ({ name: status, values: pairs.map(({ point, before }) => Math.max(0, (point.payments[status] ?? 0) - (before.payments[status] ?? 0))) }))
    })
  }
${
    barChart({
      id: "authorization-rate",
      title: "Authorization rate by channel and method",
      description: "Share of payment attempts the provider approved over the last hour, per channel (provider) and payment method.",
      bars: rates,
      max: 1,
      format: (v) => `${Math.round(v * 100)}%`,
      labelHeading: "Channel and method",
      valueHeading: "Approved"
    })
  }
${
    lineChart({
      id: "webhook-backlog",
      title: "Webhook backlog",
      description: "Webhook deliveries due and not yet sent, at each minute of the last hour.",
      xLabels: gaugeMinutes,
      counts: true,
      series: [{ name: "Deliveries due", values: points.map((p) => p.webhookBacklog) }]
    })
  }
${
    lineChart({
      id: "delivery-lag",
      title: "Webhook delivery lag",
      description: "Seconds from an event's commit to its delivery's first attempt, median and 99th percentile per minute (upper bucket bounds).",
      xLabels: minutes,
      series: [0.5, 0.99].map((q) => ({
        name: q === 0.5 ? "p50" : "p99",
        values: pairs.map(({ point, before }) => quantile(bucketDelta(point.lagBuckets, before.lagBuckets), q))
      })),
      format: seconds
    })
  }
${
    lineChart({
      id: "reconciliation-backlog",
      title: "Reconciliation backlog",
      description: "Provider calls without a recorded answer past their grace, at each minute of the last hour.",
      xLabels: gaugeMinutes,
      counts: true,
      series: [{ name: "Calls to reconcile", values: points.map((p) => p.reconciliationBacklog) }]
    })
  }
</div>`
}

export const watch = (auth: Auth, sampler: Sampler["Service"]) =>
  auth.page((signed, message) =>
    Effect.gen(function*() {
      const window = yield* sampler.window
      return pageResponse({
        title: "Watch",
        viewer: signed.viewer,
        message,
        body: html`<h1>Watch</h1><p class="muted">The last hour, per minute, from the figures <code>/metrics</code> serves; sampled every 10 seconds. Reload for the latest.</p>${charts(window)}`
      })
    })
  )
