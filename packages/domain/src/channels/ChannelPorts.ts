/**
 * Port: the channel registry. Credentials go in with the record and are sealed by the adapter under
 * the vault key; no method of this port gives them back, so nothing in the domain ever holds them
 * decrypted (the adapters open them only to build a provider's client).
 */
import { Context, Data, type Effect, type Option } from "effect"
import type { Channel } from "./Channel.ts"
import type { ProviderCatalog, ProviderCredentials } from "./ProviderCatalog.ts"
import type { AccountId } from "../kernel/Ids.ts"
import type { Decided } from "../kernel/StateMachine.ts"
import type { LookupResult, PaymentProvider } from "../payments/ProviderPorts.ts"

/** Port: where channels (and their provider credentials) are stored. */
export class ChannelRepo extends Context.Service<ChannelRepo, {
  /** Stores a new channel with its provider credentials. */
  insert(channel: Channel, credentials: ProviderCredentials): Effect.Effect<void>
  /** The account's channel with this id; another account's is none. */
  get(accountId: AccountId, id: string): Effect.Effect<Option.Option<Channel>>
  /** Any account's channel by id: a provider's notification names only the channel (its URL). */
  getAny(id: string): Effect.Effect<Option.Option<Channel>>
  /** The account's channels, enabled or not, in creation order (routing's tie-break). */
  listByAccount(accountId: AccountId): Effect.Effect<ReadonlyArray<Channel>>
  /**
   * Stores `next` (a transition's result) over the channel as `previous` read it: its status and
   * `updated_at` are the fence. `false`, and nothing changes, when the stored row is no longer
   * `previous` (another disable got there first).
   */
  update(previous: Channel, next: Decided<Channel>): Effect.Effect<boolean>
}>()("@tender/domain/ChannelRepo") {}

/**
 * Port: the providers behind channels. The adapters' one list of providers is the catalog; the adapter opens the channel's credentials (they never
 * reach the domain) and builds that provider's client; the one it answers carries the channel's id
 * (`channel_id`), so that the transactions made on it are recorded against the channel.
 */
export class ChannelProviders extends Context.Service<ChannelProviders, {
  /** Every provider the adapters carry, as the domain needs them (names, methods, transfers, credentials). */
  readonly catalog: ProviderCatalog
  /** The provider client for this channel, built from its credentials. */
  provider(channel: Channel): Effect.Effect<PaymentProvider["Service"]>
  /**
   * A delivery to the channel's notification URL, verified with its provider's scheme and the
   * channel's own secret, read into what it says of Tender's transactions (none for events about
   * payments made outside Tender, or that say nothing Tender records).
   */
  notifications(channel: Channel, delivery: NotificationDelivery): Effect.Effect<VerifiedDelivery, NotificationUnverified>
}>()("@tender/domain/ChannelProviders") {}

/** A verified delivery: its notices, and what the adapter keeps of it once Tender accepts it. */
export interface VerifiedDelivery {
  readonly notices: ReadonlyArray<ProviderNotice>
  /**
   * Run only when every notice passed Tender's checks (a refused delivery leaves no trace, and the
   * provider delivers it again): Adyen's adapter journals capture and refund outcomes here, which
   * its `settlement` answers from.
   */
  readonly accept: Effect.Effect<void>
}

/** A provider's POST as it arrived: the signature is over these exact bytes. */
export interface NotificationDelivery {
  /** Lower-case names, as Node gives them. */
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly rawBody: Uint8Array
}

/** The delivery's signature did not verify (or it is not the provider's notification at all). */
export class NotificationUnverified extends Data.TaggedError("NotificationUnverified")<{ readonly message: string }> {}

/**
 * What a provider notified about one of our transactions: what became of a call, as a lookup of
 * it would answer (applied only while the call is still in doubt), and for a capture or refund
 * the provider accepted for later whether it has now settled or failed.
 */
export interface ProviderNotice {
  /** The transaction id Tender sent as the call's reference (the payment's own for a follow-up, on some providers). */
  readonly reference: string
  /** In minor units and the ISO 4217 code (upper case), checked against the transaction. */
  readonly amount: number
  readonly currency: string
  /** Never `NotReceived`: a notification is about something the provider did. */
  readonly answer: Exclude<LookupResult, { readonly _tag: "NotReceived" }>
  /** Present when the notice also settles (or fails) a capture or refund accepted for later. */
  readonly settlement?: "settled" | "failed" | undefined
  /**
   * The provider's id of what the notice is about, when its answer carries none (a refusal): a
   * failed capture or refund is found by it.
   */
  readonly provider_transaction_id?: string | undefined
}
