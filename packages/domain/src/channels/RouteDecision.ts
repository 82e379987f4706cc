/**
 * The routing decision of a new payment (issue 27, design "Choice among candidates"), pure: which
 * channels its rules allow (`candidatesFor`), then which of them it goes to and in what order the
 * rest are tried (`choose`), breakers first, then the rule's action (an order, a volume split, or
 * the success rates), with the reason recorded on the transaction (`routing`).
 */
import { PaymentUnroutable } from "../kernel/Errors.ts"
import { MAX_LIST } from "../kernel/Limits.ts"
import type { Channel } from "./Channel.ts"
import type { ChannelStanding, RouteFacts, Routing, RoutingReason, StoredRules, Strategy } from "./RoutingModel.ts"
import { matchRule } from "./RuleMatch.ts"
import { BRAND_MINIMUM, countsOf, pooledPrior, PRIOR_WEIGHT, score } from "./SuccessRate.ts"

type NonEmpty<A> = readonly [A, ...Array<A>]

/**
 * The channels the deciding rule (or the default) allows for a payment, among those usable for it:
 * in the rule's order (or by priority for a default of every channel), or a volume split.
 */
export type Candidates =
  | {
    readonly _tag: "Ordered"
    readonly rule: string | null
    readonly version: number
    readonly strategy: Strategy
    readonly channels: NonEmpty<Channel>
  }
  | {
    readonly _tag: "Split"
    readonly rule: string
    readonly version: number
    /** The split's entries whose channel is usable for the payment, in the file's order. */
    readonly split: NonEmpty<{ readonly channel: Channel; readonly percent: number }>
  }

/** The candidates' channels, in the order listed (split entries in the file's order). */
export const channelsOf = (candidates: Candidates): NonEmpty<Channel> =>
  candidates._tag === "Ordered" ? candidates.channels : [candidates.split[0].channel, ...candidates.split.slice(1).map((e) => e.channel)]

const nonEmpty = <A>(list: ReadonlyArray<A>): NonEmpty<A> | undefined => (list.length === 0 ? undefined : list as NonEmpty<A>)

/**
 * The candidates of a payment with these facts: `usable` are the channels that may carry it
 * (enabled, of the account's mode, taking its method, currency and country, within the profile's
 * pins), highest priority first. No rules (`stored` undefined): all of them in that order, rule
 * null, version 0, ordered (today's routing). Otherwise the first rule that holds decides, else the
 * default (absent: every usable channel by priority); its channels outside `usable` drop out, and
 * none left is `payment_unroutable` naming the rule (or the default).
 */
export const candidatesFor = (
  stored: StoredRules | undefined,
  usable: ReadonlyArray<Channel>,
  facts: RouteFacts
): Candidates | PaymentUnroutable => {
  const unroutable = (who: string) =>
    new PaymentUnroutable({
      message: `${who}: none of its channels is usable for ${facts.method} in ${facts.currency} from ${facts.country}`
    })
  // Without a list of its own (no rules, or a default naming none), a decision ranks the account's
  // usable channels, at most MAX_LIST of them (those of highest priority, as `usable` comes): a
  // transaction records its candidates, a list of at most that many; a rule's own lists are held
  // to it when written (RoutingRules.ts).
  const anyOf = usable.slice(0, MAX_LIST)
  if (stored === undefined) {
    const channels = nonEmpty(anyOf)
    return channels === undefined ? unroutable("Default") : { _tag: "Ordered", rule: null, version: 0, strategy: "ordered", channels }
  }
  const { rules, version } = stored
  const pick = (ids: ReadonlyArray<string>) => ids.flatMap((id) => usable.filter((c) => c.id === id))
  const rule = matchRule(rules, facts)
  if (rule === undefined) {
    const channels = nonEmpty(rules.default === null ? anyOf : pick(rules.default))
    return channels === undefined ? unroutable("Default") : { _tag: "Ordered", rule: null, version, strategy: rules.strategy, channels }
  }
  if (rule.then._tag === "Channels") {
    const channels = nonEmpty(pick(rule.then.channels))
    return channels === undefined
      ? unroutable(`Rule "${rule.id}"`)
      : { _tag: "Ordered", rule: rule.id, version, strategy: rules.strategy, channels }
  }
  const split = nonEmpty(rule.then.split.flatMap(({ channel, percent }) => pick([channel]).map((c) => ({ channel: c, percent }))))
  return split === undefined ? unroutable(`Rule "${rule.id}"`) : { _tag: "Split", rule: rule.id, version, split }
}

/** How the choice explores and weighs success rates. */
export interface RoutePolicy {
  /** The share of success-rate payments sent to a channel other than the best, so a recovered one is noticed. */
  readonly exploration: number
  /** The prior's weight in a score (SuccessRate.score). */
  readonly weight: number
  /** The attempts a card brand's window needs to rank on it (SuccessRate.countsOf). */
  readonly brandMinimum: number
}

