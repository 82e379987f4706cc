/**
 * Shared HTML for the hosted pages (sandbox provider pages, hosted checkout): escaping, one page
 * layout with inline CSS and no external assets, and the response with the headers such pages need.
 *
 * Markup is built with the `html` tag, which escapes every interpolated value unless it is itself
 * `Html`; a page therefore cannot print a merchant's or customer's string unescaped by accident.
 */
import { Money } from "@tender/domain"
import { HttpServerResponse } from "effect/http"

/** Markup that is already safe to emit. */
export class Html {
  readonly value: string
  constructor(value: string) {
    this.value = value
  }
  toString(): string {
    return this.value
  }
}

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  "\"": "&quot;",
  "'": "&#39;"
}

export const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => ENTITIES[c])

/** What may be interpolated: text (escaped), markup, lists of either; nothing renders as empty. */
export type Part = Html | string | number | null | undefined | false | ReadonlyArray<Part>

const render = (part: Part): string => {
  if (part instanceof Html) return part.value
  if (part === null || part === undefined || part === false) return ""
  if (typeof part === "string") return escape(part)
  if (typeof part === "number") return String(part)
  return part.map(render).join("")
}

export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<Part>): Html =>
  new Html(strings.reduce((out, text, i) => out + text + (i < values.length ? render(values[i]) : ""), ""))

/** A definition list of label → value rows; rows whose value is missing are left out. */
export const facts = (rows: ReadonlyArray<readonly [label: string, value: Part]>): Html =>
  html`<dl class="facts">${
    rows.filter(([, value]) => value !== undefined && value !== null && value !== "").map(([label, value]) =>
      html`<div><dt>${label}</dt><dd>${value}</dd></div>`
    )
  }</dl>`

/** `1050, "USD"` → `10.50 USD`, exact to the currency's exponent. */
export const money = (minor: number, currency: string): string => `${Money.toDecimalString(minor, currency)} ${currency}`

/** An ISO timestamp as a short, unambiguous UTC time (`2026-03-04 09:30 UTC`). */
export const utcTime = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`

const METHOD_NAMES: Readonly<Record<string, string>> = {
  card: "Card",
  paypal: "PayPal",
  ideal: "iDEAL",
  pse: "PSE",
  pix: "Pix",
  mach: "MACH",
  boleto: "Boleto",
  oxxo: "OXXO",
  spei: "SPEI",
  crypto: "Crypto"
}

export const methodName = (code: string): string => METHOD_NAMES[code] ?? code

/** Only web links are rendered as links; anything else (e.g. `javascript:`) stays plain text. */
export const isWebUrl = (url: string): boolean => /^https?:\/\//i.test(url)

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f3f4f6}
.banner{background:#b45309;color:#fff;text-align:center;font-weight:600;font-size:.875rem;padding:.5rem 1rem;letter-spacing:.02em}
main{max-width:28rem;margin:0 auto;padding:1.25rem 1rem 3rem}
.card{background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.12);padding:1.25rem}
h1{font-size:1.25rem;margin:0 0 .25rem}
p{margin:.25rem 0 1rem;color:#57606a}
.facts{margin:1rem 0;display:grid;gap:.5rem}
.facts div{display:flex;justify-content:space-between;gap:1rem;border-bottom:1px solid #eaeef2;padding-bottom:.5rem}
.facts dt{color:#57606a}
.facts dd{margin:0;font-weight:600;text-align:right;overflow-wrap:anywhere}
.code{display:block;font:14px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;background:#f6f8fa;border-radius:8px;padding:.75rem;overflow-wrap:anywhere;user-select:all}
.qr{display:block;width:12rem;height:12rem;margin:1rem auto}
.actions{display:grid;gap:.5rem;margin-top:1.25rem}
button{font:inherit;font-weight:600;border:0;border-radius:8px;padding:.8rem 1rem;cursor:pointer;width:100%}
.primary{background:#1a7f37;color:#fff}
.danger{background:#cf222e;color:#fff}
.neutral{background:#eaeef2;color:#1f2328}
.notice{background:#ddf4ff;border-radius:8px;padding:.75rem;margin:0 0 1rem}
.status{font-size:1.125rem;font-weight:700;margin:1rem 0 .25rem}
.status.good{color:#1a7f37}
.status.bad{color:#cf222e}
a{color:#0969da}
`

export interface PageOptions {
  readonly title: string
  readonly body: Html
  /** A strip across the top saying what this page is not (e.g. a live provider). */
  readonly banner?: string | undefined
}

export const page = (options: PageOptions): Html =>
  html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<title>${options.title}</title>
<style>${new Html(STYLE)}</style>
</head>
<body>
${options.banner === undefined ? "" : html`<div class="banner" role="note">${options.banner}</div>`}
<main>${options.body}</main>
</body>
</html>
`

// Inline styles only, no scripts, no third-party anything; pages are per-payment and must not be
// cached or framed.
const PAGE_HEADERS = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff"
}

export const response = (document: Html, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(document.value, { status, contentType: "text/html; charset=utf-8", headers: PAGE_HEADERS })
