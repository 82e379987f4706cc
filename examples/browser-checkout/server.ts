/**
 * A merchant's checkout with tender.js: a page on the merchant's own origin under a strict
 * Content-Security-Policy, and the few lines of server it needs.
 *
 *   TENDER_URL=http://127.0.0.1:8080 TENDER_SECRET_KEY=sk_test_… TENDER_SIGNING_SECRET=whsec_… \
 *   TENDER_PUBLISHABLE_KEY=pk_test_… npx node examples/browser-checkout/server.ts [--port 4343]
 *
 * (keys from `npx tender accounts create --name demo --json`; TENDER_SDK_URL and TENDER_FIELDS_URL
 * default to TENDER_URL, as `npm start` serves all three from one port.)
 *
 * - `GET /checkout`: the checkout page. Its script (checkout.js) asks this server for a payment, mounts the
 *   card element with the payment's client secret, and on "Pay" runs `collectCard` + `pay`. The card
 *   number lives in Tender's iframe only; this page and this server never see it.
 * - `POST /payments`: creates the payment with the typed client (`@tender/client`: signed request,
 *   verified answer) and hands the browser only what it needs: the order id and the client secret.
 *   The amount is the server's (a fixed cart here), never the browser's.
 * - `GET /return`: where a customer lands after a redirect-mode 3-D Secure challenge; the outcome is
 *   read again from Tender (the browser's word is only a display hint, spec: pay result). It shows only
 *   the order this browser started (a cookie set by `POST /payments`): an order id in a URL is not a
 *   key, and anyone could otherwise read any order of the shop.
 * - `GET /`: the shop's front page: the same policy and tender.js without the checkout script, to try
 *   the SDK from the browser's console (`Tender(pk).elements().create("card").mount("#card")`).
 * - `?csp=without-fields-host` on either page drops the fields host from `frame-src`: the element then
 *   reports `loaderror` IFRAME_BLOCKED, the mistake the spec's CSP section warns about.
 */
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { parseArgs } from "node:util"
import { createTenderClient, TenderApiError, UnverifiedResponse } from "@tender/client"
import { Schema } from "effect"

export interface MerchantServerOptions {
  /** Tender's API, e.g. http://127.0.0.1:8080 (what `npm start` listens on). */
  readonly tenderUrl: string
  readonly secretKey: string
  readonly signingSecret: string
  /** The browser's key (pk_test_…); the only key the page ever holds. */
  readonly publishableKey: string
  /** Where tender.js is served ({sdk_url}'s host); default tenderUrl. */
  readonly sdkUrl?: string
  /** The secure card fields' host ({fields_url}); default tenderUrl. */
  readonly fieldsUrl?: string
  /** 0 (the default) picks a free port. */
  readonly port?: number
  readonly host?: string
  /** The fixed cart this demo sells. */
  readonly amount?: string
  readonly currency?: string
  readonly country?: string
  readonly log?: (line: string) => void
}

export interface MerchantServer {
  /** The shop's origin, e.g. http://127.0.0.1:4343: another origin than Tender's. */
  readonly origin: string
  close(): Promise<void>
}

/** What `POST /payments` answers the page. */
export interface CreatedPayment {
  readonly orderId: string
  readonly clientSecret: string
}

const originOf = (url: string) => new URL(url).origin

/**
 * The page's policy: the spec's three hosts and nothing else foreign. tender.js from the SDK host
 * (`script-src`), the card iframe from the fields host (`frame-src`), the SDK's calls to the API
 * host (`connect-src`); `'self'` for this page's own script and its call to `/payments`. An inline
 * 3-D Secure challenge needs nothing more: tender.js shows it in a frame of the fields host, which
 * frames the issuer's page under its own policy. No inline script or style: the SDK styles its
 * iframe through the CSSOM, which CSP allows.
 */
