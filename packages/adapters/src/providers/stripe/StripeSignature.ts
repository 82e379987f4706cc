/**
 * Stripe's webhook signature scheme, the signing side: `Stripe-Signature: t=<unix seconds>,v1=<hex
 * HMAC-SHA256 of "<t>.<payload>" under the endpoint's signing secret>`. The fake signs with it; the
 * adapter verifies with the official SDK (StripeNotifications.ts), so each checks the other.
 */
import { createHmac } from "node:crypto"

export const signatureHeader = (payload: string, secret: string, timestampSeconds: number): string =>
  `t=${timestampSeconds},v1=${createHmac("sha256", secret).update(`${timestampSeconds}.${payload}`).digest("hex")}`
