/**
 * Adyen standard notifications (webhooks): the body `{live, notificationItems:
 * [{NotificationRequestItem}]}` decoded with Schema at the edge, every item's
 * `additionalData.hmacSignature` verified with the official library's HmacValidator (HMAC-SHA256
 * over Adyen's field concatenation, key in hex), then read into what Tender's record step needs.
 * One unverified item rejects the whole delivery: Adyen then delivers it again.
 */
import Adyen from "@adyen/api-library"
import type { ProviderNotice } from "@tender/domain"
import { Data, Effect, Schema } from "effect"
import { normalize } from "./AdyenDeclines.ts"
import { captureId, FENCE_REFERENCE } from "./AdyenReferences.ts"

export class NotificationRejected extends Data.TaggedError("NotificationRejected")<{ readonly message: string }> {}

export interface AdyenNotification {
  /**
   * AUTHORISATION, CAPTURE, CAPTURE_FAILED, CANCELLATION, REFUND, REFUND_FAILED, …; `Other` for
   * the rest, and for the failed CANCELLATION of a lookup's probe (nothing of a payment).
   */
  readonly _tag: "Authorisation" | "Capture" | "Cancellation" | "Refund" | "Other"
  readonly event_code: string
  readonly success: boolean
  /** The payment's pspReference for AUTHORISATION; the modification's for the others. */
  readonly psp_reference: string
  /** The payment's pspReference on a modification. */
  readonly original_reference: string | undefined
  readonly merchant_reference: string
  readonly merchant_account: string
  readonly amount: number
  readonly currency: string
  readonly reason: string
  /** The normalized decline code of a refused authorisation. */
  readonly decline_code: string | undefined
}

const Item = Schema.Struct({
  additionalData: Schema.optional(Schema.Record(Schema.String, Schema.String)),
  amount: Schema.Struct({ value: Schema.Number, currency: Schema.String }),
  eventCode: Schema.String,
  eventDate: Schema.optional(Schema.String),
  merchantAccountCode: Schema.String,
  merchantReference: Schema.String,
  originalReference: Schema.optional(Schema.String),
  pspReference: Schema.String,
  reason: Schema.optional(Schema.String),
  success: Schema.Literals(["true", "false"])
})

const Delivery = Schema.Struct({
  live: Schema.optional(Schema.String),
  notificationItems: Schema.Array(Schema.Struct({ NotificationRequestItem: Item }))
})

const TAGS: Readonly<Record<string, AdyenNotification["_tag"]>> = {
  AUTHORISATION: "Authorisation",
  CAPTURE: "Capture",
  CAPTURE_FAILED: "Capture",
  CANCELLATION: "Cancellation",
  REFUND: "Refund",
  REFUND_FAILED: "Refund"
}

const validator = new Adyen.hmacValidator()

const read = (item: typeof Item.Type): AdyenNotification => {
  // CAPTURE_FAILED / REFUND_FAILED arrive with success "true" (the failure report succeeded): the event says it failed.
  const success = item.success === "true" && !item.eventCode.endsWith("_FAILED")
  const tag = item.merchantReference === FENCE_REFERENCE ? "Other" : TAGS[item.eventCode] ?? "Other"
  return {
    _tag: tag,
    event_code: item.eventCode,
    success,
    psp_reference: item.pspReference,
    original_reference: item.originalReference,
    merchant_reference: item.merchantReference,
    merchant_account: item.merchantAccountCode,
    amount: item.amount.value,
    currency: item.amount.currency,
    reason: item.reason ?? "",
    decline_code: tag === "Authorisation" && !success ? normalize({ refusalReason: item.reason }) : undefined
  }
}

const reject = (message: string) => new NotificationRejected({ message })

/** Verifies and reads one delivery (its raw body) under the merchant account's HMAC key (hex). */
export const verify = (rawBody: string, hmacKey: string) =>
  Effect.gen(function*() {
    const json = yield* Effect.try({ try: () => JSON.parse(rawBody) as unknown, catch: () => reject("The notification body is not JSON") })
    const delivery = yield* Schema.decodeUnknownEffect(Delivery)(json).pipe(
      Effect.mapError((error) => reject(`Not an Adyen notification: ${error.message}`))
    )
    if (delivery.notificationItems.length === 0) return yield* reject("The notification carries no items")
    const items: Array<AdyenNotification> = []
    for (const { NotificationRequestItem: item } of delivery.notificationItems) {
      const signature = item.additionalData?.["hmacSignature"]
      if (signature === undefined) return yield* reject(`Notification ${item.pspReference} ${item.eventCode} is not signed`)
      // The library's item type wants its own enum-typed fields; the values are exactly what Adyen sent.
      const valid = validator.validateHMAC(item as unknown as Parameters<typeof validator.validateHMAC>[0], hmacKey)
      if (!valid) return yield* reject(`Notification ${item.pspReference} ${item.eventCode}: the HMAC signature does not match`)
      items.push(read(item))
    }
    return items as ReadonlyArray<AdyenNotification>
  })

/**
 * What one item says of one of Tender's transactions (its merchantReference is the reference
 * Tender sent: the attempt's id, and on the repository's fake a modification's payment's), with
 * the provider ids the adapter's own answers carry (a capture's is `payment/capture`). CAPTURE and
 * REFUND also settle (or fail) a capture or refund Adyen accepted for later. Nothing for items
 * that say nothing of a payment (`Other`).
 */
export const noticesOf = (item: AdyenNotification): ReadonlyArray<ProviderNotice> => {
  const psp = item.psp_reference
  /** One notice; `settles`: a capture's or refund's outcome also settles (or fails) it. */
  const notice = (answer: ProviderNotice["answer"], settles = false, providerId?: string): ReadonlyArray<ProviderNotice> => [{
    reference: item.merchant_reference,
    ...(providerId === undefined ? {} : { provider_transaction_id: providerId }),
    amount: item.amount,
    currency: item.currency.toUpperCase(),
    answer,
    ...(settles ? { settlement: item.success ? "settled" as const : "failed" as const } : {})
  }]
  switch (item._tag) {
    case "Authorisation":
      return notice({
        _tag: "Authorize",
        result: item.success
          // Multiple partial captures are a merchant-account setting Tender's channels leave off (AdyenProvider).
          ? { _tag: "Approved", provider_transaction_id: psp, multicapture: false }
          : { _tag: "Declined", decline_code: item.decline_code ?? "card_declined", provider_transaction_id: psp }
      })
    case "Capture":
      if (item.original_reference === undefined) return []
      return notice({
        _tag: "Capture",
        result: item.success
          ? { _tag: "Settled", provider_transaction_id: captureId(item.original_reference, psp) }
          : { _tag: "Refused", decline_code: "capture_refused" }
      }, true, captureId(item.original_reference, psp))
    case "Cancellation":
      return notice({ _tag: "Void", result: item.success ? { _tag: "Voided", provider_transaction_id: psp } : { _tag: "Refused", decline_code: "void_refused" } })
    case "Refund":
      return notice({ _tag: "Refund", result: item.success ? { _tag: "Paid", provider_transaction_id: psp } : { _tag: "Refused", decline_code: "refund_refused" } }, true, psp)
    case "Other":
      return []
  }
}