export const checkoutCsp = (hosts: { readonly api: string; readonly sdk: string; readonly fields: string }, options: { readonly withoutFieldsHost?: boolean } = {}) => {
  const frames = options.withoutFieldsHost === true ? "'none'" : originOf(hosts.fields)
  return [
    "default-src 'self'",
    `script-src 'self' ${originOf(hosts.sdk)}`,
    `frame-src ${frames}`,
    `connect-src 'self' ${originOf(hosts.api)}`,
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'"
  ].join("; ")
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

const page = (options: { readonly sdkUrl: string; readonly publishableKey: string; readonly amount: string; readonly currency: string; readonly checkout: boolean }) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="tender-publishable-key" content="${escapeHtml(options.publishableKey)}">
<title>Checkout — Example Shop</title>
</head>
<body>
<h1>Example Shop</h1>
${options.checkout
  ? `<p>One ticket: ${escapeHtml(options.amount)} ${escapeHtml(options.currency)}</p>
<div id="card"></div>
<button id="pay" type="button" disabled>Pay ${escapeHtml(options.amount)} ${escapeHtml(options.currency)}</button>
<p id="outcome" role="status" aria-live="polite"></p>`
  : `<p><a href="/checkout">Buy a ticket</a>. tender.js is loaded here too: try it from the console.</p>
<div id="card"></div>`}
<script src="${escapeHtml(originOf(options.sdkUrl))}/sdk/v1/tender.js"></script>
${options.checkout ? `<script src="/checkout.js"></script>` : ""}
</body>
</html>
`

const returnPage = (text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Order — Example Shop</title></head><body><h1>Example Shop</h1><p id="outcome">${escapeHtml(text)}</p><p><a href="/">Back to the shop</a></p></body></html>\n`

const CHECKOUT_JS = readFileSync(new URL("./checkout.js", import.meta.url), "utf8")

const send = (response: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}) => {
  response.writeHead(status, { "content-type": type, "cache-control": "no-store", "x-content-type-options": "nosniff", ...headers })
  response.end(body)
}

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  send(response, status, "application/json", JSON.stringify(body), headers)

/** The order this browser started last: HttpOnly (no script reads it), Lax (sent when a bank's page sends the customer back). */
const ORDER_COOKIE = "shop_order"
const orderCookie = (orderId: string) => `${ORDER_COOKIE}=${orderId}; Path=/; HttpOnly; SameSite=Lax`
const cookieOrder = (request: IncomingMessage): string | undefined =>
  (request.headers.cookie ?? "").split(";").map((c) => c.trim().split("=")).find(([name]) => name === ORDER_COOKIE)?.[1]

/** Drains the request body (this server reads none: the cart is the server's). */
const drain = async (request: IncomingMessage) => {
  for await (const _ of request) {
    // discard
  }
}

