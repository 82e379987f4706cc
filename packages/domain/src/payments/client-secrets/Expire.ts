/** Operation: the sandbox's helper that ends a secret of a (test-mode) account at once. */
import { Clock, Effect, Option } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { invalidField } from "../../kernel/Errors.ts"
import { isoOf } from "../../kernel/Time.ts"
import { ClientSecretRepo } from "../ClientSecretPorts.ts"
import { recordOf } from "./Grant.ts"

/** Pure: when the secret ends, ended at `at`: then, unless it had ended already. */
export const endsAt = (at: string, expiresAt: string): string => Date.parse(at) < Date.parse(expiresAt) ? at : expiresAt

export const expire = Effect.fn("ClientSecrets.expire")(function*(account: Account, clientSecret: string) {
  const found = Option.filter(yield* recordOf(clientSecret), (r) => r.account_id === account.id)
  if (Option.isNone(found)) return yield* invalidField("client_secret", "no such client secret in this account")
  const at = isoOf(yield* Clock.currentTimeMillis)
  yield* (yield* ClientSecretRepo).expire(found.value.hash, at)
  return { expires_at: endsAt(at, found.value.expires_at) }
})
