/**
 * Which provider an operation talks to. A new payment's route is planned by PlanRoute.planRoute
 * (rules, pins, breakers, success rates): the chosen channel is the `PaymentProvider` the operation
 * runs with, the rest are its `Fallbacks`, tried in turn when the one before is definitely
 * unreachable, or by a smart retry (RunAttempt.runAttempt). Everything after (capture, void, refund,
 * payout, 3-D Secure, reconciliation, settlement) runs on the provider of the transaction it
 * follows, never rerouted.
 */
import { Context, Effect, Option } from "effect"
import type { AccountMode } from "../../accounts/Account.ts"
import type { Channel } from "../../channels/Channel.ts"
import { paysTransfers as providerPaysTransfers } from "../../channels/ProviderCatalog.ts"
import { ChannelProviders, ChannelRepo } from "../../channels/ChannelPorts.ts"
import { PaymentUnroutable, ProviderNotEnabledForMerchant, TransactionProviderMismatch, TransferNotSupportedByProvider, TransferUnroutable } from "../../kernel/Errors.ts"
import type { AccountId } from "../../kernel/Ids.ts"
import { PaymentProvider } from "../ProviderPorts.ts"
import { channelsFor, type PaymentRoute, routeFor, usableFor } from "../../channels/Routing.ts"
import type { CardFacts, RouteFacts, Routing } from "../../channels/RoutingModel.ts"
import { allowedChannels, planRoute } from "../../channels/operations/PlanRoute.ts"
import { observeRoutingDecision } from "../../kernel/OperationalMetrics.ts"

type Provider = PaymentProvider["Service"]

/**
 * A route: the provider to send to, then the ones to cascade (or smart-retry) to, and the routing
 * decision a new payment's attempt records (issue 27; null on the sandbox and for follow-ups).
 */
export interface Route {
  readonly providers: readonly [Provider, ...Array<Provider>]
  readonly routing: Routing | null
}

/** The providers after the current one on a new payment's route; none for follow-ups. */
export const Fallbacks: Context.Reference<ReadonlyArray<Provider>> = Context.Reference<ReadonlyArray<Provider>>(
  "@tender/domain/Fallbacks",
  { defaultValue: () => [] }
)

/**
 * The routing decision of the route in context (issue 27), which a new attempt records
 * (NewTransaction.ts); null on the sandbox and for follow-ups (onProviderOf), which are not routed.
 */
export const RouteChosen: Context.Reference<Routing | null> = Context.Reference<Routing | null>(
  "@tender/domain/RouteChosen",
  { defaultValue: () => null }
)

interface Owner { readonly id: string; readonly mode: AccountMode }

/** The built-in sandbox (the ambient PaymentProvider), if it may carry the account's money. */
const sandbox = (owner: Owner) =>
  Effect.gen(function*() {
    const provider = yield* PaymentProvider
    const unroutable = routeFor(provider, owner.mode === "live")
    return unroutable === undefined ? provider : yield* unroutable
  })

/** The providers of `channels`, in their order (a route's channels: never empty). */
const providersOf = (channels: readonly [Channel, ...Array<Channel>]) =>
  Effect.gen(function*() {
    const providers = yield* ChannelProviders
    const [first, ...rest] = yield* Effect.forEach(channels, (channel) => providers.provider(channel))
    return [first!, ...rest] as const
  })

/**
 * Where a new payment of `owner` goes, in the order to try (the route's choice: the chosen channel,
 * then the others a cascade or a smart retry may go on to), with the routing decision its attempt
 * records; `payment_unroutable` when nowhere. Planned by PlanRoute.planRoute, the one place a new
 * payment's route is decided (rules, profile pins, breakers, success rates); the sandbox when a test
 * account has no usable channel. Each decision over channels is counted by reason (/metrics).
 * `dryRun` (a create that waits on the customer's card form, sending nothing): no breaker probe is
 * claimed and no decision counted, since the form's submission routes again when it sends the try.
 */
export const routeOf = (
  owner: Owner,
  facts: RouteFacts,
  profile: string | null = null,
  options: { readonly dryRun: boolean } = { dryRun: false }
) =>
  Effect.gen(function*() {
    const planned = yield* planRoute(owner, facts, profile, options)
    if (planned._tag === "Sandbox") return { providers: [yield* sandbox(owner)], routing: null } satisfies Route
    if (!options.dryRun) yield* observeRoutingDecision(planned.choice.routing.reason)
    return { providers: yield* providersOf(planned.choice.order), routing: planned.choice.routing } satisfies Route
  })

/**
 * Refuses, before anything is stored, what no provider could ever carry for `owner` (a checkout
 * session, whose method is chosen later): a live account with no enabled live channel.
 */
export const refuseUnroutable = (owner: Owner) =>
  Effect.gen(function*() {
    const channels = yield* (yield* ChannelRepo).listByAccount(owner.id as AccountId)
    if (channels.some(usableFor(owner))) return
    yield* sandbox(owner)
  })

/** Runs `effect` on a new payment's route: its first provider, the rest as fallbacks, its routing decision. */
export const onRoute = (route: Route) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provideService(PaymentProvider, route.providers[0]),
    Effect.provideService(Fallbacks, route.providers.slice(1)),
    Effect.provideService(RouteChosen, route.routing)
  )

