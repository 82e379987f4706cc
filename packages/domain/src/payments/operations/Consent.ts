/**
 * Operation: assert the card-storage consent of a payment (POST /v1/payments/{order_id}/card_storage_consent;
 * the browser SDK's routes call the same). The first assertion is stored on the order; the identical
 * one again changes nothing; a different one is 409 `consent_conflict` (spec). Decided under the
 * order's row lock, so two different assertions racing cannot both be stored.
 */
import { Effect, Option } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { ConsentConflict, OrderNotFound } from "../../kernel/Errors.ts"
import type * as Views from "@tender/api/Views"
import type { CardStorageConsent, Order } from "../Payment.ts"
import { OrderRepo } from "../PaymentPorts.ts"
import { revise } from "../../kernel/StateMachine.ts"
import { nowIso } from "../../kernel/Time.ts"
import { lockOrder } from "./Load.ts"
import { saveOrder, unitOfWork } from "./Persist.ts"

/** The API's view (@tender/api/Views). */
export type ConsentView = typeof Views.ConsentView.Type

/** Same grant and same usage (an absent usage is a usage of its own, not a wildcard). */
export const sameConsent = (a: CardStorageConsent, b: CardStorageConsent): boolean => a.granted === b.granted && a.usage === b.usage

const consentView = (order: Order, consent: CardStorageConsent): ConsentView => ({
  order_id: order.id,
  customer_id: order.customer_id,
  card_storage_consent: consent
})

export const assertConsent = Effect.fn("Payments.assertConsent")(function*(account: Account, orderId: string, consent: CardStorageConsent) {
  const found = yield* (yield* OrderRepo).find(account.id, orderId)
  if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${orderId}` })
  // Only the fields the spec knows are kept, whatever else the caller sent.
  const asserted: CardStorageConsent = consent.usage === undefined ? { granted: consent.granted } : { granted: consent.granted, usage: consent.usage }
  return yield* unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(orderId)
    const held = order.card_storage_consent
    if (held === null) {
      yield* saveOrder(revise(order, { card_storage_consent: asserted }, yield* nowIso))
      return consentView(order, asserted)
    }
    if (!sameConsent(held, asserted)) {
      return yield* new ConsentConflict({
        message: `Payment ${order.id} already has a card-storage consent (granted: ${held.granted}${held.usage !== undefined ? `, usage: ${held.usage}` : ""}); a different one cannot replace it`
      })
    }
    return consentView(order, held)
  }))
})
