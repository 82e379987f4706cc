/**
 * Operations: set and show an account's routing rules (`tender accounts routing set|show`), its own
 * or a processing profile's. A file is checked whole against the account's channels (a pinned
 * profile's: its pins) before it is stored (RoutingRules.parseRules): nothing of a refused file
 * applies. Each set stores a new version.
 */
import { Effect } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { Accounts } from "../../accounts/Accounts.ts"
import { ValidationFailed } from "../../kernel/Errors.ts"
import { nowIso } from "../../kernel/Time.ts"
import { parseRules } from "../RoutingRules.ts"
import { RoutingRulesRepo } from "../RoutingPorts.ts"
import { allowedChannels } from "./PlanRoute.ts"

/** The account, after checking that `profile` (when one is named) is one of its processing profiles. */
export const ownerWithProfile = Effect.fnUntraced(function*(accountId: string, profile: string | null) {
  const owner: Account = yield* (yield* Accounts).get(accountId)
  if (profile !== null && !owner.processing_profiles.some((p) => p.code === profile)) {
    return yield* new ValidationFailed({
      message: `Invalid request: ${profile} is not a processing profile of account ${owner.id}`,
      errors: [{ field: "profile", message: `${profile} is not a processing profile of this account` }]
    })
  }
  return owner
})

export const setRouting = Effect.fn("Channels.setRouting")(function*(accountId: string, profile: string | null, document: unknown) {
  const owner = yield* ownerWithProfile(accountId, profile)
  // A profile pinned to channels routes among those only (PlanRoute): its rules may name no other,
  // and a refusal says which pin a channel misses rather than calling it unknown.
  const allowed = yield* allowedChannels(owner, profile)
  const pins = allowed.pinned && profile !== null ? { profile, channels: allowed.channels.map((c) => c.id) } : null
  const rules = parseRules(document, owner, allowed.all, pins)
  if (rules instanceof ValidationFailed) return yield* rules
  const stored = yield* (yield* RoutingRulesRepo).put({ account_id: owner.id, profile, rules, document, created_at: yield* nowIso })
  return { version: stored.version }
})
