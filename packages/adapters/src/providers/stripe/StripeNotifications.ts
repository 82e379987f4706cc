/**
 * Stripe webhook notifications: the `Stripe-Signature` header verified with the official SDK
 * (HMAC-SHA256 of `<t>.<raw body>`, any `v1` signature may match, at most 300 s old), then the
 * event read into what Tender's record step needs. The raw body must be the bytes Stripe sent:
 * a re-serialized JSON body no longer matches its signature.
 */
import { Data, Effect, Schema } from "effect"
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

/** The fields of a PaymentIntent event Tender reads; decoded once, here at the edge. */
const PaymentIntentObject = Schema.Struct({
  id: Schema.String,
  amount: Schema.Number,
  amount_capturable: Schema.Number,
  amount_received: Schema.Number,
  currency: Schema.String,
  last_payment_error: Schema.optional(Schema.NullOr(Schema.Struct({
    code: Schema.optional(Schema.NullOr(Schema.String)),
    decline_code: Schema.optional(Schema.NullOr(Schema.String))
  }))),
  metadata: Schema.optional(Schema.Record(Schema.String, Schema.String))
})

const RefundObject = Schema.Struct({
  id: Schema.String,
  amount: Schema.Number,
  currency: Schema.String,
  payment_intent: Schema.optional(Schema.NullOr(Schema.String)),
  status: Schema.String
})

const PAYMENT_INTENT_TYPES = new Set(["succeeded", "amount_capturable_updated", "payment_failed", "canceled"])

const read = (event: Stripe.Event) =>
  Effect.gen(function*() {
    const base = { event_id: event.id, created: event.created }
    const [family, ...rest] = event.type.split(".")
    const type = rest.join(".")
    if (family === "payment_intent" && PAYMENT_INTENT_TYPES.has(type)) {
      const intent = yield* Schema.decodeUnknownEffect(PaymentIntentObject)(event.data.object)
      return {
        ...base,
        _tag: "PaymentIntent",
        type: type as "succeeded",
        payment_intent: intent.id,
        amount: intent.amount,
        amount_capturable: intent.amount_capturable,
        amount_received: intent.amount_received,
        currency: intent.currency,
        decline_code: type === "payment_failed" ? normalize(intent.last_payment_error) : undefined,
        reference: intent.metadata?.["tender_reference"]
      } satisfies StripeNotification
    }
    if (family === "refund" && (type === "created" || type === "updated")) {
      const refund = yield* Schema.decodeUnknownEffect(RefundObject)(event.data.object)
      return {
        ...base,
        _tag: "Refund",
        type,
        refund: refund.id,
        payment_intent: refund.payment_intent ?? undefined,
        amount: refund.amount,
        currency: refund.currency,
        status: refund.status
      } satisfies StripeNotification
    }
    return { ...base, _tag: "Other", type: event.type } satisfies StripeNotification
  })

/** Verifies and reads one notification; `nowMs` is when it was received (the age check). */
export const verify = (rawBody: string | Uint8Array, signature: string | undefined, secret: string, nowMs: number = Date.now()) =>
  Effect.try({
    try: () => webhooks.constructEvent(rawBody as string, signature ?? "", secret, TOLERANCE_SECONDS, undefined, nowMs),
    catch: (error) => new NotificationRejected({ message: error instanceof Error ? error.message : "The notification could not be verified" })
  }).pipe(
    Effect.flatMap((event) =>
      Effect.mapError(read(event), (error) => new NotificationRejected({ message: `A signed ${event.type} event Tender cannot read: ${error.message}` }))),
    Effect.map((notification): StripeNotification => notification)
  )
