import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { VaultAccess } from "@tender/domain"
import { Api } from "../Api.ts"
import { CurrentAccount, run } from "../RequestContext.ts"

export const VaultHandlers = HttpApiBuilder.group(
  Api,
  "vault",
  Effect.fn(function*(handlers) {
    const vault = yield* VaultAccess
    return handlers.handle("createAccessToken", () => Effect.flatMap(CurrentAccount, (account) => run(vault.issue(account))))
  })
)
