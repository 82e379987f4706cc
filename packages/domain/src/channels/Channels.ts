/**
 * The Channels use case: the operator adds, lists and disables an account's provider channels
 * (`tender accounts channels …`). A facade over its operations
 * (operations/*); Channel.ts decides.
 */
import { Context, Effect, Layer } from "effect"
import type { Account } from "../accounts/Account.ts"
import { Accounts } from "../accounts/Accounts.ts"
import type * as ChannelModule from "./Channel.ts"
import { ChannelProviders, ChannelRepo } from "./ChannelPorts.ts"
import type { AccountNotFound, Conflict, ValidationFailed } from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import { seam } from "../kernel/Seam.ts"
import { addChannel, type AddChannel } from "./operations/AddChannel.ts"
import { disableChannel } from "./operations/DisableChannel.ts"
import { listChannels } from "./operations/ListChannels.ts"
import { pinChannels } from "./operations/PinChannels.ts"

export type { AddChannel } from "./operations/AddChannel.ts"

/** The services the operations need, captured when the layer is built (kernel/Seam.ts). */
type Needs = Accounts | ChannelRepo | Ids | ChannelProviders

/** The Channels use case: add, list and disable an account's channels, and pin profiles to them. */
export class Channels extends Context.Service<Channels, {
  /** Adds a channel to the account, its credentials checked against the provider's catalog entry. */
  add(accountId: string, input: AddChannel): Effect.Effect<ChannelModule.Channel, AccountNotFound | ValidationFailed>
  /** The account's channels, enabled or not. */
  list(accountId: string): Effect.Effect<ReadonlyArray<ChannelModule.Channel>, AccountNotFound>
  /** Takes the channel out of routing, for good. */
  disable(accountId: string, channelId: string): Effect.Effect<ChannelModule.Channel, AccountNotFound | ValidationFailed | Conflict>
  /**
   * Pins a processing profile to channels of the account (enabled, of its mode): its payments and
   * transfers route among these only. No channels unpins it. Returns the account.
   */
  pin(accountId: string, profile: string, channelIds: ReadonlyArray<string>): Effect.Effect<Account, AccountNotFound | ValidationFailed | Conflict>
}>()("@tender/domain/channels/Channels") {
  static readonly layer = Layer.effect(
    Channels,
    Effect.gen(function*() {
      const run = yield* seam<Needs>()
      return Channels.of({
        add: (accountId, input) => run(addChannel(accountId, input)),
        list: (accountId) => run(listChannels(accountId)),
        disable: (accountId, channelId) => run(disableChannel(accountId, channelId)),
        pin: (accountId, profile, channelIds) => run(pinChannels(accountId, profile, channelIds))
      })
    })
  )
}
