/**
 * Ports of smart routing: where an account's rules are kept (versioned), and the channels' health
 * (sliding-window success rates and circuit breakers) that every server process shares.
 */
import { Context, type Effect, type Option } from "effect"
import type { BreakerState, ChannelStanding, HealthOutcome, RuleSet, Segment, StoredRules } from "./RoutingModel.ts"

/** Port: an account's routing rules, one version per `routing set`, per (account, processing profile). */
export class RoutingRulesRepo extends Context.Service<RoutingRulesRepo, {
  /**
   * Stores `rules` as the next version of (account, profile) and returns it (1 for the first).
   * Concurrent puts get distinct versions; the highest is current.
   */
  put(input: {
    readonly account_id: string
    readonly profile: string | null
    readonly rules: RuleSet
    readonly document: unknown
    readonly created_at: string
  }): Effect.Effect<StoredRules>
  /** The current (highest) version of (account, profile); none when never set. */
  current(accountId: string, profile: string | null): Effect.Effect<Option.Option<StoredRules>>
}>()("@tender/domain/RoutingRulesRepo") {}

/** One observation of a channel, made where a provider call's answer arrives. */
export interface HealthObservation {
  readonly channel_id: string
  readonly segment: Segment
  readonly outcome: HealthOutcome
  /** Epoch ms (the domain's Clock). */
  readonly at: number
}

/**
 * Port: the channels' health, shared by every server process (PostgreSQL: each process folds its
 * observations in and reads the others' within a second; memory: one process). Reads never wait on
 * storage: routing asks on every payment.
 */
export class ChannelHealth extends Context.Service<ChannelHealth, {
  /** Folds an answer into the channel's window and breaker (Breaker.ts, SuccessRate.ts decide how). */
  observe(observation: HealthObservation): Effect.Effect<void>
  /** The standing of each of `channelIds` for `segment` at `now`, in the order given. */
  standings(channelIds: ReadonlyArray<string>, segment: Segment, now: number): Effect.Effect<ReadonlyArray<ChannelStanding>>
  /**
   * Claims the one probe a half-open breaker lets through: true for the caller that may send it
   * (until the probe's answer is observed, or its claim lapses), false for everyone else.
   */
  claimProbe(channelId: string, now: number): Effect.Effect<boolean>
  /** Every channel's breaker with a state other than the initial one (for `/metrics` and `channels list`). */
  breakers(now: number): Effect.Effect<ReadonlyArray<{ readonly channel_id: string; readonly state: BreakerState }>>
}>()("@tender/domain/ChannelHealth") {}