export const startMerchantServer = async (options: MerchantServerOptions): Promise<MerchantServer> => {
  const log = options.log ?? ((line: string) => console.log(line))
  const hosts = { api: options.tenderUrl, sdk: options.sdkUrl ?? options.tenderUrl, fields: options.fieldsUrl ?? options.tenderUrl }
  const cart = { amount: options.amount ?? "25.00", currency: options.currency ?? "USD", country: options.country ?? "US" }
  const tender = createTenderClient({ baseUrl: options.tenderUrl, secretKey: options.secretKey, signingSecret: options.signingSecret })
  let origin = ""

  const createPayment = async (): Promise<CreatedPayment> => {
    // The reference is this shop's order number: the success and cancel pages read the order by it.
    const reference = `shop-${Date.now()}-${randomBytes(4).toString("hex")}`
    const back = `${origin}/return?reference=${encodeURIComponent(reference)}`
    const payment = await tender.payments.create({
      ...cart,
      merchant_reference: reference,
      payment_method: { code: "card" },
      success_url: back,
      cancel_url: back
    })
    const action = payment.next_action
    if (action?.type !== "collect_card" || typeof action.client_secret !== "string") {
      throw new Error(`payment ${payment.order_id} does not await a card (${action?.type ?? payment.status})`)
    }
    return { orderId: payment.order_id, clientSecret: action.client_secret }
  }

  /** The order's status as Tender has it, by the id `pay` returned to a redirect or by our reference. */
  const readOrder = async (url: URL) => {
    const id = url.searchParams.get("tender_payment_id")
    const reference = url.searchParams.get("reference")
    if (id !== null) return tender.orders.get({ params: { id } })
    if (reference !== null) return tender.orders.byReference({ params: { merchant_reference: reference } })
    return undefined
  }

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", origin)
    const html = (checkout: boolean) => {
      const csp = checkoutCsp(hosts, { withoutFieldsHost: url.searchParams.get("csp") === "without-fields-host" })
      send(response, 200, "text/html; charset=utf-8", page({ ...cart, sdkUrl: hosts.sdk, publishableKey: options.publishableKey, checkout }), {
        "content-security-policy": csp,
        "referrer-policy": "same-origin"
      })
    }
    const route = `${request.method} ${url.pathname}`
    switch (route) {
      case "GET /checkout":
        return html(true)
      case "GET /":
        return html(false)
      case "GET /checkout.js":
        return send(response, 200, "text/javascript; charset=utf-8", CHECKOUT_JS)
      case "POST /payments": {
        await drain(request)
        try {
          const created = await createPayment()
          log(`payment ${created.orderId} created, awaiting the card`)
          return json(response, 200, created, { "set-cookie": orderCookie(created.orderId) })
        } catch (error) {
          // The browser learns that it failed, not why: the reason is for this server's log.
          log(`payment not created: ${describe(error)}`)
          return json(response, 502, { error: "payment_not_created" })
        }
      }
      case "GET /return": {
        try {
          const order = await readOrder(url)
          if (order !== undefined && order.id !== cookieOrder(request)) {
            return send(response, 404, "text/html; charset=utf-8", returnPage("No such order."))
          }
          return send(response, 200, "text/html; charset=utf-8", returnPage(order === undefined ? "No order named." : `Order ${order.id}: ${order.status}`))
        } catch (error) {
          // An id or reference Tender does not know (or of another account), or not of an id's form (the
          // typed client checks parameters before sending): the link is wrong, not the shop.
          if ((error instanceof TenderApiError && error.status >= 400 && error.status < 500) || Schema.isSchemaError(error)) {
            return send(response, 404, "text/html; charset=utf-8", returnPage("No such order."))
          }
          log(`order not read: ${describe(error)}`)
          return send(response, 502, "text/html; charset=utf-8", returnPage("The order's status could not be read; it is sent to us by webhook as well."))
        }
      }
      default:
        return send(response, 404, "text/plain; charset=utf-8", "Not found\n")
    }
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error) => {
      log(`request failed: ${describe(error)}`)
      if (!response.headersSent) send(response, 500, "text/plain; charset=utf-8", "Internal error\n")
      else response.destroy()
    })
  })
  await new Promise<void>((listening) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", listening))
  const address = server.address() as AddressInfo
  origin = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`
  return {
    origin,
    close: () => new Promise<void>((closed, failed) => server.close((error) => (error ? failed(error) : closed())))
  }
}

const describe = (error: unknown) =>
  error instanceof TenderApiError ? `${error.status} ${error.code}: ${error.message} (${error.request_id})`
  : error instanceof UnverifiedResponse ? `unverified answer: ${error.message}`
  : String(error)

if (import.meta.main) {
  const { values } = parseArgs({ options: { port: { type: "string", default: "4343" }, host: { type: "string", default: "127.0.0.1" } } })
  const env = process.env
  const missing = ["TENDER_SECRET_KEY", "TENDER_SIGNING_SECRET", "TENDER_PUBLISHABLE_KEY"].filter((name) => !env[name])
  if (missing.length > 0) {
    console.error(`Set ${missing.join(", ")} (from \`npx tender accounts create --name demo --json\`).`)
    process.exit(2)
  }
  const shop = await startMerchantServer({
    tenderUrl: env.TENDER_URL ?? "http://127.0.0.1:8080",
    secretKey: env.TENDER_SECRET_KEY!,
    signingSecret: env.TENDER_SIGNING_SECRET!,
    publishableKey: env.TENDER_PUBLISHABLE_KEY!,
    sdkUrl: env.TENDER_SDK_URL,
    fieldsUrl: env.TENDER_FIELDS_URL,
    port: Number(values.port),
    host: values.host
  })
  console.log(`checkout at ${shop.origin}/checkout (pay with 4242 4242 4242 4242, any future expiry, any CVC)`)
}
