/**
 * The Channels use case: the operator adds, lists and disables an account's provider channels
 * (`tender accounts channels …`). Channel.ts decides; this file loads and persists.
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import type { Account } from "../accounts/Account.ts"
import { Accounts } from "../accounts/Accounts.ts"
import * as ChannelModule from "./Channel.ts"
import { ChannelProviders, ChannelRepo } from "./ChannelPorts.ts"
import { descriptorOf, parseCredentials } from "./ProviderCatalog.ts"
import { type AccountNotFound, Conflict, invalidField, ValidationFailed } from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import { nowIso } from "../kernel/Time.ts"

export interface AddChannel extends ChannelModule.ChannelSettings {
  /** The credentials file's parsed JSON, checked here (ProviderCatalog.parseCredentials). */
  readonly credentials: unknown
}

export class Channels extends Context.Service<Channels, {
  add(accountId: string, input: AddChannel): Effect.Effect<ChannelModule.Channel, AccountNotFound | ValidationFailed>
  list(accountId: string): Effect.Effect<ReadonlyArray<ChannelModule.Channel>, AccountNotFound>
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
      const accounts = yield* Accounts
      const repo = yield* ChannelRepo
      const ids = yield* Ids
      const { catalog } = yield* ChannelProviders

      return Channels.of({
        add: Effect.fn("Channels.add")(function*(accountId, input) {
          const owner = yield* accounts.get(accountId)
          const channel = ChannelModule.make(owner, yield* ids.make("channel"), input, catalog, yield* nowIso)
          const provider = descriptorOf(catalog, input.provider)
          // An unknown provider is the channel's error; there is no credentials format to check then.
          const credentials = provider === undefined ? undefined : parseCredentials(provider, input.mode, input.credentials)
          // Both are checked before either is reported, so one run shows the operator every problem.
          if (channel instanceof ValidationFailed && credentials instanceof ValidationFailed) {
            return yield* new ValidationFailed({
              message: "Invalid request: the channel settings and its credentials are invalid",
              errors: [...(channel.errors ?? []), ...(credentials.errors ?? [])]
            })
          }
          if (channel instanceof ValidationFailed) return yield* channel
          if (credentials instanceof ValidationFailed) return yield* credentials
          yield* repo.insert(channel, credentials!)
          return channel
        }),
        list: Effect.fn("Channels.list")(function*(accountId) {
          const owner = yield* accounts.get(accountId)
          return yield* repo.listByAccount(owner.id)
        }),
        disable: Effect.fn("Channels.disable")(function*(accountId, channelId) {
          const owner = yield* accounts.get(accountId)
          const found = yield* repo.get(owner.id, channelId)
          if (Option.isNone(found)) return yield* invalidField("channel", `no channel ${channelId} on account ${owner.id}`)
          const moved = ChannelModule.disable(found.value, yield* nowIso)
          if (Result.isFailure(moved)) return yield* moved.failure
          if (!(yield* repo.update(found.value, moved.success.next))) {
            return yield* new Conflict({ message: `Channel ${channelId} is already disabled` })
          }
          return moved.success.next
        }),
        pin: Effect.fn("Channels.pin")(function*(accountId, profile, channelIds) {
          const owner = yield* accounts.get(accountId)
          const known = yield* repo.listByAccount(owner.id)
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
          return yield* accounts.pinProfileChannels(owner.id, profile, channelIds)
        })
      })
    })
  )
}
