/** Operations (operator): events of any account, newest first, and one event with its deliveries. */
import { Effect, Option } from "effect"
import { NotFound } from "../../kernel/Errors.ts"
import { pageOf } from "../../kernel/Search.ts"
import { EventRepo } from "../../payments/PaymentPorts.ts"
import { WebhookDeliveryRepo } from "../WebhookPorts.ts"
import { type EventSearchInput, listInput } from "../WebhookRequest.ts"
import { deliveryView, envelopeOf } from "../WebhookViews.ts"

export const listEvents = Effect.fn("Webhooks.listEvents")(function*(input: EventSearchInput) {
  const base = yield* listInput(input)
  const rows = yield* (yield* EventRepo).search({ account_id: input.account_id, type: input.type, ...base })
  return pageOf(rows, rows.data.map((e) => ({ ...envelopeOf(e), account_id: e.account_id })))
})

export const getEvent = Effect.fn("Webhooks.getEvent")(function*(id: string) {
  const event = yield* (yield* EventRepo).findAny(id)
  if (Option.isNone(event)) return yield* new NotFound({ message: `No event ${id}` })
  const rows = yield* (yield* WebhookDeliveryRepo).search({ event_id: id, limit: 100 })
  return { event: { ...envelopeOf(event.value), account_id: event.value.account_id }, deliveries: rows.data.map(deliveryView) }
})
