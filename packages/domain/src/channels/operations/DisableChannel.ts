/** Operation: disable a channel (final): its transition decides, the write is guarded by the row as read. */
import { Effect, Option, Result } from "effect"
import { Accounts } from "../../accounts/Accounts.ts"
import * as ChannelModule from "../Channel.ts"
import { ChannelRepo } from "../ChannelPorts.ts"
import { Conflict, invalidField } from "../../kernel/Errors.ts"
import { nowIso } from "../../kernel/Time.ts"

export const disableChannel = Effect.fn("Channels.disable")(function*(accountId: string, channelId: string) {
  const owner = yield* (yield* Accounts).get(accountId)
  const found = yield* (yield* ChannelRepo).get(owner.id, channelId)
  if (Option.isNone(found)) return yield* invalidField("channel", `no channel ${channelId} on account ${owner.id}`)
  const moved = ChannelModule.disable(found.value, yield* nowIso)
  if (Result.isFailure(moved)) return yield* moved.failure
  if (!(yield* (yield* ChannelRepo).update(found.value, moved.success.next))) {
    return yield* new Conflict({ message: `Channel ${channelId} is already disabled` })
  }
  return moved.success.next
})
