/**
 * The vocabulary of smart routing (issue 27, contract.md "Routing rules"): an account's rules as
 * stored and versioned, the facts a payment is routed on, the decision a transaction records
 * (`routing`), and what the channels' health says of each channel. Types and schemas only: the rules
 * are parsed and evaluated in RoutingRules.ts, a route is decided in RouteDecision.ts, the breaker and
 * the sliding window are Breaker.ts and SuccessRate.ts, and the ports are RoutingPorts.ts.
 */
import { Schema } from "effect"

/** Why a channel was chosen (contract.md), plus `retry`: the second try of a smart retry or a cascade. */
export const ROUTING_REASONS = ["rule", "split", "success_rate", "exploration", "breaker", "default", "retry"] as const
/** Why a channel was chosen. */
export type RoutingReason = (typeof ROUTING_REASONS)[number]

/**
 * What a routed transaction records of its routing (contract.md: `routing: {rule, version,
 * candidates, channel, reason, attempt}`): the rule that decided (null: the default, or no rules),
 * the rules' version (0: the account has none, channels by priority), the candidate channels in the
 * order they were ranked, the channel this transaction went to, why, and which try of the payment it
 * is (1 the first; 2 after a cascade or a smart retry). Null on follow-ups (they go where their
 * transaction is) and on the built-in sandbox (nothing to choose among).
 */
export const Routing = Schema.Struct({
  rule: Schema.NullOr(Schema.String),
  version: Schema.Int,
  candidates: Schema.Array(Schema.String),
  channel: Schema.String,
  reason: Schema.Literals(ROUTING_REASONS),
  attempt: Schema.Int
})
/** What a routed transaction records of its routing. */
export type Routing = typeof Routing.Type

/** The card facts a rule may test (contract.md: the dry run's `card: {bin, brand, funding, issuer_country}`). */
export interface CardFacts {
  readonly bin: string | null
  readonly brand: string | null
  readonly funding: string | null
  readonly issuer_country: string | null
}

/** What a payment is routed on: its method, money, country, and its card's facts when a card is known. */
export interface RouteFacts {
  readonly method: string
  readonly currency: string
  readonly country: string
  /** In minor units of `currency`. */
  readonly amount: number
  readonly card: CardFacts | null
}

/** A decimal bound of an amount condition, as written (`"10.00"`), compared exactly in the payment's currency. */
export interface AmountRange {
  readonly min: string | null
  readonly max: string | null
}

/** A BIN condition: a prefix (`"4242"`) or an inclusive range of equal-length digit strings (`"400000-499999"`). */
export type BinMatch = { readonly prefix: string } | { readonly from: string; readonly to: string }

/** A rule's conditions, parsed: every one optional (null), all must hold; a list holds when any member does. */
export interface Conditions {
  readonly method: ReadonlyArray<string> | null
  readonly currency: ReadonlyArray<string> | null
  readonly country: ReadonlyArray<string> | null
  readonly amount: AmountRange | null
  readonly card_brand: ReadonlyArray<string> | null
  readonly card_funding: ReadonlyArray<string> | null
  readonly issuer_country: ReadonlyArray<string> | null
  readonly bin: ReadonlyArray<BinMatch> | null
}

/** A rule's action: ordered candidates, or a volume split (integer percents adding to 100). */
export type RuleAction =
  | { readonly _tag: "Channels"; readonly channels: ReadonlyArray<string> }
  | { readonly _tag: "Split"; readonly split: ReadonlyArray<{ readonly channel: string; readonly percent: number }> }

/** One rule: an id unique in its file, its conditions, its action. */
export interface Rule {
  readonly id: string
  readonly when: Conditions
  readonly then: RuleAction
}

/** How a rule's (or the default's) candidates are ranked: as listed, or by their success rate. */
export type Strategy = "ordered" | "success_rate"

/** A rules file, parsed and checked against the account's channels (RoutingRules.parseRules). */
export interface RuleSet {
  readonly rules: ReadonlyArray<Rule>
  /** The default's channels; null: every usable channel of the account, highest priority first. */
  readonly default: ReadonlyArray<string> | null
  readonly strategy: Strategy
}

/** A rules file as stored: one version of an account's (or a processing profile's) rules. */
export interface StoredRules {
  readonly account_id: string
  /** The processing profile the rules are for; null: the account's own (every payment without a profile's rules). */
  readonly profile: string | null
  /** 1, 2, … per (account, profile): each `routing set` writes the next. */
  readonly version: number
  readonly rules: RuleSet
  /** The file as the operator wrote it (what `routing show --json` prints back). */
  readonly document: unknown
  readonly created_at: string
}

/** The segment a success rate is kept for: channel × method × currency, and card brand where the volume allows. */
export interface Segment {
  readonly method: string
  readonly currency: string
  /** Null when the card's brand is unknown (non-card methods). */
  readonly brand: string | null
}

/**
 * What one provider call said about its channel:
 * - `approved`: counts as a success;
 * - `declined`: a decline the channel answers for (it counts against its rate);
 * - `neutral`: a decline that says nothing about the channel (insufficient funds, expired card…):
 *   the channel is reachable, its rate is untouched;
 * - `reachable`: answered without an outcome to rate (a 3-D Secure challenge, a redirect);
 * - `unavailable`: definitely unreachable, or a timeout: counts against the rate and towards the breaker.
 */
export type HealthOutcome = "approved" | "declined" | "neutral" | "reachable" | "unavailable"

/** The breaker's position (Breaker.ts): closed (routed to), open (skipped until its cool-down ends), half_open (one probe allowed). */
export type BreakerPosition = "closed" | "open" | "half_open"

/** The breaker of one channel as kept (Breaker.ts moves it). */
export interface BreakerState {
  /** Unavailable answers in a row (reset by any answer). */
  readonly failures: number
  /** When it opened (epoch ms); null while closed. */
  readonly opened_at: number | null
  /** Until when it stays open (epoch ms); past it, half open. */
  readonly open_until: number | null
  /** How many times in a row it opened (each cool-down doubles, to a cap). */
  readonly trips: number
  /** A probe claimed while half open, until when (epoch ms): others skip the channel meanwhile. */
  readonly probe_until: number | null
}

/** Approvals out of rated attempts, over the sliding window. */
export interface RateCounts {
  readonly attempts: number
  readonly approvals: number
}

/** What routing reads of a channel's health for one payment's segment. */
export interface ChannelStanding {
  readonly channel_id: string
  readonly breaker: BreakerPosition
  readonly breaker_state: BreakerState
  /** The channel × method × currency window. */
  readonly rate: RateCounts
  /** The same narrowed to the card's brand (zeros when the segment has none). */
  readonly brand_rate: RateCounts
}
