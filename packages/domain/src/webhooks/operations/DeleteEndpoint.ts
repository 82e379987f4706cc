/**
 * Operation: delete a webhook endpoint (DELETE /v1/webhook_endpoints/{id}). Its delivery log stays;
 * its paused deliveries resume (Webhook.pauseOnDelete: always, since a disable may commit after the
 * endpoint was read), in the same unit of work, so each open one ends `exhausted` ("endpoint
 * deleted") at its next attempt.
 */
import { Effect } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { UnitOfWork } from "../../kernel/Ports.ts"
import * as Webhook from "../Webhook.ts"
import { WebhookDeliveryRepo, WebhookEndpointRepo } from "../WebhookPorts.ts"
import { loadEndpoint } from "./Kit.ts"

export const deleteEndpoint = Effect.fn("Webhooks.deleteEndpoint")(function*(account: Account, id: string) {
  const endpoint = yield* loadEndpoint(account, id)
  const pause = Webhook.pauseOnDelete(endpoint)
  yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    yield* (yield* WebhookEndpointRepo).delete(account.id, id)
    yield* (yield* WebhookDeliveryRepo).pause(pause)
  }))
  return { id, deleted: true as const }
})
