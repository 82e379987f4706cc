/** What the webhook operations share: loading an endpoint or a delivery, or failing with the spec's not-found. */
import { Effect, Option, Result } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { WebhookDeliveryNotFound, WebhookNotFound } from "../../kernel/Errors.ts"
import { WebhookDeliveryRepo, WebhookEndpointRepo } from "../WebhookPorts.ts"

export const loadEndpoint = (account: Account, id: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* WebhookEndpointRepo).find(account.id, id)
    if (Option.isNone(found)) return yield* new WebhookNotFound({ message: `No webhook endpoint ${id}` })
    return found.value
  })

/** A delivery of the account's, or of any account's (`undefined`: the operator). */
export const loadDelivery = (account: Account | undefined, id: string) =>
  Effect.gen(function*() {
    const deliveries = yield* WebhookDeliveryRepo
    const found = yield* (account === undefined ? deliveries.findAny(id) : deliveries.find(account.id, id))
    if (Option.isNone(found)) return yield* new WebhookDeliveryNotFound({ message: `No webhook delivery ${id}` })
    return found.value
  })

/** A transition our own flows asked for: the table lacking it is a bug, not a client's problem. */
export const decided = <A, E>(result: Result.Result<A, E>): Effect.Effect<A> =>
  Result.isSuccess(result) ? Effect.succeed(result.success) : Effect.die(result.failure)