/** The choice's policy (docs/decisions.md): 2% exploration, a prior worth 20 attempts, a brand's own rate from 50. */
export const DEFAULT_POLICY: RoutePolicy = { exploration: 0.02, weight: PRIOR_WEIGHT, brandMinimum: BRAND_MINIMUM }

/** Where a payment goes: the routing its transaction records, and the try order (the chosen channel first). */
export interface RouteChoice {
  readonly routing: Routing
  /** The chosen channel, then the others not skipped, as ranked: where a cascade or a smart retry goes next. */
  readonly order: NonEmpty<Channel>
}

/**
 * The choice among the candidates. `standings` are their health (a channel without one is closed,
 * unrated); `probes` the half-open channels whose one probe this payment holds; `random` draws in
 * [0, 1). A channel whose breaker is open, or half open without this payment's probe, is skipped,
 * unless every candidate is, then none is (fail open: a guess beats a certain refusal). A claimed
 * probe goes first (exploration); else the rule's action decides: the split's draw, the listed order,
 * or the best score with a small share of exploration. `breaker` says the action's own pick was skipped.
 */
export const choose = (
  candidates: Candidates,
  standings: ReadonlyArray<ChannelStanding>,
  probes: ReadonlySet<string>,
  random: () => number,
  policy: RoutePolicy = DEFAULT_POLICY
): RouteChoice => {
  const listed = channelsOf(candidates)
  const standing = (c: Channel) => standings.find((s) => s.channel_id === c.id)
  const closedOff = (c: Channel) => {
    const breaker = standing(c)?.breaker ?? "closed"
    return breaker === "open" || (breaker === "half_open" && !probes.has(c.id))
  }
  const failOpen = listed.every(closedOff)
  const skipped = (c: Channel) => !failOpen && closedOff(c)

  const ranked: NonEmpty<Channel> = rank(candidates, listed, standings, policy, standing)
  const open = ranked.filter((c) => !skipped(c))
  const decide = (): { readonly channel: Channel; readonly reason: RoutingReason } => {
    const probe = ranked.find((c) => probes.has(c.id) && standing(c)?.breaker === "half_open")
    if (probe !== undefined) return { channel: probe, reason: "exploration" }
    if (candidates._tag === "Split") {
      const total = candidates.split.reduce((sum, e) => sum + e.percent, 0)
      let draw = random() * total
      const drawn = candidates.split.find((e) => (draw -= e.percent) < 0)?.channel ?? candidates.split[candidates.split.length - 1]!.channel
      return skipped(drawn) ? { channel: open[0]!, reason: "breaker" } : { channel: drawn, reason: "split" }
    }
    const byAction: RoutingReason = candidates.strategy === "success_rate" && open.length > 1
      ? "success_rate"
      : candidates.rule === null ? "default" : "rule"
    if (byAction === "success_rate" && random() < policy.exploration) {
      const others = open.slice(1)
      return { channel: others[Math.min(others.length - 1, Math.floor(random() * others.length))]!, reason: "exploration" }
    }
    return { channel: open[0]!, reason: skipped(ranked[0]) ? "breaker" : byAction }
  }
  const { channel, reason } = decide()
  return {
    routing: {
      rule: candidates.rule,
      version: candidates.version,
      candidates: ranked.map((c) => c.id),
      channel: channel.id,
      reason,
      attempt: 1
    },
    order: [channel, ...open.filter((c) => c.id !== channel.id)]
  }
}

/**
 * The candidates in rank order: a split's by percent (highest first), a success-rate rule's by
 * score (highest first), an ordered one's as listed; ties keep the listed order (the sort is stable).
 */
const rank = (
  candidates: Candidates,
  listed: NonEmpty<Channel>,
  standings: ReadonlyArray<ChannelStanding>,
  policy: RoutePolicy,
  standing: (c: Channel) => ChannelStanding | undefined
): NonEmpty<Channel> => {
  if (candidates._tag === "Split") {
    return [...candidates.split].sort((a, b) => b.percent - a.percent).map((e) => e.channel) as unknown as NonEmpty<Channel>
  }
  if (candidates.strategy === "ordered") return listed
  const own = standings.filter((s) => listed.some((c) => c.id === s.channel_id))
  const prior = pooledPrior(own, policy.brandMinimum)
  const scoreOf = (c: Channel) => {
    const s = standing(c)
    return s === undefined ? prior : score(countsOf(s, policy.brandMinimum), prior, policy.weight)
  }
  return [...listed].map((c) => ({ c, score: scoreOf(c) })).sort((a, b) => b.score - a.score).map(({ c }) => c) as unknown as NonEmpty<Channel>
}
