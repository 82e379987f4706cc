/**
 * Tender's own small chart module (design26, docs/decisions.md "Operator console: charts"): line and
 * bar charts drawn on the server as inline SVG. No script runs (the console's CSP allows none
 * inline and needs no exception), and each chart is accessible by construction: a `<figure>` with
 * its `<figcaption>`, an `<svg role="img">` named by its `<title>` and described by its `<desc>`,
 * a legend in text, and the figures themselves in a data table (in `<details>`, summary "Data").
 *
 * Colours are classes of the stylesheet (Assets.ts: ≥ 3:1 against the white plot, text ≥ 4.5:1);
 * series are also told apart by the legend's names and the table, never by colour alone.
 */
import { type Html, html } from "../hosted/Html.ts"

const WIDTH = 600
const HEIGHT = 220
const LEFT = 52
const RIGHT = 12
const TOP = 12
const BOTTOM = 30
const PLOT_W = WIDTH - LEFT - RIGHT
const PLOT_H = HEIGHT - TOP - BOTTOM
/** Colour classes s0…s5 (Assets.ts); more series reuse them, the legend and table still name each. */
const PALETTE = 6

export interface Series {
  readonly name: string
  /** One value per x label; null where there is no figure. */
  readonly values: ReadonlyArray<number | null>
}

export interface LineChartSpec {
  readonly id: string
  readonly title: string
  /** What the chart shows, in a sentence (the SVG's `<desc>`). */
  readonly description: string
  readonly xLabels: ReadonlyArray<string>
  readonly series: ReadonlyArray<Series>
  readonly format?: ((value: number) => string) | undefined
  /** Counts: the axis' top is at least 2, so its middle tick is a whole number too. */
  readonly counts?: boolean | undefined
}

export interface Bar {
  readonly label: string
  /** null: no figure (shown as "no data"). */
  readonly value: number | null
  /** Shown in the table beside the value (e.g. "12 of 15"). */
  readonly note?: string | undefined
}

export interface BarChartSpec {
  readonly id: string
  readonly title: string
  readonly description: string
  readonly bars: ReadonlyArray<Bar>
  /** The axis' top: 1 for a rate; default the data's nice maximum. */
  readonly max?: number | undefined
  readonly format?: ((value: number) => string) | undefined
  readonly labelHeading: string
  readonly valueHeading: string
}

/** The smallest of 1, 2, 5 × 10^n at or above `value` (an axis' top). */
export const niceCeiling = (value: number): number => {
  if (!(value > 0)) return 1
  const magnitude = 10 ** Math.floor(Math.log10(value))
  for (const step of [1, 2, 5, 10]) if (step * magnitude >= value) return step * magnitude
  return 10 * magnitude
}

const plain = (value: number) => Number.isInteger(value) ? String(value) : value.toFixed(2)

const round = (n: number) => Math.round(n * 10) / 10

const yAxis = (top: number, format: (value: number) => string): Html =>
  html`${
    [0, 0.5, 1].map((fraction) => {
      const y = round(TOP + PLOT_H * (1 - fraction))
      return html`<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y}" y2="${y}"/><text x="${LEFT - 6}" y="${y + 4}" text-anchor="end">${format(top * fraction)}</text>`
    })
  }<line class="axis" x1="${LEFT}" x2="${LEFT}" y1="${TOP}" y2="${TOP + PLOT_H}"/><line class="axis" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${TOP + PLOT_H}" y2="${TOP + PLOT_H}"/>`

const svg = (id: string, title: string, description: string, content: Html): Html =>
  html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title ${id}-desc" xmlns="http://www.w3.org/2000/svg"><title id="${id}-title">${title}</title><desc id="${id}-desc">${description}</desc>${content}</svg>`

const noData = html`<text x="${LEFT + PLOT_W / 2}" y="${TOP + PLOT_H / 2}" text-anchor="middle">No data yet</text>`

const legend = (names: ReadonlyArray<string>): Html =>
  names.length === 0 ? html`` : html`<ul class="legend">${names.map((name, i) => html`<li><span class="swatch s${i % PALETTE}"></span>${name}</li>`)}</ul>`

