import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Outflows } from "@tender/domain"
import { Api } from "../Api.ts"
import { CurrentAccount, run, runRead } from "../RequestContext.ts"

export const RefundsHandlers = HttpApiBuilder.group(
  Api,
  "refunds",
  Effect.fn(function*(handlers) {
    const outflows = yield* Outflows
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => run(outflows.refund(account, payload))))
      .handle("get", ({ params }) => Effect.flatMap(CurrentAccount, (account) => runRead(outflows.getRefund(account, params.id))))
  })
)

export const PayoutsHandlers = HttpApiBuilder.group(
  Api,
  "payouts",
  Effect.fn(function*(handlers) {
    const outflows = yield* Outflows
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => run(outflows.payout(account, payload))))
      .handle("get", ({ params }) => Effect.flatMap(CurrentAccount, (account) => runRead(outflows.getPayout(account, params.id))))
  })
)
