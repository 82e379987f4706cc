import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Customers } from "@tender/domain"
import { Api } from "../Api.ts"
import { CurrentAccount, run, runRead } from "../RequestContext.ts"

export const CustomersHandlers = HttpApiBuilder.group(
  Api,
  "customers",
  Effect.fn(function*(handlers) {
    const customers = yield* Customers
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => run(customers.create(account, payload))))
      .handle("get", ({ params }) => Effect.flatMap(CurrentAccount, (account) => runRead(customers.get(account, params.id))))
  })
)
