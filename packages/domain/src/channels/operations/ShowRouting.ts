/** Operation: an account's (or a processing profile's) current routing rules (`tender accounts routing show`); none when never set. */
import { Effect, Option } from "effect"
import { RoutingRulesRepo } from "../RoutingPorts.ts"
import { ownerWithProfile } from "./SetRouting.ts"

export const showRouting = Effect.fn("Channels.showRouting")(function*(accountId: string, profile: string | null) {
  const owner = yield* ownerWithProfile(accountId, profile)
  return Option.getOrUndefined(yield* (yield* RoutingRulesRepo).current(owner.id, profile))
})
