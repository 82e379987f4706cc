/** Operation: the operator adds a provider channel to an account (`tender accounts channels add`): settings and credentials checked together, one run shows every problem. */
import { Effect } from "effect"
import { Accounts } from "../../accounts/Accounts.ts"
import * as ChannelModule from "../Channel.ts"
import { ChannelProviders, ChannelRepo } from "../ChannelPorts.ts"
import { descriptorOf, parseCredentials } from "../ProviderCatalog.ts"
import { ValidationFailed } from "../../kernel/Errors.ts"
import { Ids } from "../../kernel/Ids.ts"
import { nowIso } from "../../kernel/Time.ts"

/** The input of `Channels.add`: the channel's settings and its credentials file. */
export interface AddChannel extends ChannelModule.ChannelSettings {
  /** The credentials file's parsed JSON, checked here (ProviderCatalog.parseCredentials). */
  readonly credentials: unknown
}

export const addChannel = Effect.fn("Channels.add")(function*(accountId: string, input: AddChannel) {
  const { catalog } = yield* ChannelProviders
  const owner = yield* (yield* Accounts).get(accountId)
  const channel = ChannelModule.make(owner, yield* (yield* Ids).make("channel"), input, catalog, yield* nowIso)
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
  yield* (yield* ChannelRepo).insert(channel, credentials!)
  return channel
})
