/**
 * The inline 3-D Secure frame's script ({fields_url}/fields/v1/challenge.js, loaded by
 * challenge.html). tender.js shows an inline challenge by framing this page, on the fields host that
 * the merchant's CSP already allows (spec: a page's `frame-src` names the fields host, nothing more),
 * and this page frames the issuer's challenge under its own policy.
 *
 * It frames only the challenge the payment itself names: it reads the payment's status with the
 * publishable key and client secret from its fragment (never sent to a server), so no address handed
 * to this page can make Tender's host frame another site.
 */
import { readPaymentStatus } from "./api.ts"
import { readEnv } from "./env.ts"

const env = readEnv()
const fragment = new URLSearchParams(location.hash.slice(1))
// The secret has been read: keep it out of this frame's history.
history.replaceState(null, "", location.pathname)

void readPaymentStatus<{ readonly status: string; readonly challenge_url?: string }>(
  env.apiUrl,
  fragment.get("key") ?? "",
  fragment.get("secret") ?? ""
).then((answer) => {
  // Nothing to show (answered already, or not this page's to show): tender.js's own status reads
  // end the challenge and remove this frame.
  if (!answer.ok || answer.body.status !== "requires_action" || typeof answer.body.challenge_url !== "string") return
  const frame = document.createElement("iframe")
  frame.src = answer.body.challenge_url
  frame.title = "3-D Secure challenge"
  document.body.appendChild(frame)
})
