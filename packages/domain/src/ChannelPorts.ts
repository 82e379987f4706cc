/**
 * Port: the channel registry. Credentials go in with the record and are sealed by the adapter under
 * the vault key; no method of this port gives them back, so nothing in the domain ever holds them
 * decrypted (the adapters open them only to build a provider's client).
 */
import { Context, type Effect, type Option } from "effect"
import type { Channel, ProviderCredentials } from "./Channel.ts"
import type { AccountId } from "./Ids.ts"
import type { PaymentProvider } from "./PaymentPorts.ts"

export class ChannelRepo extends Context.Service<ChannelRepo, {
  insert(channel: Channel, credentials: ProviderCredentials): Effect.Effect<void>
  get(accountId: AccountId, id: string): Effect.Effect<Option.Option<Channel>>
  /** The account's channels, enabled or not, in creation order (routing's tie-break). */
  listByAccount(accountId: AccountId): Effect.Effect<ReadonlyArray<Channel>>
  /**
   * Stores `disabled` (Channel.disable's result) over an enabled channel; `false` when the channel
   * is no longer enabled (another disable got there first), and nothing changes.
   */
  disable(disabled: Channel): Effect.Effect<boolean>
}>()("@tender/domain/ChannelRepo") {}

/**
 * Port: the provider behind a channel. The adapter opens the channel's credentials (they never
 * reach the domain) and builds that provider's client; the one it answers carries the channel's id
 * (`channel_id`), so that the transactions made on it are recorded against the channel.
 */
export class ChannelProviders extends Context.Service<ChannelProviders, {
  provider(channel: Channel): Effect.Effect<PaymentProvider["Service"]>
}>()("@tender/domain/ChannelProviders") {}
