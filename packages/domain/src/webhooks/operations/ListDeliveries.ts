/**
 * Operations: the delivery log (GET /v1/webhook_deliveries, newest first; an operator's over every
 * account) and one delivery with its attempts.
 */
import { Effect } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { pageOf } from "../../kernel/Search.ts"
import { WebhookDeliveryRepo } from "../WebhookPorts.ts"
import { type DeliverySearchInput, listInput } from "../WebhookRequest.ts"
import { attemptView, deliveryView } from "../WebhookViews.ts"
import { loadDelivery } from "./Kit.ts"

export const listDeliveries = Effect.fn("Webhooks.listDeliveries")(function*(account: Account | undefined, input: DeliverySearchInput) {
  const base = yield* listInput(input)
  const rows = yield* (yield* WebhookDeliveryRepo).search({
    account_id: account?.id,
    endpoint_id: input.endpoint_id,
    event_id: input.event_id,
    status: input.status,
    ...base
  })
  return pageOf(rows, rows.data.map(deliveryView))
})

export const getDelivery = Effect.fn("Webhooks.getDelivery")(function*(account: Account | undefined, id: string) {
  const delivery = yield* loadDelivery(account, id)
  return { ...deliveryView(delivery), attempts: (yield* (yield* WebhookDeliveryRepo).attempts(delivery.id)).map(attemptView) }
})
