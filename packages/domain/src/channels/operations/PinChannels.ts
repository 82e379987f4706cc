/**
 * Operation: pin a processing profile to enabled channels of the account (its payments and
 * transfers route among these only); no channels unpins it.
 */
import { Effect } from "effect"
import { Accounts } from "../../accounts/Accounts.ts"
import { ChannelRepo } from "../ChannelPorts.ts"
import { ValidationFailed } from "../../kernel/Errors.ts"

export const pinChannels = Effect.fn("Channels.pin")(function*(accountId: string, profile: string, channelIds: ReadonlyArray<string>) {
  const owner = yield* (yield* Accounts).get(accountId)
  const known = yield* (yield* ChannelRepo).listByAccount(owner.id)
  const errors = channelIds.flatMap((id) => {
    const channel = known.find((c) => c.id === id)
    const problem = channel === undefined
      ? `no channel ${id} on account ${owner.id}`
      : channel.status !== "enabled"
      ? `channel ${id} is disabled`
      : undefined
    return problem === undefined ? [] : [{ field: "channels", message: problem }]
  })
  if (errors.length > 0) {
    return yield* new ValidationFailed({ message: `Invalid request: ${errors.map((e) => e.message).join("; ")}`, errors })
  }
  return yield* (yield* Accounts).pinProfileChannels(owner.id, profile, channelIds)
})
