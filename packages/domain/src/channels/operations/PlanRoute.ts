/**
 * Operation: plan a new payment's route (issue 27), the one place it is planned: the real create and
 * the dry run (`tender accounts routing test`) both come here. The channels the payment may use
 * (its profile's pins, else all of the account's; enabled, of its mode, taking the payment), the
 * rules of its profile (else the account's) and the channels' health decide, through
 * RouteDecision. A test-mode account with no usable channel goes to the built-in sandbox.
 */
import { Clock, Effect, Option, Random } from "effect"
import type { AccountMode } from "../../accounts/Account.ts"
import { AccountRepo } from "../../accounts/AccountPorts.ts"
import { PaymentMethodNotSupportedByProvider, PaymentUnroutable } from "../../kernel/Errors.ts"
import type { AccountId } from "../../kernel/Ids.ts"
import * as Breaker from "../Breaker.ts"
import { takesMethod } from "../Channel.ts"
import { ChannelProviders, ChannelRepo } from "../ChannelPorts.ts"
import { candidatesFor, channelsOf, choose, type RouteChoice } from "../RouteDecision.ts"
import { channelsFor, usableFor } from "../Routing.ts"
import type { CardFacts, RouteFacts, StoredRules } from "../RoutingModel.ts"
import { ChannelHealth, RoutingRulesRepo } from "../RoutingPorts.ts"

/** Whose payment is routed: the account's id and mode. */
export interface RouteOwner {
  readonly id: string
  readonly mode: AccountMode
}

/** Where a new payment goes: the built-in sandbox, or channels with the routing its transaction records. */
export type RoutePlan = { readonly _tag: "Sandbox" } | { readonly _tag: "Channels"; readonly choice: RouteChoice }

/**
 * The channels a payment or a transfer of `profile` may use: those the profile pins (Account.pinChannels), or all
 * of the account's; `pinned` says whether a pin applies (then there is no sandbox fallback). `all`: every
 * channel of the account, as read here (what a named channel or a rules file is checked against).
 */
export const allowedChannels = (owner: RouteOwner, profile: string | null) =>
  Effect.gen(function*() {
    const all = yield* (yield* ChannelRepo).listByAccount(owner.id as AccountId)
    if (profile === null) return { all, channels: all, pinned: false }
    const account = Option.getOrUndefined(yield* (yield* AccountRepo).findById(owner.id as AccountId))
    const pins = account?.processing_profiles.find((p) => p.code === profile)?.channels ?? []
    return pins.length === 0 ? { all, channels: all, pinned: false } : { all, channels: all.filter((c) => pins.includes(c.id)), pinned: true }
  })

/** The rules a payment of `profile` is routed by: the profile's when it has its own, else the account's; none when neither is set. */
export const rulesFor = (accountId: string, profile: string | null) =>
  Effect.gen(function*() {
    const repo = yield* RoutingRulesRepo
    const own = profile === null ? Option.none<StoredRules>() : yield* repo.current(accountId, profile)
    return Option.getOrUndefined(Option.isSome(own) ? own : yield* repo.current(accountId, null))
  })

/**
 * Plans a new payment's route. A payment of a profile pinned to channels goes to those only: none
 * usable is `payment_unroutable`, usable ones that do not take the method
 * `payment_method_not_supported_by_provider`. A half-open channel among the candidates is explored
 * by the payment that claims its one probe (ChannelHealth.claimProbe). `dryRun` changes nothing: it
 * claims no probe, taking a half-open channel whose probe is free as if it had claimed it.
 */
export const planRoute = (
  owner: RouteOwner,
  facts: RouteFacts,
  profile: string | null,
  options: { readonly dryRun: boolean }
): Effect.Effect<
  RoutePlan,
  PaymentUnroutable | PaymentMethodNotSupportedByProvider,
  ChannelRepo | AccountRepo | ChannelProviders | RoutingRulesRepo | ChannelHealth
> =>
  Effect.gen(function*() {
    const { channels, pinned } = yield* allowedChannels(owner, profile)
    const { catalog } = yield* ChannelProviders
    const usable = channels.filter(usableFor(owner))
    if (pinned && usable.length === 0) {
      return yield* new PaymentUnroutable({ message: `No channel processing profile ${profile} is pinned to is enabled` })
    }
    const route = channelsFor(owner, channels, facts, catalog)
    if (route instanceof PaymentUnroutable) {
      if (pinned && !usable.some((c) => takesMethod(c, facts.method, catalog))) {
        return yield* new PaymentMethodNotSupportedByProvider({
          message: `The channels processing profile ${profile} is pinned to do not take ${facts.method}`
        })
      }
      return yield* route
    }
    if (route._tag === "Sandbox") return { _tag: "Sandbox" } as const
    const candidates = candidatesFor(yield* rulesFor(owner.id, profile), route.channels, facts)
    if (candidates instanceof PaymentUnroutable) return yield* candidates
    const health = yield* ChannelHealth
    const now = yield* Clock.currentTimeMillis
    const listed = channelsOf(candidates)
    const standings = yield* health.standings(listed.map((c) => c.id), segmentOf(facts), now)
    const probes = new Set<string>()
    // One probe per payment: the first half-open candidate (listed order) whose probe it gets.
    for (const standing of standings) {
      if (standing.breaker !== "half_open") continue
      const claimed = options.dryRun
        ? Breaker.claimProbe(standing.breaker_state, now) !== undefined
        : yield* health.claimProbe(standing.channel_id, now)
      if (claimed) {
        probes.add(standing.channel_id)
        break
      }
    }
    const random = yield* Random.Random
    return { _tag: "Channels", choice: choose(candidates, standings, probes, () => random.nextDoubleUnsafe()) } as const
  })

/** The segment a payment's health is kept and read in: its method, currency and card brand (none without a card). */
export const segmentOf = (facts: RouteFacts) => ({ method: facts.method, currency: facts.currency, brand: facts.card?.brand ?? null })

/**
 * A payment's route facts from what the create knows: its method, money and country, and for a card
 * the vaulted card's BIN, brand and funding and the issuer's country (a BIN lookup). A brand or
 * funding the vault records as `unknown` is an unknown fact (no card condition holds on it).
 */
export const factsOf = (
  payment: { readonly method: string; readonly currency: string; readonly country: string; readonly amount: number },
  card?: { readonly bin: string; readonly brand: string; readonly funding: string } | undefined,
  issuer?: { readonly country_code?: string | undefined } | undefined
): RouteFacts => ({
  method: payment.method,
  currency: payment.currency,
  country: payment.country,
  amount: payment.amount,
  card: card === undefined ? null : cardFacts({
    bin: card.bin,
    brand: card.brand,
    funding: card.funding,
    issuer_country: issuer?.country_code ?? null
  })
})

const known = (fact: string | null | undefined): string | null => (fact == null || fact === "" || fact === "unknown" ? null : fact)

/** Card facts as given (the dry run's `card`, or the vault's), normalised: unknown facts are null. */
export const cardFacts = (card: { readonly [K in keyof CardFacts]?: string | null | undefined }): CardFacts => ({
  bin: known(card.bin),
  brand: known(card.brand)?.toLowerCase() ?? null,
  funding: known(card.funding)?.toLowerCase() ?? null,
  issuer_country: known(card.issuer_country)?.toUpperCase() ?? null
})

