/**
 * What the browser SDK reads and gets back, as Schemas: the routes encode their answers with them and
 * the OpenAPI document shows them (packages/http/src/client/ClientOpenApi.ts).
 */
import { Code, Id, Int, Reference, Url } from "@tender/api/api/Bounded"
import { Schema } from "effect"
import { ThreeDsDisplayMode } from "../accounts/Account.ts"
import { ClientSecretRecord } from "./ClientSecretPorts.ts"
import type { Order, Transaction } from "./Payment.ts"

/** The payment (or card transfer) a client secret names, as the card element needs it. */
export const ClientSession = Schema.Struct({
  kind: ClientSecretRecord.fields.kind,
  // Bounded as the merchant API's views (@tender/api's Bounded.ts): the document states each bound.
  payment_id: Id,
  collect: ClientSecretRecord.fields.collect,
  /** In major units, as the merchant API's amounts. */
  amount: Schema.Finite,
  currency: Code,
  /** The card on file a `cvv` secret collects the code for: brand and last four only. */
  saved_card: Schema.NullOr(Schema.Struct({ brand: Code, last4: Code })),
  livemode: Schema.Boolean,
  expires_at: Code
}).annotate({ identifier: "ClientSession", description: "The payment (or card transfer) a client secret names, as the card element needs it." })
/** The payment (or card transfer) a client secret names. */
export type ClientSession = typeof ClientSession.Type

/** The vaulted card the browser gets back: an opaque token and what may be shown, never the number. */
export const ClientCardToken = Schema.Struct({
  token: Id,
  brand: Code,
  last4: Code,
  bin: Code,
  /** Null for a saved card whose CVC was collected: its expiry is not the browser's. */
  exp_month: Schema.NullOr(Int),
  exp_year: Schema.NullOr(Int)
}).annotate({ identifier: "ClientCardToken", description: "The vaulted card: an opaque token for `pay` (or the merchant's server), never the number." })
/** The vaulted card the browser gets back. */
export type ClientCardToken = typeof ClientCardToken.Type

/** The payment as the browser sees it: authorized counts as succeeded. */
export const ClientPaymentStatus = Schema.Struct({
  status: Schema.Literals(["succeeded", "failed", "requires_action"]),
  payment_id: Id,
  decline_code: Schema.optionalKey(Reference),
  /** While a 3-D Secure challenge waits on the customer. */
  challenge_url: Schema.optionalKey(Url)
}).annotate({ identifier: "ClientPaymentStatus", description: "The payment as the browser sees it: authorized counts as succeeded." })
/** The payment as the browser sees it. */
export type ClientPaymentStatus = typeof ClientPaymentStatus.Type

/** `pay`'s answer: the status, and with a challenge how to show it. */
export const ClientPayResult = Schema.Struct({
  ...ClientPaymentStatus.fields,
  /** With a challenge only: how tender.js shows it (the account's 3-D Secure display mode). */
  display_mode: Schema.optionalKey(ThreeDsDisplayMode)
}).annotate({ identifier: "ClientPayResult", description: "`pay`'s answer: the status, and with a challenge how to show it." })
/** `pay`'s answer. */
export type ClientPayResult = typeof ClientPayResult.Type

/** Pure: the browser's view of a payment and its latest attempt: authorized counts as succeeded (spec, SDK pay result). */
export const statusOf = (order: Order, txn: Transaction | undefined): ClientPaymentStatus => {
  const shown = (status: ClientPaymentStatus["status"], extra: Partial<ClientPaymentStatus> = {}): ClientPaymentStatus =>
    ({ status, payment_id: order.id, ...extra })
  switch (order.status) {
    case "authorized":
    case "succeeded":
      return shown("succeeded")
    case "failed":
    case "canceled":
    case "returned":
      return shown("failed", txn?.decline_code ? { decline_code: txn.decline_code } : {})
    default: {
      // A checkout session's declined attempt leaves its order pending for the customer's
      // retry: the attempt paid with this secret failed all the same.
      if (txn?.status === "failed" || txn?.status === "canceled") {
        return shown("failed", txn.decline_code ? { decline_code: txn.decline_code } : {})
      }
      const url = txn?.three_ds === "required" && txn.next_action?.type === "redirect" ? txn.next_action.redirect_url : undefined
      return shown("requires_action", url !== undefined ? { challenge_url: url } : {})
    }
  }
}
