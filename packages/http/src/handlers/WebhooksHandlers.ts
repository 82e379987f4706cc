import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Webhooks } from "@tender/domain"
import { Api } from "../Api.ts"
import { CurrentAccount, run, runRead } from "../RequestContext.ts"

export const WebhookEndpointsHandlers = HttpApiBuilder.group(
  Api,
  "webhookEndpoints",
  Effect.fn(function*(handlers) {
    const webhooks = yield* Webhooks
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => run(webhooks.createEndpoint(account, payload))))
      .handle("list", () => Effect.flatMap(CurrentAccount, (account) => webhooks.listEndpoints(account)))
      .handle("get", ({ params }) => Effect.flatMap(CurrentAccount, (account) => run(webhooks.getEndpoint(account, params.id))))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(CurrentAccount, (account) => run(webhooks.updateEndpoint(account, params.id, payload))))
      .handle("delete", ({ params }) => Effect.flatMap(CurrentAccount, (account) => run(webhooks.deleteEndpoint(account, params.id))))
  })
)

export const WebhookDeliveriesHandlers = HttpApiBuilder.group(
  Api,
  "webhookDeliveries",
  Effect.fn(function*(handlers) {
    const webhooks = yield* Webhooks
    return handlers
      .handle("list", ({ query }) =>
        Effect.flatMap(CurrentAccount, (account) =>
          runRead(webhooks.listDeliveries(account, { ...query, status: query.status === undefined ? undefined : [query.status] }))))
      .handle("get", ({ params }) => Effect.flatMap(CurrentAccount, (account) => runRead(webhooks.getDelivery(account, params.id))))
      .handle("retry", ({ params }) => Effect.flatMap(CurrentAccount, (account) => run(webhooks.retryDelivery(account, params.id))))
  })
)
