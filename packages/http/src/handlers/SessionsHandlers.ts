import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Sessions } from "@tender/domain"
import { Api } from "../Api.ts"
import { CurrentAccount, CurrentTestAccount, run, runRead } from "../RequestContext.ts"

export const SessionsHandlers = HttpApiBuilder.group(
  Api,
  "checkoutSessions",
  Effect.fn(function*(handlers) {
    const sessions = yield* Sessions
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => run(sessions.create(account, payload))))
      .handle("get", ({ params }) => Effect.flatMap(CurrentAccount, (account) => runRead(sessions.get(account, params.id))))
      .handle("byReference", ({ params }) =>
        Effect.flatMap(CurrentAccount, (account) => runRead(sessions.byReference(account, params.merchant_reference))))
      .handle("search", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => runRead(sessions.search(account, payload))))
      .handle("cancel", ({ params }) => Effect.flatMap(CurrentAccount, (account) => run(sessions.cancel(account, params.id))))
  })
)

export const SessionTestHelpersHandlers = HttpApiBuilder.group(
  Api,
  "sessionTestHelpers",
  Effect.fn(function*(handlers) {
    const sessions = yield* Sessions
    return handlers.handle("attempt", ({ params, payload }) =>
      Effect.flatMap(CurrentTestAccount, (account) => sessions.attempt(account, params.id, payload)).pipe(run))
  })
)
