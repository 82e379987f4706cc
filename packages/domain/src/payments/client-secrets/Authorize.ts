/** Operation: the grant behind every SDK call; refused (401) unless the secret is live and the key's account's. */
import { Clock, Effect, Result } from "effect"
import { Accounts } from "../../accounts/Accounts.ts"
import { grantOf, recordOf } from "./Grant.ts"

export const authorize = Effect.fn("ClientSecrets.authorize")(function*(publishableKey: string, clientSecret: string) {
  const account = yield* (yield* Accounts).authenticatePublishable(publishableKey)
  const grant = grantOf(account, yield* recordOf(clientSecret), yield* Clock.currentTimeMillis)
  return Result.isSuccess(grant) ? grant.success : yield* Effect.fail(grant.failure)
})
