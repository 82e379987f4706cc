/** Operation: replace an operator's account grant (`tender operators grant NAME --accounts …`). */
import { Effect, Option } from "effect"
import { AccountRepo } from "../../accounts/AccountPorts.ts"
import { invalidField } from "../../kernel/Errors.ts"
import type { AccountId } from "../../kernel/Ids.ts"
import { nowIso } from "../../kernel/Time.ts"
import type { AccountGrant } from "../Operator.ts"
import { loadByName, save, viewOf } from "./Load.ts"

/**
 * A grant as stored: "all", or a non-empty list of accounts that exist (each once). A grant of no
 * accounts is refused: such an operator could see nothing, which is what `disable` is for.
 */
export const validateGrant = (accounts: AccountGrant) =>
  Effect.gen(function*() {
    if (accounts === "all") return accounts
    const ids = [...new Set(accounts)]
    if (ids.length === 0) return yield* invalidField("accounts", "must name at least one account, or be all")
    const repo = yield* AccountRepo
    for (const id of ids) {
      if (Option.isNone(yield* repo.findById(id as AccountId))) return yield* invalidField("accounts", `names no account ${id}`)
    }
    return ids
  })

export const grant = (name: string, accounts: AccountGrant) =>
  Effect.gen(function*() {
    const operator = yield* loadByName(name)
    const granted = yield* validateGrant(accounts)
    return viewOf(yield* save({ ...operator, accounts: granted, updated_at: yield* nowIso }))
  })
