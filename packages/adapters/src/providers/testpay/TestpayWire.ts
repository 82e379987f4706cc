/**
 * Testpay's wire format: a deliberately small card API (JSON over HTTP, a Bearer key, an
 * `Idempotency-Key` on every mutation), the third provider that shows what adding one takes
 * (docs/providers.md). The adapter (TestpayChannel.ts) and the fake (TestpayFake.ts) both read it.
 *
 * POST /charges {reference, amount, currency, capture, card} → a Charge; POST /charges/{id}/capture
 * {reference, amount, final} → a Capture; POST /charges/{id}/void {reference} → the Charge; POST
 * /refunds {reference, payment (a charge's or capture's id), amount} → a Refund; POST /lookups {key}
 * → what the call under `key` answered, or nothing, and the key is fenced (a later call with it is
 * 409 `key_fenced`). Errors: `{error: {code, message}}`. Notifications: the Charge as created,
 * POSTed with `Testpay-Signature: hex(HMAC-SHA256(webhook_secret, body))`.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { Schema } from "effect"

export const Charge = Schema.Struct({
  id: Schema.String,
  reference: Schema.String,
  amount: Schema.Number,
  currency: Schema.String,
  status: Schema.Literals(["authorized", "captured", "declined", "voided"]),
  decline_code: Schema.NullOr(Schema.String),
  captured: Schema.Number
})
export type Charge = typeof Charge.Type

export const Capture = Schema.Struct({ id: Schema.String, charge: Schema.String, amount: Schema.Number })
export const Refund = Schema.Struct({ id: Schema.String, payment: Schema.String, amount: Schema.Number })

export const Operation = Schema.Literals(["authorize", "capture", "void", "refund"])
export type Operation = typeof Operation.Type

export const Lookup = Schema.Union([
  Schema.Struct({ found: Schema.Literal(false) }),
  Schema.Struct({ found: Schema.Literal(true), operation: Operation, status: Schema.Number, body: Schema.Unknown })
])

export const ErrorBody = Schema.Struct({ error: Schema.Struct({ code: Schema.String, message: Schema.String }) })

export const SIGNATURE_HEADER = "testpay-signature"

export const sign = (body: string, secret: string) => createHmac("sha256", secret).update(body).digest("hex")

/** Whether `signature` is the body's under `secret` (constant time). */
export const verifies = (body: string, signature: string | undefined, secret: string) => {
  if (signature === undefined || !/^[0-9a-f]{64}$/.test(signature)) return false
  return timingSafeEqual(Buffer.from(signature, "hex"), Buffer.from(sign(body, secret), "hex"))
}
