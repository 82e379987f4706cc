/**
 * Operation: create an account (`tender accounts create`): validate the name, issue its keys,
 * persist the Account's birth, and answer what the CLI prints once (contract.md, Operator set-up).
 */
import { Effect } from "effect"
import * as Account from "../Account.ts"
import { publishableKeyPrefix, storedKey } from "../AccountKeys.ts"
import { AccountRepo } from "../AccountPorts.ts"
import { invalidField } from "../../kernel/Errors.ts"
import { type AccountId, Ids } from "../../kernel/Ids.ts"
import { nowIso } from "../../kernel/Time.ts"
import { issueSecretKey, newSigningSecret } from "./Keys.ts"

/** What `tender accounts create --json` prints, exactly (contract.md). */
export interface CreatedAccount {
  readonly account_id: string
  readonly mode: Account.AccountMode
  readonly secret_key: string
  readonly publishable_key: string
  readonly signing_secret: string
}

export const create = (input: { readonly name: string; readonly mode: Account.AccountMode }) =>
  Effect.gen(function*() {
    const name = input.name.trim()
    if (name.length === 0 || name.length > 200) return yield* invalidField("name", "must be 1–200 characters")
    const ids = yield* Ids
    const id = (yield* ids.make("account")) as AccountId
    const issued = yield* issueSecretKey(input.mode)
    const publishableKey = `${publishableKeyPrefix(input.mode)}${yield* ids.randomHex(24)}`
    const signingSecret = yield* newSigningSecret
    const now = yield* nowIso
    yield* (yield* AccountRepo).insert(Account.born({
      id,
      name,
      mode: input.mode,
      secret_key: storedKey(issued, now),
      publishable_key: publishableKey,
      signing_secret: signingSecret,
      created_at: now
    }))
    return {
      account_id: id,
      mode: input.mode,
      secret_key: issued.secretKey,
      publishable_key: publishableKey,
      signing_secret: signingSecret
    } satisfies CreatedAccount
  })
