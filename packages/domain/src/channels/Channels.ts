/**
 * The Channels use case: the operator adds, lists and disables an account's provider channels
 * (`tender accounts channels …`) and writes, reads and tries out its routing rules (`tender accounts
 * routing …`). A facade over its operations (operations/*); Channel.ts and RoutingRules.ts decide.
 */
import { Context, Effect, Layer } from "effect"
import type { Account } from "../accounts/Account.ts"
import { AccountRepo } from "../accounts/AccountPorts.ts"
import { Accounts } from "../accounts/Accounts.ts"
import type * as ChannelModule from "./Channel.ts"
import { ChannelProviders, ChannelRepo } from "./ChannelPorts.ts"
import type { AccountNotFound, Conflict, ValidationFailed } from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import { type ErrorOf, seam } from "../kernel/Seam.ts"
import type { StoredRules } from "./RoutingModel.ts"
import { ChannelHealth, RoutingRulesRepo } from "./RoutingPorts.ts"
import { addChannel, type AddChannel } from "./operations/AddChannel.ts"
import { disableChannel } from "./operations/DisableChannel.ts"
import { listChannels } from "./operations/ListChannels.ts"
import { pinChannels } from "./operations/PinChannels.ts"
import { setRouting } from "./operations/SetRouting.ts"
import { showRouting } from "./operations/ShowRouting.ts"
import { type RoutingAnswer, testRouting } from "./operations/TestRouting.ts"

export type { AddChannel } from "./operations/AddChannel.ts"
export type { RoutingAnswer } from "./operations/TestRouting.ts"

/** The services the operations need, captured when the layer is built (kernel/Seam.ts). */
type Needs = Accounts | ChannelRepo | Ids | ChannelProviders | AccountRepo | RoutingRulesRepo | ChannelHealth

/** The Channels use case: add, list and disable an account's channels, pin profiles to them, and route among them. */
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
  /**
   * Stores a routing rules file as the next version of the account's rules (`profile` null) or of
   * one of its processing profiles', after checking it whole against the account's channels.
   */
  setRouting(accountId: string, profile: string | null, document: unknown): Effect.Effect<{ readonly version: number }, AccountNotFound | ValidationFailed>
  /** The current rules of the account (`profile` null) or of one of its processing profiles; none when never set. */
  showRouting(accountId: string, profile: string | null): Effect.Effect<StoredRules | undefined, AccountNotFound | ValidationFailed>
  /**
   * The dry run: where a payment (a `POST /v1/payments` body, plus optional `card` facts) would be
   * routed now, and why; nothing is called, claimed or stored. The sandbox answers
   * `{rule: null, version: 0, candidates: [], channel: "sandbox", reason: "default"}`.
   */
  testRouting(accountId: string, profile: string | null, payment: unknown): Effect.Effect<RoutingAnswer, ErrorOf<typeof testRouting>>
}>()("@tender/domain/channels/Channels") {
  static readonly layer = Layer.effect(
    Channels,
    Effect.gen(function*() {
      const run = yield* seam<Needs>()
      return Channels.of({
        add: (accountId, input) => run(addChannel(accountId, input)),
        list: (accountId) => run(listChannels(accountId)),
        disable: (accountId, channelId) => run(disableChannel(accountId, channelId)),
        pin: (accountId, profile, channelIds) => run(pinChannels(accountId, profile, channelIds)),
        setRouting: (accountId, profile, document) => run(setRouting(accountId, profile, document)),
        showRouting: (accountId, profile) => run(showRouting(accountId, profile)),
        testRouting: (accountId, profile, payment) => run(testRouting(accountId, profile, payment))
      })
    })
  )
}
