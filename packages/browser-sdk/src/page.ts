/**
 * The fields iframe's document ({fields_url}/fields/v1/card.html) and its Content-Security-Policy.
 * Node-side (the server imports it); the page's behaviour is in fields.ts, served as card.js.
 *
 * Styling: one inline stylesheet allowed by its hash; the appearance variables reach it as CSS
 * custom properties set through the CSSOM by card.js (which CSP does not restrict), so no
 * `'unsafe-inline'` is needed.
 */
import { createHash } from "node:crypto"

export const CARD_CSS = `
:root{--tender-font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;--tender-font-size:16px;--tender-label-font-size:13px;--tender-label-font-weight:500;--tender-color-text:#1a1a1a;--tender-color-label:#4a4a4a;--tender-color-placeholder:#9a9a9a;--tender-color-background:#fff;--tender-color-border:#c8c8c8;--tender-color-primary:#2f5bea;--tender-color-danger:#c0262d;--tender-border-radius:6px;--tender-border-width:1px;--tender-input-padding:10px 12px;--tender-row-gap:12px}
*{box-sizing:border-box}
html,body{margin:0;padding:0;background:transparent}
body{font-family:var(--tender-font-family);font-size:var(--tender-font-size);color:var(--tender-color-text);padding:2px}
body.hold{visibility:hidden}
form{display:flex;flex-direction:column;gap:var(--tender-row-gap);margin:0}
.pair{display:flex;gap:var(--tender-row-gap)}
.pair>.row{flex:1;min-width:0}
.row[hidden],.pair>.row[hidden]{display:none}
label{display:block;font-size:var(--tender-label-font-size);font-weight:var(--tender-label-font-weight);color:var(--tender-color-label);margin-bottom:4px}
.wrap{position:relative}
input{width:100%;font:inherit;color:var(--tender-color-text);background:var(--tender-color-background);border:var(--tender-border-width) solid var(--tender-color-border);border-radius:var(--tender-border-radius);padding:var(--tender-input-padding);outline:none}
input::placeholder{color:var(--tender-color-placeholder)}
input:focus{border-color:var(--tender-color-primary);box-shadow:0 0 0 1px var(--tender-color-primary)}
input[aria-invalid=true]{border-color:var(--tender-color-danger)}
#brand{position:absolute;right:12px;top:50%;transform:translateY(-50%);font-size:12px;text-transform:uppercase;color:var(--tender-color-label)}
#saved{color:var(--tender-color-label)}
#saved-brand{text-transform:uppercase;font-weight:600}
#error{color:var(--tender-color-danger);font-size:var(--tender-label-font-size);margin:0;min-height:1.2em}
`.trim()

/**
 * A document of the fields host: its one stylesheet (allowed by hash), its body, and its one script
 * from the same origin. No referrer leaves it.
 */
const fieldsDocument = (page: { readonly title: string; readonly css: string; readonly bodyClass?: string; readonly body: string; readonly script: string }) =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${page.title}</title>
<style>${page.css}</style>
</head>
<body${page.bodyClass !== undefined ? ` class="${page.bodyClass}"` : ""}>
${page.body}<script src="${page.script}"></script>
</body>
</html>
`

export const CARD_HTML = fieldsDocument({
  title: "Card",
  css: CARD_CSS,
  bodyClass: "hold",
  body: `<form id="form" novalidate>
<div class="row" id="saved" hidden><span id="saved-label"></span> <span id="saved-brand"></span> •••• <span id="saved-last4"></span></div>
<div class="row" id="number-row"><label id="number-label" for="number"></label><div class="wrap"><input id="number" name="cardnumber" autocomplete="cc-number" inputmode="numeric" maxlength="23" placeholder="1234 1234 1234 1234" spellcheck="false"><span id="brand"></span></div></div>
<div class="pair">
<div class="row" id="expiry-row"><label id="expiry-label" for="expiry"></label><input id="expiry" name="exp-date" autocomplete="cc-exp" inputmode="numeric" maxlength="7" placeholder="MM / YY" spellcheck="false"></div>
<div class="row" id="cvc-row"><label id="cvc-label" for="cvc"></label><input id="cvc" name="cvc" autocomplete="cc-csc" inputmode="numeric" maxlength="4" placeholder="123" spellcheck="false"></div>
</div>
<p id="error" role="alert"></p>
</form>
`,
  script: "card.js"
})

const hashOf = (css: string) => `'sha256-${createHash("sha256").update(css).digest("base64")}'`

/**
 * A fields-host document's own policy: nothing but its script (same origin), its stylesheet (by
 * hash) and calls to the API's origin, and the frames it names (`frames`: the challenge frame only);
 * any merchant page may frame it (`frame-ancestors *`), which is why the card script checks the
 * parent's origin on every message.
 */
const fieldsPageCsp = (apiUrl: string, css: string, frames?: string): string =>
  [
    "default-src 'none'",
    "script-src 'self'",
    `connect-src ${new URL(apiUrl).origin}`,
    `style-src ${hashOf(css)}`,
    ...(frames !== undefined ? [`frame-src ${frames}`] : []),
    "frame-ancestors *",
    "base-uri 'none'",
    "form-action 'none'"
  ].join("; ")

/** The card iframe's policy. */
export const cardPageCsp = (apiUrl: string): string => fieldsPageCsp(apiUrl, CARD_CSS)

/** The inline challenge's frame: the issuer's page fills it. */
export const CHALLENGE_CSS = "html,body,iframe{margin:0;padding:0;border:0;width:100%;height:100%;display:block;background:#fff}"

export const CHALLENGE_HTML = fieldsDocument({ title: "3-D Secure", css: CHALLENGE_CSS, body: "", script: "challenge.js" })

/**
 * The challenge frame's policy: as the card page's, plus framing the issuer's page, which lives on
 * whichever host the provider chose (the sandbox's is the API host) and ends on the merchant's.
 */
export const challengePageCsp = (apiUrl: string): string => fieldsPageCsp(apiUrl, CHALLENGE_CSS, "http: https:")
