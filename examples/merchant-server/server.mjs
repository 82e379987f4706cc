/**
 * A merchant's own server that charges its customers' saved cards through Tender (renewals: the
 * merchant initiates, no customer is present to answer a challenge) with nothing but `@tender/client`
 * (the packed tarball): every request it sends is signed, every answer's signature checked. Plain
 * JavaScript on Node 22, no TypeScript.
 *
 *   TENDER_URL=http://127.0.0.1:8080 TENDER_SECRET_KEY=sk_test_… TENDER_SIGNING_SECRET=whsec_… node server.mjs [--demo] [--port 3001]
 *
 * Routes: `POST /charge` (`{"amount":"25.00","currency":"USD","reference":"renewal-1"}`) charges
 * Tender's approving test card and answers the order; `GET /orders/:id` reads one back. `--demo`
 * charges once, shows a retry of the same reference recovered by reference, and exits.
 */
import { createServer } from "node:http"
import { createTenderClient, TenderApiError } from "@tender/client"

const setting = (name) => {
  const value = process.env[name]
  if (!value) throw new Error(`Set ${name} (from \`tender accounts create --json\`).`)
  return value
}

const tender = createTenderClient({
  baseUrl: process.env.TENDER_URL ?? "http://127.0.0.1:8080",
  secretKey: setting("TENDER_SECRET_KEY"),
  signingSecret: setting("TENDER_SIGNING_SECRET")
})

/**
 * A merchant-initiated charge of a saved card. In production the token is the one stored when the
 * customer first paid (tender.js's card element); here Tender's test helper vaults the approving
 * test card, as the card element would.
 */
export const charge = async ({ amount, currency, reference }) => {
  const card = await tender.testHelpers.createCardToken({ number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
  const saved = { card_token: card.token, stored_credential: { initiator: "merchant", reason: "unscheduled" } }
  const request = { amount, currency, country: "US", merchant_reference: reference, payment_method: { code: "card", details: saved } }
  try {
    const payment = await tender.payments.create(request)
    return { order: await tender.orders.get({ params: { id: payment.order_id } }), retried: false }
  } catch (error) {
    // The answer to an earlier try was lost: the reference finds the payment it made.
    if (!(error instanceof TenderApiError && error.code === "duplicate_merchant_reference_id")) throw error
    return { order: await tender.orders.byReference({ params: { merchant_reference: reference } }), retried: true }
  }
}

const answer = (response, status, body) => response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))

const handle = async (request, response) => {
  const body = await new Promise((resolve) => {
    let text = ""
    request.on("data", (chunk) => (text += chunk)).on("end", () => resolve(text))
  })
  const order = request.url?.match(/^\/orders\/([^/]+)$/)
  if (request.method === "POST" && request.url === "/charge") return answer(response, 200, await charge(JSON.parse(body)))
  if (request.method === "GET" && order) return answer(response, 200, await tender.orders.get({ params: { id: order[1] } }))
  return answer(response, 404, { message: "no such route" })
}

if (process.argv.includes("--demo")) {
  const reference = `renewal-${Date.now()}`
  const first = await charge({ amount: "25.00", currency: "USD", reference })
  console.log(`order ${first.order.id}: ${first.order.status} ${first.order.amount} ${first.order.currency}`)
  const again = await charge({ amount: "25.00", currency: "USD", reference })
  console.log(`retry of ${reference}: ${again.retried ? "recovered" : "paid twice"} ${again.order.id}`)
} else {
  const port = Number(process.argv[process.argv.indexOf("--port") + 1]) || 3001
  createServer((request, response) =>
    handle(request, response).catch((error) =>
      answer(response, error instanceof TenderApiError ? error.status : 500, { message: error.message }))
  ).listen(port, () => console.log(`merchant-server on http://127.0.0.1:${port}`))
}
