/**
 * Shared HTML for the hosted pages (sandbox provider pages, hosted checkout): escaping, one page
 * layout with inline CSS (and external scripts only where a page names them: the checkout's card
 * element), and the response with the headers such pages need.
 *
 * Markup is built with the `html` tag, which escapes every interpolated value unless it is itself
 * `Html`; a page therefore cannot print a merchant's or customer's string unescaped by accident.
 */
import { Money } from "@tender/domain"
import { Effect } from "effect"
import type * as ByteSize from "effect/ByteSize"
import { HttpIncomingMessage, HttpServerRequest, HttpServerResponse, UrlParams } from "effect/http"
import QRCode from "qrcode"

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

/**
 * A posted form, read within `maxBytes`: a body that is not a form, or is larger, reads as an empty
 * one (the page then asks again, or the form's CSRF check fails). Every form of Tender's pages is a
 * handful of fields, so each caller's bound is small.
 */
export const formBody = (request: HttpServerRequest.HttpServerRequest, maxBytes: ByteSize.ByteSize) =>
  request.urlParamsBody.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, maxBytes),
    Effect.orElseSucceed(() => UrlParams.empty)
  )

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

/**
 * Money for a customer, in their locale (`R$ 10,50`, `10,50 €`, `$10.50`). The amount goes to Intl as
 * a decimal string, so no float rounding creeps in, and the digits are Tender's exponent for the
 * currency (Intl's own table differs for a few, e.g. COP). Falls back to `money` for a code Intl
 * refuses.
 */
export const localMoney = (minor: number, currency: string, localeTag: string): string => {
  const digits = Money.exponent(currency)
  try {
    const format = new Intl.NumberFormat(localeTag, {
      style: "currency",
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits
    })
    // Intl formats decimal strings exactly (ES2023); the lib typings only admit numbers.
    return format.format(Money.toDecimalString(minor, currency) as unknown as number)
  } catch {
    return money(minor, currency)
  }
}

/** An ISO timestamp as a date and time in the customer's locale, always in UTC and saying so. */
export const localTime = (iso: string, localeTag: string): string => {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return iso
  try {
    return `${new Intl.DateTimeFormat(localeTag, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }).format(date)} UTC`
  } catch {
    return utcTime(iso)
  }
}

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

/**
 * Links a payment app may be opened with (`mach://…`, `bitcoin:…`) as well as web links; schemes
 * that run code or read local data in the browser never are.
 */
export const isAppLink = (url: string): boolean => {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase()
  return scheme !== undefined && !["javascript", "vbscript", "data", "file", "blob", "about"].includes(scheme)
}

/** The quiet zone QR readers need around the code, in modules. */
const QR_MARGIN = 4

/**
 * A QR code as an `<img>` whose source is an SVG data URL drawn here, synchronously, from the
 * payload: the page stays one self-contained response (no image route, no third-party host).
 */
