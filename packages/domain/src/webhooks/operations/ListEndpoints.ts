/** Operations: an account's webhook endpoints (GET /v1/webhook_endpoints, oldest first) and one of them. */
import { Effect } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { WebhookEndpointRepo } from "../WebhookPorts.ts"
import { endpointView } from "../WebhookViews.ts"
import { loadEndpoint } from "./Kit.ts"

export const listEndpoints = (account: Account) =>
  Effect.gen(function*() {
    return { data: (yield* (yield* WebhookEndpointRepo).list(account.id)).map(endpointView) }
  })

export const getEndpoint = (account: Account, id: string) => Effect.map(loadEndpoint(account, id), endpointView)
