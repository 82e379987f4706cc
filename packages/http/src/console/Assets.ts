/**
 * The console's assets, served by Tender itself (no third-party host): its one stylesheet. Pages
 * link it with its content hash in the query, so it can be cached for a year and a new release
 * still fetches its own; the ETag answers a revalidation with 304.
 *
 * Colours meet WCAG 2.1 AA on their backgrounds: text ≥ 4.5:1, chart lines and focus rings ≥ 3:1
 * against white (#fff): #1f2328 15.8, #57606a 6.4, #0969da 5.2, #1a7f37 5.1, #cf222e 5.4,
 * #8250df 5.0, #9a6700 4.9, #0a3069 on #ddf4ff 11.0, #82071e on #ffebe9 9.4.
 */
import { createHash } from "node:crypto"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Effect } from "effect"

const ASSETS_PREFIX = "/console/assets"
export const STYLESHEET_PATH = `${ASSETS_PREFIX}/console.css`

const CSS = `
*{box-sizing:border-box}
html{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f6f8fa}
body{margin:0}
a{color:#0969da}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,summary:focus-visible{outline:3px solid #0969da;outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:2}
.skip:focus{left:.5rem;top:.5rem}
.top{display:flex;flex-wrap:wrap;align-items:center;gap:1rem;background:#fff;border-bottom:1px solid #d0d7de;padding:.5rem 1.25rem}
.brand{font-weight:700}
nav{display:flex;flex-wrap:wrap;align-items:center;gap:1rem;flex:1}
.nav{display:flex;gap:1rem;list-style:none;margin:0;padding:0;flex:1}
.signout{display:flex;align-items:center;gap:.5rem;margin:0;color:#57606a;font-size:.875rem}
main{max-width:72rem;margin:0 auto;padding:1.25rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.125rem;margin:1.75rem 0 .5rem;border-bottom:1px solid #d0d7de;padding-bottom:.25rem}
h3{font-size:1rem;margin:1rem 0 .25rem}
.narrow{max-width:26rem}
.panel{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1rem 1.25rem}
label{display:block;font-weight:600;font-size:.875rem;margin:.75rem 0 .25rem}
input,select{font:inherit;width:100%;min-height:2.5rem;padding:.4rem .6rem;border:1px solid #57606a;border-radius:6px;background:#fff;color:#1f2328}
input[type=checkbox]{width:auto;min-height:0;margin-right:.5rem}
.check{display:flex;align-items:center;font-weight:400}
.filters{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:0 1rem;align-items:end}
button,.button{display:inline-block;font:inherit;font-weight:600;border:1px solid transparent;border-radius:6px;padding:.5rem 1rem;cursor:pointer;text-decoration:none;margin:.75rem .5rem 0 0}
.primary{background:#1a7f37;color:#fff}
.danger{background:#cf222e;color:#fff}
.neutral{background:#fff;color:#1f2328;border-color:#57606a}
.link{background:none;border:0;color:#0969da;text-decoration:underline;padding:0;margin:0;font-weight:400}
.inline{display:inline}
.notice{background:#ddf4ff;color:#0a3069;border:1px solid #54aeff;border-radius:6px;padding:.75rem;margin:0 0 1rem}
.alert{background:#ffebe9;color:#82071e;border:1px solid #ff8182;border-radius:6px;padding:.75rem;margin:0 0 1rem}
.muted{color:#57606a}
table{border-collapse:collapse;width:100%;background:#fff;font-size:.9375rem}
caption{text-align:left;font-weight:600;padding:.5rem 0}
th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #d0d7de;vertical-align:top;overflow-wrap:break-word}
th{background:#f6f8fa}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1.5rem;margin:0}
.facts div{display:contents}
.facts dt{color:#57606a}
.facts dd{margin:0;overflow-wrap:anywhere}
.timeline{list-style:none;margin:0;padding:0}
.timeline>li{background:#fff;border:1px solid #d0d7de;border-left:4px solid #0969da;border-radius:6px;padding:.5rem 1rem;margin:.5rem 0}
.timeline>li.bad{border-left-color:#cf222e}
.timeline>li.good{border-left-color:#1a7f37}
.attempts{margin:.25rem 0 .5rem 1rem;padding:0}
code,.code{font:14px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:break-word}
pre.code{white-space:pre-wrap;background:#f6f8fa;border-radius:6px;padding:.5rem;margin:.25rem 0}
.qr{display:block;width:12rem;height:12rem;margin:1rem 0}
.secret{font-size:1.125rem;letter-spacing:.05em;user-select:all}
.actions form{display:inline-block;margin-right:1rem;vertical-align:top}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(28rem,1fr));gap:1.25rem}
figure{margin:0;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:.75rem 1rem}
figcaption{font-weight:600;margin-bottom:.5rem}
.chart{width:100%;height:auto;display:block}
.chart .axis{stroke:#57606a;stroke-width:1}
.chart .grid{stroke:#d0d7de;stroke-width:1}
.chart text{fill:#1f2328;font-size:11px}
.chart .series{fill:none;stroke-width:2}
.s0{stroke:#0969da;fill:#0969da}
.s1{stroke:#cf222e;fill:#cf222e}
.s2{stroke:#1a7f37;fill:#1a7f37}
.s3{stroke:#8250df;fill:#8250df}
.s4{stroke:#9a6700;fill:#9a6700}
.s5{stroke:#57606a;fill:#57606a}
.chart .series.s0,.chart .series.s1,.chart .series.s2,.chart .series.s3,.chart .series.s4,.chart .series.s5{fill:none}
.legend{display:flex;flex-wrap:wrap;gap:.75rem;list-style:none;margin:.25rem 0;padding:0;font-size:.875rem}
.swatch{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.3rem;vertical-align:-1px;border:0}
.swatch.s0{background:#0969da}.swatch.s1{background:#cf222e}.swatch.s2{background:#1a7f37}.swatch.s3{background:#8250df}.swatch.s4{background:#9a6700}.swatch.s5{background:#57606a}
details{margin-top:.5rem}
summary{cursor:pointer;color:#0969da}
`

const BYTES = Buffer.from(CSS)
const HASH = createHash("sha256").update(BYTES).digest("base64url").slice(0, 16)
const ETAG = `"${HASH}"`

/** What pages link: the hash in the query, so a year-long cache never serves an old release's styles. */
export const STYLESHEET_HREF = `${STYLESHEET_PATH}?v=${HASH}`

const CACHED = {
  "cache-control": "public, max-age=31536000, immutable",
  "x-content-type-options": "nosniff",
  etag: ETAG
}

export const stylesheet = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  return request.headers["if-none-match"] === ETAG
    ? HttpServerResponse.empty({ status: 304, headers: CACHED })
    : HttpServerResponse.uint8Array(BYTES, { contentType: "text/css; charset=utf-8", headers: CACHED })
})
