/**
 * Operation: retry a delivery by hand (POST /v1/webhook_deliveries/{id}/retry, `tender webhooks
 * deliveries retry`): a `failed` or `exhausted` one is made due now; an exhausted one gets one more
 * attempt (failing it, it is exhausted again). Validate → load → decide (pure) → write, fenced by the
 * lease read → the delivery's view.
 */
import { Effect, Result } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { Conflict, WebhookDeliveryNotRetryable } from "../../kernel/Errors.ts"
import type { Decided } from "../../kernel/StateMachine.ts"
import { nowIso } from "../../kernel/Time.ts"
import * as Webhook from "../Webhook.ts"
import { WebhookDeliveryRepo } from "../WebhookPorts.ts"
import { deliveryView } from "../WebhookViews.ts"
import { loadDelivery } from "./Kit.ts"

const inFlight = (id: string) => new Conflict({ message: `Delivery ${id} is being attempted now; retry once the attempt is recorded` })

/**
 * The retried delivery (pure): the wrong status is `webhook_delivery_not_retryable`, checked first;
 * one whose attempt holds its lease is `conflict` (that attempt records its outcome, which decides
 * what is next).
 */
export const decideRetry = (
  delivery: Webhook.WebhookDelivery,
  at: string
): Result.Result<Decided<Webhook.WebhookDelivery>, WebhookDeliveryNotRetryable | Conflict> => {
  const moved = Webhook.transition(delivery, "retried", at, {
    attempts: delivery.status === "exhausted" ? Webhook.MAX_ATTEMPTS - 1 : delivery.attempts,
    next_attempt_at: at
  })
  if (Result.isFailure(moved)) {
    return Result.fail(
      new WebhookDeliveryNotRetryable({
        message: `Delivery ${delivery.id} is ${delivery.status}; only failed or exhausted deliveries can be retried`
      })
    )
  }
  return Webhook.isLeased(delivery, at) ? Result.fail(inFlight(delivery.id)) : Result.succeed(moved.success.next)
}

export const redeliver = Effect.fn("Webhooks.retryDelivery")(function*(account: Account | undefined, id: string) {
  const delivery = yield* loadDelivery(account, id)
  const next = decideRetry(delivery, yield* nowIso)
  if (Result.isFailure(next)) return yield* next.failure
  // Fenced by the lease read here: a claim since lands in `conflict` too; pruned since (retention),
  // the read again answers it not found.
  if (!(yield* (yield* WebhookDeliveryRepo).update(next.success))) {
    yield* loadDelivery(account, id)
    return yield* inFlight(id)
  }
  return deliveryView(next.success)
})
