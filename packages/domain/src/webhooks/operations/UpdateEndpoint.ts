/**
 * Operation: change a webhook endpoint (POST /v1/webhook_endpoints/{id}): its URL, event types,
 * description or status. Load → validate → decide (pure: the endpoint's table moves its status, and
 * the pause rule says what that does to its deliveries) → persist both in one unit of work (the
 * endpoint's version-checked row first, then its deliveries: the lock order) → its view. A write
 * over a version changed since the load is `conflict`.
 */
import { Effect, Result } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { UnitOfWork } from "../../kernel/Ports.ts"
import { type Changes, revise } from "../../kernel/StateMachine.ts"
import { nowIso } from "../../kernel/Time.ts"
import * as Webhook from "../Webhook.ts"
import { WebhookDeliveryRepo, WebhookEndpointRepo } from "../WebhookPorts.ts"
import { checkEndpointUrl } from "../WebhookReceivers.ts"
import { type UpdateEndpointInput, validateEvents } from "../WebhookRequest.ts"
import { endpointView } from "../WebhookViews.ts"
import { decided, loadEndpoint } from "./Kit.ts"

/**
 * The endpoint after the change (pure), and what happens to its deliveries when its status moves
 * (`undefined`: nothing). Asking for the status it has is no move.
 */
export const decideEndpointUpdate = (
  current: Webhook.WebhookEndpoint,
  changes: Changes<Webhook.WebhookEndpoint>,
  status: Webhook.EndpointStatus | undefined,
  at: string
) =>
  status === undefined || status === current.status
    ? Result.succeed({ next: revise(current, changes, at), pause: undefined })
    : Result.map(Webhook.transitionEndpoint(current, Webhook.triggerTo(status), at, changes), (moved) => ({
      next: moved.next,
      pause: Webhook.pauseOf(moved.next) as Webhook.DeliveryPause | undefined
    }))

export const updateEndpoint = Effect.fn("Webhooks.updateEndpoint")(function*(account: Account, id: string, input: UpdateEndpointInput) {
  const current = yield* loadEndpoint(account, id)
  const url = input.url === undefined ? current.url : yield* checkEndpointUrl(account.mode, input.url)
  const enabled = input.enabled_events === undefined ? current.enabled_events : validateEvents(input.enabled_events)
  if (enabled instanceof Error) return yield* enabled
  const changes = { url, enabled_events: enabled, description: input.description ?? current.description }
  const { next, pause } = yield* decided(decideEndpointUpdate(current, changes, input.status, yield* nowIso))
  yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    yield* (yield* WebhookEndpointRepo).update(next)
    if (pause !== undefined) yield* (yield* WebhookDeliveryRepo).pause(pause)
  }))
  return endpointView(next)
})
