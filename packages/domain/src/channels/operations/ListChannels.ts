/** Operation: an account's channels (`tender accounts channels list`). */
import { Effect } from "effect"
import { Accounts } from "../../accounts/Accounts.ts"
import { ChannelRepo } from "../ChannelPorts.ts"

export const listChannels = Effect.fn("Channels.list")(function*(accountId: string) {
  const owner = yield* (yield* Accounts).get(accountId)
  return yield* (yield* ChannelRepo).listByAccount(owner.id)
})
