/**
 * Sends one request to Tender as a merchant server would, through the typed client's raw entry
 * point (`signedFetch`): any method, path and JSON body, signed exactly as the typed client signs
 * (contract.md, Signatures: `X-Signature: t=…, v1=…`, HMAC-SHA256 over t + the path with its query +
 * the body bytes, beside `Authorization: Bearer sk_…`), and the answer's signature verified before
 * its body is trusted. For calls the API describes, prefer the typed client (typed-client.ts).
 *
 *   TENDER_SECRET_KEY=sk_test_… TENDER_SIGNING_SECRET=whsec_… \
 *     npx node examples/sign-request.ts GET '/v1/payment-methods?country=US&currency=USD'
 *   … POST /v1/test_helpers/card_tokens '{"number":"4242424242424242","exp_month":12,"exp_year":2030,"cvc":"123"}'
 *
 * TENDER_URL defaults to http://127.0.0.1:8080. Exits non-zero when the response is not 2xx or its
 * signature does not verify.
 */
import { signedFetch } from "@tender/client"

const [method = "GET", path = "/v1/payment-methods?country=US&currency=USD", body] = process.argv.slice(2)
const secretKey = process.env.TENDER_SECRET_KEY
const signingSecret = process.env.TENDER_SIGNING_SECRET
const baseUrl = process.env.TENDER_URL ?? "http://127.0.0.1:8080"
if (!secretKey || !signingSecret) {
  console.error("Set TENDER_SECRET_KEY and TENDER_SIGNING_SECRET (from `npx tender accounts create --name demo --json`).")
  process.exit(2)
}

const reply = await signedFetch({ baseUrl, secretKey, signingSecret }, method, path, { body })
// `verified` first: an answer that does not verify is not Tender's, whatever it says.
console.log(`${reply.status} (response signature: ${reply.verdict})`)
console.log(reply.text)
process.exit(reply.status >= 200 && reply.status < 300 && reply.verified ? 0 : 1)
