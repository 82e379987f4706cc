import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CardTokens, Errors } from "@tender/domain"
import { Api } from "../Api.ts"
import { CurrentAccount, run } from "../RequestContext.ts"

export const TestHelpersHandlers = HttpApiBuilder.group(
  Api,
  "testHelpers",
  Effect.fn(function*(handlers) {
    const cardTokens = yield* CardTokens
    return handlers.handle("createCardToken", ({ payload }) =>
      Effect.gen(function*() {
        const account = yield* CurrentAccount
        if (account.mode !== "test") {
          return yield* new Errors.Forbidden({ message: "Test helpers are available to test-mode accounts only" })
        }
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
  })
)