/**
 * The route of a payment already made, as it is now: its order's method, money, country and
 * profile, and the card being paid when there is one (its facts, for the rules that test them).
 */
export const orderRoute = (order: {
  readonly account_id: string
  readonly livemode: boolean
  readonly payment_method: string
  readonly currency: string
  readonly country: string
  readonly amount: number
  readonly processing_profile: string | null
}, card: CardFacts | null = null) =>
  routeOf({ id: order.account_id, mode: order.livemode ? "live" : "test" }, {
    method: order.payment_method,
    currency: order.currency,
    country: order.country,
    amount: order.amount,
    card
  }, order.processing_profile)

/** The provider a transaction went to: its channel's, or the built-in sandbox. */
export const providerOf = (txn: { readonly account_id: string; readonly channel_id: string | null }) =>
  Effect.gen(function*() {
    if (txn.channel_id === null) return yield* PaymentProvider
    const channel = yield* (yield* ChannelRepo).get(txn.account_id as AccountId, txn.channel_id)
    // Channels are disabled, never deleted: a transaction's channel is always there.
    if (Option.isNone(channel)) return yield* Effect.die(new Error(`Channel ${txn.channel_id} of a transaction vanished`))
    return yield* (yield* ChannelProviders).provider(channel.value)
  })

/** Runs `effect` on the provider `txn` went to, with no fallbacks (follow-ups never reroute). */
export const onProviderOf = (txn: { readonly account_id: string; readonly channel_id: string | null }) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(providerOf(txn), (provider) => onRoute({ providers: [provider], routing: null })(effect))

/** What a transaction records of the provider it is made on (the one in context). */
export const providerFields = (provider: Provider) => ({ provider: provider.name, channel_id: provider.channel_id ?? null })

/** What a follow-up (capture, void, refund, payout) copies of the transaction it follows: its provider and channel. */
export const sameProvider = (txn: { readonly provider: string; readonly channel_id: string | null }) => ({
  provider: txn.provider,
  channel_id: txn.channel_id
})

/**
 * Where a transfer goes. A `channel_id` names the channel: it must be an enabled channel of the
 * account's mode (else 409 `provider_not_enabled_for_merchant`) whose provider pays transfers (else
 * 409 `transfer_not_supported_by_provider`). Without one, a test account with no channels uses the
 * sandbox; otherwise the account's channels that pay transfers to the destination are the route,
 * and none is 400 `transfer_unroutable` (or `payment_unroutable` when the account has no channel).
 */
export const transferRoute = (owner: Owner, channelId: string | null, destination: PaymentRoute, profile: string | null = null) =>
  Effect.gen(function*() {
    const { all, channels: candidates, pinned } = yield* allowedChannels(owner, profile)
    // A named channel is checked against all of the account's; routing keeps to the profile's pins.
    const channels = channelId !== null ? all : candidates
    const { catalog } = yield* ChannelProviders
    const paysTransfers = (channel: Channel) => providerPaysTransfers(catalog, channel.provider)
    const usable = channels.some(usableFor(owner))
    if (channelId !== null) {
      const named = channels.find((c) => c.id === channelId && usableFor(owner)(c))
      if (named === undefined) {
        return yield* new ProviderNotEnabledForMerchant({ message: `${channelId} is not an enabled ${owner.mode} channel of this account` })
      }
      if (!paysTransfers(named)) {
        return yield* new TransferNotSupportedByProvider({ message: `Channel ${channelId} (${named.provider}) does not pay transfers` })
      }
      return { providers: yield* providersOf([named]), routing: null } satisfies Route
    }
    const route = channelsFor(owner, channels.filter(paysTransfers), destination, catalog)
    if (route instanceof PaymentUnroutable) {
      return yield* (usable
        ? new TransferUnroutable({ message: `No channel of this account pays a ${destination.method} transfer to ${destination.country} in ${destination.currency}; supply channel_id` })
        : route)
    }
    if (route._tag === "Sandbox") {
      // Channels exist, none pays transfers: a test account rehearses live routing, no sandbox fallback.
      if (pinned || usable) {
        return yield* new TransferUnroutable({ message: "No channel of this account pays transfers; supply channel_id" })
      }
      return { providers: [yield* sandbox(owner)], routing: null } satisfies Route
    }
    // Transfers are routed by priority, with no rules to record (issue 27 routes payments only).
    return { providers: yield* providersOf(route.channels), routing: null } satisfies Route
  })

/**
 * contract.md, Providers: a follow-up goes to the channel holding the transaction; a request that
 * names another (`channel_id`) is refused with `transaction_provider_mismatch` before anything is sent.
 */
export const refuseOtherChannel = (named: string | undefined, txn: { readonly id: string; readonly channel_id: string | null }) =>
  named === undefined || named === txn.channel_id
    ? Effect.void
    : Effect.fail(new TransactionProviderMismatch({
      message: `Transaction ${txn.id} is held by ${txn.channel_id === null ? "the built-in sandbox" : `channel ${txn.channel_id}`}, not ${named}`,
      errors: [{ field: "channel_id", message: "is not the channel holding the transaction" }]
    }))