export const lineChart = (spec: LineChartSpec): Html => {
  const format = spec.format ?? plain
  const values = spec.series.flatMap((s) => s.values.filter((v): v is number => v !== null))
  const top = spec.counts === true ? Math.max(2, niceCeiling(Math.max(0, ...values))) : niceCeiling(Math.max(0, ...values))
  const n = spec.xLabels.length
  const x = (i: number) => round(LEFT + (n <= 1 ? PLOT_W / 2 : (PLOT_W * i) / (n - 1)))
  const y = (v: number) => round(TOP + PLOT_H * (1 - v / top))
  const lines = spec.series.map((series, s) => {
    let d = ""
    let drawing = false
    series.values.forEach((v, i) => {
      if (v === null) {
        drawing = false
        return
      }
      d += `${drawing ? "L" : "M"}${x(i)} ${y(v)}`
      drawing = true
    })
    const dots = series.values.map((v, i) => v === null ? "" : html`<circle class="s${s % PALETTE}" cx="${x(i)}" cy="${y(v)}" r="2.5"/>`)
    return html`${d === "" ? "" : html`<path class="series s${s % PALETTE}" d="${d}"/>`}${dots}`
  })
  const ticks = n === 0 ? [] : [...new Set([0, Math.floor((n - 1) / 2), n - 1])]
  // The end labels lean inwards, so that neither runs off the drawing.
  const anchor = (i: number) => n <= 1 ? "middle" : i === 0 ? "start" : i === n - 1 ? "end" : "middle"
  const xTicks = ticks.map((i) => html`<text x="${x(i)}" y="${HEIGHT - 10}" text-anchor="${anchor(i)}">${spec.xLabels[i] ?? ""}</text>`)
  const content = html`${yAxis(top, format)}${values.length === 0 ? noData : lines}${xTicks}`
  return html`<figure><figcaption id="${spec.id}-caption">${spec.title}</figcaption>
${svg(spec.id, spec.title, spec.description, content)}
${legend(spec.series.map((s) => s.name))}
<details><summary>Data</summary><table><caption>${spec.title}</caption><thead><tr><th scope="col">Minute (UTC)</th>${
    spec.series.map((s) => html`<th scope="col" class="num">${s.name}</th>`)
  }</tr></thead><tbody>${
    n === 0
      ? html`<tr><td colspan="${spec.series.length + 1}">No data yet</td></tr>`
      : spec.xLabels.map((label, i) =>
        html`<tr><th scope="row">${label}</th>${spec.series.map((s) => html`<td class="num">${s.values[i] === null || s.values[i] === undefined ? "" : format(s.values[i]!)}</td>`)}</tr>`
      )
  }</tbody></table></details></figure>`
}

export const barChart = (spec: BarChartSpec): Html => {
  const format = spec.format ?? plain
  const values = spec.bars.flatMap((b) => b.value === null ? [] : [b.value])
  const top = spec.max ?? niceCeiling(Math.max(0, ...values))
  const n = spec.bars.length
  const slot = n === 0 ? PLOT_W : PLOT_W / n
  const barWidth = round(Math.min(60, slot * 0.6))
  const bars = spec.bars.map((bar, i) => {
    const cx = LEFT + slot * i + slot / 2
    const label = html`<text x="${round(cx)}" y="${HEIGHT - 10}" text-anchor="middle">${bar.label}</text>`
    if (bar.value === null) return label
    const h = round(PLOT_H * Math.min(1, bar.value / top))
    return html`<rect class="s${i % PALETTE}" x="${round(cx - barWidth / 2)}" y="${round(TOP + PLOT_H - h)}" width="${barWidth}" height="${h}"/><text x="${round(cx)}" y="${
      round(TOP + PLOT_H - h - 4)
    }" text-anchor="middle">${format(bar.value)}</text>${label}`
  })
  const content = html`${yAxis(top, format)}${values.length === 0 ? noData : bars}`
  return html`<figure><figcaption id="${spec.id}-caption">${spec.title}</figcaption>
${svg(spec.id, spec.title, spec.description, content)}
<details><summary>Data</summary><table><caption>${spec.title}</caption><thead><tr><th scope="col">${spec.labelHeading}</th><th scope="col" class="num">${spec.valueHeading}</th><th scope="col">Detail</th></tr></thead><tbody>${
    n === 0
      ? html`<tr><td colspan="3">No data yet</td></tr>`
      : spec.bars.map((bar) => html`<tr><th scope="row">${bar.label}</th><td class="num">${bar.value === null ? "no data" : format(bar.value)}</td><td>${bar.note ?? ""}</td></tr>`)
  }</tbody></table></details></figure>`
}
