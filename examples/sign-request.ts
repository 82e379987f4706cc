/**
 * Sends one signed request to Tender and verifies the signed response, as a merchant server would.
 *
 *   TENDER_SECRET_KEY=sk_test_… TENDER_SIGNING_SECRET=whsec_… \
 *     npx node examples/sign-request.ts GET '/v1/payment-methods?country=US&currency=USD'
 *   … POST /v1/test_helpers/card_tokens '{"number":"4242424242424242","exp_month":12,"exp_year":2030,"cvc":"123"}'
 *
 * TENDER_URL defaults to http://127.0.0.1:8080. Exits non-zero when the response is not 2xx or its
 * signature does not verify.
 */
import { merchantHeaders, verifySignature } from "@tender/adapters/Signature"

const [method = "GET", path = "/v1/payment-methods?country=US&currency=USD", body] = process.argv.slice(2)
const secretKey = process.env.TENDER_SECRET_KEY
const signingSecret = process.env.TENDER_SIGNING_SECRET
const baseUrl = process.env.TENDER_URL ?? "http://127.0.0.1:8080"
if (!secretKey || !signingSecret) {
  console.error("Set TENDER_SECRET_KEY and TENDER_SIGNING_SECRET (from `npx tender accounts create --name demo --json`).")
  process.exit(2)
}

const now = () => Math.floor(Date.now() / 1000)
const response = await fetch(baseUrl + path, {
  method,
  // Signs the exact bytes that are sent: t + path with query + body.
  headers: merchantHeaders({ secret_key: secretKey, signing_secret: signingSecret }, path, body ?? ""),
  ...(body !== undefined ? { body } : {})
})
const text = await response.text()
// Verify before trusting anything in the body.
const verdict = verifySignature(signingSecret, response.headers.get("x-signature") ?? undefined, path, text, now())
console.log(`${response.status} (response signature: ${verdict})`)
console.log(text)
process.exit(response.ok && verdict === "valid" ? 0 : 1)