export const qrImage = (data: string, alt: string): Html => {
  const { size, data: cells } = QRCode.create(data, { errorCorrectionLevel: "M" }).modules
  let path = ""
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      if (cells[row * size + col]) path += `M${col + QR_MARGIN} ${row + QR_MARGIN}h1v1h-1z`
    }
  }
  const extent = size + 2 * QR_MARGIN
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${extent} ${extent}" shape-rendering="crispEdges">` +
    `<rect width="100%" height="100%" fill="#fff"/><path fill="#000" d="${path}"/></svg>`
  return html`<img class="qr" src="${`data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`}" alt="${alt}">`
}

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
h2{font-size:1rem;margin:1.25rem 0 .5rem}
.merchant{margin:0;color:#57606a;font-weight:600}
.amount{font-size:2rem;font-weight:700;margin:.1rem 0 .25rem;letter-spacing:-.01em;color:#1f2328}
.muted{color:#57606a;font-size:.875rem;margin:0 0 .75rem}
.items{list-style:none;margin:.75rem 0 0;padding:0;border-top:1px solid #eaeef2}
.items li{display:flex;justify-content:space-between;gap:1rem;padding:.5rem 0;border-bottom:1px solid #eaeef2}
.items .qty{display:block;color:#57606a;font-size:.875rem}
.items .sum{font-weight:600;white-space:nowrap}
.items .total{font-weight:700;border-bottom:0}
.summary{margin-bottom:1.5rem}
.alert{background:#ffebe9;color:#82071e;border:1px solid #ffcecb;border-radius:8px;padding:.75rem;margin:1rem 0}
.alert p{color:inherit;margin:0}
.alert p+p{margin-top:.25rem}
.hint{background:#fff8c5;border-radius:8px;padding:.5rem .75rem;font-size:.875rem;margin:.75rem 0 0}
.method{border:1px solid #d0d7de;border-radius:10px;margin:.5rem 0;background:#fff}
.method[open]{border-color:#0969da;box-shadow:0 0 0 1px #0969da}
.method summary{cursor:pointer;padding:.85rem 1rem;list-style:none;display:flex;align-items:center;gap:.75rem}
.method summary::-webkit-details-marker{display:none}
.method summary::before{content:"";flex:none;width:1rem;height:1rem;border:2px solid #8c959f;border-radius:50%}
.method[open] summary::before{border:5px solid #0969da}
.method summary strong{display:block}
.method summary span span{display:block;color:#57606a;font-size:.875rem}
.method form{padding:0 1rem 1rem}
label{display:block;font-weight:600;font-size:.875rem;margin:.85rem 0 .3rem}
label .opt{font-weight:400;color:#57606a}
input,select{font:inherit;width:100%;min-height:2.75rem;padding:.6rem .75rem;border:1px solid #8c959f;border-radius:8px;background:#fff;color:inherit}
input:focus,select:focus,button:focus-visible,a:focus-visible,summary:focus-visible{outline:3px solid #0969da;outline-offset:1px}
input[aria-invalid=true],select[aria-invalid=true]{border-color:#cf222e;border-width:2px}
.field-error{color:#cf222e;font-size:.875rem;margin:.25rem 0 0}
.card-field{margin:.85rem 0 0;min-height:7.5rem}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:0 .75rem;align-items:end}
fieldset{border:0;margin:0;padding:0;min-width:0}
legend{font-weight:700;padding:0;margin:1.25rem 0 0}
.button{display:block;text-align:center;text-decoration:none;font-weight:600;border-radius:8px;padding:.8rem 1rem}
.button.primary{color:#fff}
.button.neutral{color:#1f2328}
.link{background:none;color:#0969da;font-weight:400;padding:.5rem;text-decoration:underline}
.final{text-align:center}
.final .mark{font-size:2.5rem;line-height:1;margin:.5rem 0 0}
footer{text-align:center;color:#6e7781;font-size:.8125rem;margin-top:1rem}
@media (max-width:360px){.pair{grid-template-columns:1fr}}
`

export interface PageOptions {
  readonly title: string
  readonly body: Html
  /** A strip across the top saying what this page is not (e.g. a live provider). */
  readonly banner?: string | undefined
  /** The page's language (BCP 47), for screen readers, hyphenation and the browser's own widgets. */
  readonly lang?: string | undefined
  /**
   * Reload the page after `seconds`, or go on to `url`: how a page without scripts notices an
   * outcome that arrives elsewhere (a QR code paid from a phone), or moves on once it is shown.
   */
  readonly refresh?: { readonly seconds: number; readonly url?: string | undefined } | undefined
  /** External scripts, run in order once the page is parsed (the response's policy must allow them). */
  readonly scripts?: ReadonlyArray<string> | undefined
}

/** The meta refresh's content; none when asked to go somewhere that is not a web address. */
const refreshContent = (refresh: PageOptions["refresh"]): string | undefined => {
  if (refresh === undefined) return undefined
  const seconds = Math.max(1, Math.round(refresh.seconds))
  if (refresh.url === undefined) return String(seconds)
  return isWebUrl(refresh.url) ? `${seconds}; url=${refresh.url}` : undefined
}

// The empty data: icon keeps browsers from asking for /favicon.ico, which only the API's JSON 404
// would answer.
export const page = (options: PageOptions): Html =>
  html`<!doctype html>
<html lang="${options.lang ?? "en"}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
${refreshContent(options.refresh) !== undefined && html`<meta http-equiv="refresh" content="${refreshContent(options.refresh)}">
`}<title>${options.title}</title>
<style>${new Html(STYLE)}</style>
${(options.scripts ?? []).map((src) => html`<script src="${src}" defer></script>
`)}</head>
<body>
${options.banner === undefined ? "" : html`<div class="banner" role="note">${options.banner}</div>`}
<main>${options.body}</main>
</body>
</html>
`

/**
 * What a page may load besides its own inline styles and images: the hosted checkout's card method
 * runs the browser SDK (script host), its card fields (frame host) and the SDK's calls (API host).
 * Origins only; nothing inline ever runs (no 'unsafe-inline' for scripts).
 */
export interface ScriptPolicy {
  readonly scripts: ReadonlyArray<string>
  readonly frames: ReadonlyArray<string>
  readonly connect: ReadonlyArray<string>
}

const sources = (list: ReadonlyArray<string>) => [...new Set(list)].join(" ")

// Inline styles only, no inline scripts, no third-party anything; pages are per-payment and must
// not be cached or framed by others. No `form-action`: Chromium applies it to the redirects after a
// post too, and the checkout's form ends in a 303 to the merchant's success_url or the provider's
// page.
const csp = (imageSources: string, frameAncestors: string, scripts: ScriptPolicy | undefined) =>
  [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    `img-src ${imageSources}`,
    ...(scripts === undefined
      ? []
      : [`script-src ${sources(scripts.scripts)}`, `frame-src ${sources(scripts.frames)}`, `connect-src ${sources(scripts.connect)}`]),
    `frame-ancestors ${frameAncestors}`,
    "base-uri 'none'"
  ].join("; ")

export interface ResponseOptions {
  /**
   * Allow images from any https origin: only for a provider's QR image that comes as a URL with no
   * payload to draw it from.
   */
  readonly remoteImages?: boolean | undefined
  /** Let any page frame this one: only the 3-D Secure challenge (tender.js shows it inline). */
  readonly frameable?: boolean | undefined
  /**
   * The sources that may frame this page (`frame-ancestors`), when not every page may and not none:
   * the hosted checkout, where an inline 3-D Secure challenge (the fields host's frame on the
   * checkout page, framing the issuer's page) ends by sending its frame back to the checkout.
   */
  readonly frameableBy?: ReadonlyArray<string> | undefined
  /** The scripts, frames and connections the page's card method needs; none: no script runs. */
  readonly scripts?: ScriptPolicy | undefined
}

/**
 * X-Frame-Options for browsers that predate `frame-ancestors` (newer ones obey the CSP and ignore
 * it): DENY for a page nobody frames, SAMEORIGIN when only the page's own origin may, and nothing
 * when other origins may (the header cannot name them; the CSP does).
 */
const frameOptions = (options: ResponseOptions): Record<string, string> => {
  if (options.frameable === true) return {}
  if (options.frameableBy === undefined) return { "x-frame-options": "DENY" }
  return options.frameableBy.every((source) => source === "'self'") ? { "x-frame-options": "SAMEORIGIN" } : {}
}

export const response = (document: Html, status = 200, options: ResponseOptions = {}): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(document.value, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: {
      "content-security-policy": csp(
        options.remoteImages === true ? "'self' data: https:" : "'self' data:",
        options.frameable === true ? "*" : options.frameableBy !== undefined ? options.frameableBy.join(" ") : "'none'",
        options.scripts
      ),
      ...frameOptions(options),
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff"
    }
  })

/**
 * Whether a post to a hosted page was sent by another site's page (a forged cancel, pay or 3-D
 * Secure answer). Fetch metadata decides where the browser sends it (`Sec-Fetch-Site`: only
 * same-origin, the page itself, and none, a navigation the customer made, are taken; cross-site and
 * same-site, a sibling subdomain that may be someone else's, are refused); without
 * it (older browsers) an `Origin` naming another host is refused. `Origin: null` passes there:
 * these pages' no-referrer policy makes the browser send it for their own posts. No per-session
 * form token is added: the page's URL is the session's capability, so a token printed in the page
 * would be readable by whoever can load that URL, and the check above already refuses what a
 * browser forwards from another site.
 */
export const crossSite = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined) return site !== "same-origin" && site !== "none"
  const origin = request.headers["origin"]
  if (origin === undefined || origin === "null") return false
  try {
    return new URL(origin).host !== request.headers["host"]
  } catch {
    return true
  }
}

const crossSitePage = page({
  title: "Request refused",
  body: html`<div class="card"><h1>Request refused</h1><p>This form was sent from another site, so nothing was changed. Go back to the payment page and use its buttons.</p></div>`
})

/**
 * Runs a hosted page's post handler only for a post that did not come from another site; a
 * forged one gets 403 (`refused`: the page's own answer, e.g. JSON for a script's call) and
 * changes nothing.
 */
export const sameSiteOnly = <E, R>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  refused: () => HttpServerResponse.HttpServerResponse = () => response(crossSitePage, 403)
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    return crossSite(yield* HttpServerRequest.HttpServerRequest) ? refused() : yield* handler
  })
