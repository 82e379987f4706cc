/**
 * Stripe webhook notifications: the `Stripe-Signature` header verified with the official SDK
 * (HMAC-SHA256 of `<t>.<raw body>`, any `v1` signature may match, `t` within 300 s of now either
 * way), then the
 * event read into what Tender's record step needs. The raw body must be the bytes Stripe sent:
 * a re-serialized JSON body no longer matches its signature.
 */
import type { ProviderNotice } from "@tender/domain"
import { Data, Effect, Schema } from "effect"
import Stripe from "stripe"
import { normalize } from "./StripeDeclines.ts"
import { refundResult } from "./StripeProvider.ts"

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
    /** Our refund transaction's id (the refund's metadata `tender_reference`). */
    readonly reference: string | undefined
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
  status: Schema.String,
  metadata: Schema.optional(Schema.Record(Schema.String, Schema.String))
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
        status: refund.status,
        reference: refund.metadata?.["tender_reference"]
      } satisfies StripeNotification
    }
    return { ...base, _tag: "Other", type: event.type } satisfies StripeNotification
  })

/**
 * The header's `t` as the SDK reads it (the last `t=` item, split on `,` and `=` untrimmed): the
 * timestamp its signature was checked over.
 */
const signedAt = (header: string): number =>
  header.split(",").reduce((at, item) => {
    const [key, value] = item.split("=")
    return key === "t" ? parseInt(value ?? "", 10) : at
  }, Number.NaN)

/**
 * Verifies and reads one notification; `nowMs` is when it was received. The SDK refuses a `t` more
 * than the tolerance in the past only; one as far in the future is refused here too (a clock that
 * far ahead, or a signature made to be replayed later, is outside the window either way).
 */
export const verify = (rawBody: string | Uint8Array, signature: string | undefined, secret: string, nowMs: number = Date.now()) =>
  Effect.try({
    try: () => webhooks.constructEvent(rawBody as string, signature ?? "", secret, TOLERANCE_SECONDS, undefined, nowMs),
    catch: (error) => new NotificationRejected({ message: error instanceof Error ? error.message : "The notification could not be verified" })
  }).pipe(
    Effect.tap(() =>
      signedAt(signature ?? "") - Math.floor(nowMs / 1000) > TOLERANCE_SECONDS
        ? Effect.fail(new NotificationRejected({ message: "Timestamp outside the tolerance zone (in the future)" }))
        : Effect.void
    ),
    Effect.flatMap((event) =>
      Effect.mapError(read(event), (error) => new NotificationRejected({ message: `A signed ${event.type} event Tender cannot read: ${error.message}` }))),
    Effect.map((notification): StripeNotification => notification)
  )

/**
 * What an event says of one of Tender's transactions, as a lookup would answer it; nothing for an
 * event about a payment made outside Tender (no `tender_reference`: a lookup's fence, a payment
 * from Stripe's dashboard) or one Tender records nothing from. A PaymentIntent event is about the
 * authorization (its reference is the attempt's); its cancel about the attempt's void. A refund
 * event answers the refund call and, once the refund is no longer pending, settles it.
 */
export const noticesOf = (event: StripeNotification): ReadonlyArray<ProviderNotice> => {
  if (event._tag === "Other" || event.reference === undefined) return []
  const about = { reference: event.reference, amount: event.amount, currency: event.currency.toUpperCase() }
  if (event._tag === "Refund") {
    const result = refundResult({ id: event.refund, status: event.status })
    const settlement = result._tag === "Paid" ? "settled" as const : result._tag === "Refused" ? "failed" as const : undefined
    return [{ ...about, answer: { _tag: "Refund", result }, settlement }]
  }
  switch (event.type) {
    case "succeeded":
    case "amount_capturable_updated":
      // The event's PaymentIntent never carries its expanded charge: whether multicapture is
      // available is not in it (docs/decisions.md, "Provider notifications").
      return [{ ...about, answer: { _tag: "Authorize", result: { _tag: "Approved", provider_transaction_id: event.payment_intent, multicapture: false } } }]
    case "payment_failed":
      return [{
        ...about,
        answer: { _tag: "Authorize", result: { _tag: "Declined", decline_code: event.decline_code ?? "card_declined", provider_transaction_id: event.payment_intent } }
      }]
    case "canceled":
      return [{ ...about, answer: { _tag: "Void", result: { _tag: "Voided", provider_transaction_id: event.payment_intent } } }]
  }
}
