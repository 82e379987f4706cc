/**
 * Operation: register a webhook endpoint (POST /v1/webhook_endpoints). Validate (the URL under the
 * receiver policy, the event types, the description) → decide (pure: the new endpoint, `enabled`) →
 * insert, capped per account (`webhook_limit_exceeded` past 16, counted under a per-account lock in
 * storage) → its view.
 */
import { Effect } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { WebhookLimitExceeded } from "../../kernel/Errors.ts"
import { Ids } from "../../kernel/Ids.ts"
import { nowIso } from "../../kernel/Time.ts"
import * as Webhook from "../Webhook.ts"
import { WebhookEndpointRepo } from "../WebhookPorts.ts"
import { checkEndpointUrl } from "../WebhookReceivers.ts"
import { type CreateEndpointInput, descriptionProblem, validateEvents } from "../WebhookRequest.ts"
import { endpointView } from "../WebhookViews.ts"

/** The new endpoint (pure), or what is wrong with the input; `url` is checked already. */
export const planEndpoint = (
  account: Account,
  input: CreateEndpointInput,
  facts: { readonly id: string; readonly url: string; readonly at: string }
) => {
  const enabled = validateEvents(input.enabled_events)
  if (enabled instanceof Error) return enabled
  const problem = descriptionProblem(input.description)
  if (problem !== undefined) return problem
  return Webhook.bornEndpoint({
    id: facts.id,
    account_id: account.id,
    url: facts.url,
    enabled_events: enabled,
    description: input.description ?? null,
    created_at: facts.at
  })
}

export const createEndpoint = Effect.fn("Webhooks.createEndpoint")(function*(account: Account, input: CreateEndpointInput) {
  const url = yield* checkEndpointUrl(account.mode, input.url)
  const endpoint = planEndpoint(account, input, { id: yield* (yield* Ids).make("webhookEndpoint"), url, at: yield* nowIso })
  if (endpoint instanceof Error) return yield* endpoint
  if (!(yield* (yield* WebhookEndpointRepo).insert(endpoint, Webhook.MAX_ENDPOINTS))) {
    return yield* new WebhookLimitExceeded({ message: `An account may have at most ${Webhook.MAX_ENDPOINTS} webhook endpoints` })
  }
  return endpointView(endpoint)
})
