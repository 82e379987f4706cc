/**
 * Stripe webhook notifications: the `Stripe-Signature` header verified with the official SDK
 * (HMAC-SHA256 of `<t>.<raw body>`, any `v1` signature may match, at most 300 s old), then the
 * event read into what Tender's record step needs. The raw body must be the bytes Stripe sent:
 * a re-serialized JSON body no longer matches its signature.
 */
import { Data, Effect } from "effect"
import Stripe from "stripe"
import { normalize } from "./StripeDeclines.ts"

/** Stripe's default, and what its docs recommend against replays. */
export const TOLERANCE_SECONDS = 300

export class NotificationRejected extends Data.TaggedError("NotificationRejected")<{ readonly message: string }> {}

interface Base { readonly event_id: string; readonly created: number }

export type StripeNotification =
  | Base & {
    readonly _tag: "PaymentIntent"
    /** payment_intent.succeeded, .amount_capturable_updated, .payment_failed, .canceled */
    readonly type: "succeeded" | "amount_capturable_updated" | "payment_failed" | "canceled"
    readonly payment_intent: string
    readonly amount: number
    readonly amount_capturable: number
    readonly amount_received: number
    readonly currency: string
    /** The normalized decline code of a failed payment. */
    readonly decline_code: string | undefined
    readonly reference: string | undefined
  }
  | Base & {
    readonly _tag: "Refund"
    /** refund.created, refund.updated */
    readonly type: "created" | "updated"
    readonly refund: string
    readonly payment_intent: string | undefined
    readonly amount: number
    readonly currency: string
    readonly status: string
  }
  /** Any other event type (charge.refunded, …): verified, nothing to apply. */
  | Base & { readonly _tag: "Other"; readonly type: string }

const webhooks = Stripe.webhooks

const PAYMENT_INTENT_TYPES = new Set(["succeeded", "amount_capturable_updated", "payment_failed", "canceled"])

const read = (event: Stripe.Event): StripeNotification => {
  const base = { event_id: event.id, created: event.created }
  const [family, ...rest] = event.type.split(".")
  const type = rest.join(".")
  const object = event.data.object as unknown as Record<string, any>
  if (family === "payment_intent" && PAYMENT_INTENT_TYPES.has(type)) {
    return {
      ...base,
      _tag: "PaymentIntent",
      type: type as "succeeded",
      payment_intent: object["id"],
      amount: object["amount"],
      amount_capturable: object["amount_capturable"],
      amount_received: object["amount_received"],
      currency: object["currency"],
      decline_code: type === "payment_failed" ? normalize(object["last_payment_error"]) : undefined,
      reference: object["metadata"]?.["tender_reference"]
    }
  }
  if (family === "refund" && (type === "created" || type === "updated")) {
    return {
      ...base,
      _tag: "Refund",
      type,
      refund: object["id"],
      payment_intent: typeof object["payment_intent"] === "string" ? object["payment_intent"] : undefined,
      amount: object["amount"],
      currency: object["currency"],
      status: object["status"]
    }
  }
  return { ...base, _tag: "Other", type: event.type }
}

/** Verifies and reads one notification; `nowMs` is when it was received (the age check). */
export const verify = (rawBody: string | Uint8Array, signature: string | undefined, secret: string, nowMs: number = Date.now()) =>
  Effect.try({
    try: () => read(webhooks.constructEvent(rawBody as string, signature ?? "", secret, TOLERANCE_SECONDS, undefined, nowMs)),
    catch: (error) => new NotificationRejected({ message: error instanceof Error ? error.message : "The notification could not be verified" })
  })
