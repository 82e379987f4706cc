import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Transfers } from "@tender/domain"
import { Api } from "../Api.ts"
import { CurrentAccount, run, runRead } from "../RequestContext.ts"

export const TransfersHandlers = HttpApiBuilder.group(
  Api,
  "transfers",
  Effect.fn(function*(handlers) {
    const transfers = yield* Transfers
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => run(transfers.create(account, payload))))
      .handle("get", ({ params }) => Effect.flatMap(CurrentAccount, (account) => runRead(transfers.get(account, params.id))))
      .handle("execute", ({ params, payload }) =>
        Effect.flatMap(CurrentAccount, (account) => run(transfers.execute(account, params.order_id, payload))))
  })
)
