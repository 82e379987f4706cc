import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CardTokens, ClientSecrets, Payments } from "@tender/domain"
import { Api } from "../Api.ts"
import { CurrentTestAccount, run } from "../RequestContext.ts"

export const TestHelpersHandlers = HttpApiBuilder.group(
  Api,
  "testHelpers",
  Effect.fn(function*(handlers) {
    const cardTokens = yield* CardTokens
    const payments = yield* Payments
    const clientSecrets = yield* ClientSecrets
    return handlers.handle("createCardToken", ({ payload }) =>
      Effect.gen(function*() {
        const account = yield* CurrentTestAccount
        const card = yield* cardTokens.tokenize(account, payload)
        return {
          token: card.token,
          brand: card.brand,
          last4: card.last4,
          bin: card.bin,
          exp_month: card.exp_month,
          exp_year: card.exp_year,
          funding: card.funding
        }
      }).pipe(run))
      .handle("simulate", ({ params, payload }) =>
        Effect.flatMap(CurrentTestAccount, (account) => payments.simulate(account, params.order_id, payload)).pipe(run))
      .handle("expireClientSecret", ({ payload }) =>
        Effect.flatMap(CurrentTestAccount, (account) => clientSecrets.expire(account, payload.client_secret)).pipe(
          Effect.map(({ expires_at }) => ({ expired: true as const, expires_at })),
          run
        ))
  })
)
