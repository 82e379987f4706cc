/**
 * The sliding window of authorization rates (issue 27): per channel × method × currency × card
 * brand, in 10-second buckets over 5 minutes, and the score routing ranks channels by. Pure: the
 * ChannelHealth adapters keep the buckets, this decides what goes in them and what they mean.
 */
import type { ChannelStanding, HealthOutcome, RateCounts } from "./RoutingModel.ts"

/** A bucket's width (ms): observations are summed per bucket. */
export const BUCKET_MS = 10_000
/** The window's width (ms): buckets older than this no longer count. */
export const WINDOW_MS = 300_000
/** The weight of the prior in a score: a channel's first attempts move it only so far from the pool. */
export const PRIOR_WEIGHT = 20
/** The attempts a card brand's own window needs before routing trusts it over the channel's whole rate. */
export const BRAND_MINIMUM = 50

/** The start (epoch ms) of the bucket `at` falls in. */
export const bucketOf = (at: number): number => Math.floor(at / BUCKET_MS) * BUCKET_MS

/** The start of the oldest bucket still in the window at `now` (the current bucket and the 29 before it). */
export const windowStart = (now: number): number => bucketOf(now) - WINDOW_MS + BUCKET_MS

const NOTHING: RateCounts = { attempts: 0, approvals: 0 }

/**
 * What one answer adds to its segment's window: an approval is an attempt that succeeded; a decline
 * the channel answers for, or no answer at all, an attempt that failed; a channel-neutral decline or
 * an answer without outcome (a challenge, a redirect) says nothing of the rate and adds nothing.
 */
export const rated = (outcome: HealthOutcome): RateCounts => {
  switch (outcome) {
    case "approved":
      return { attempts: 1, approvals: 1 }
    case "declined":
    case "unavailable":
      return { attempts: 1, approvals: 0 }
    case "neutral":
    case "reachable":
      return NOTHING
  }
}

/** Two windows' counts together. */
export const plus = (a: RateCounts, b: RateCounts): RateCounts => ({
  attempts: a.attempts + b.attempts,
  approvals: a.approvals + b.approvals
})

/**
 * A channel's score: its approvals over its attempts, pulled towards `prior` as if it had `weight`
 * more attempts at the prior's rate, so that a channel with little traffic is neither crowned nor
 * condemned by a handful of answers.
 */
export const score = (counts: RateCounts, prior: number, weight: number = PRIOR_WEIGHT): number =>
  (counts.approvals + weight * prior) / (counts.attempts + weight)

/** The counts a standing is ranked on: its card brand's when that window has enough attempts, else the channel's. */
export const countsOf = (standing: ChannelStanding, brandMinimum: number = BRAND_MINIMUM): RateCounts =>
  standing.brand_rate.attempts >= brandMinimum ? standing.brand_rate : standing.rate

/** The pooled rate of the candidates (approvals over attempts, on what each is ranked by); 0.5 when none has any. */
export const pooledPrior = (standings: ReadonlyArray<ChannelStanding>, brandMinimum: number = BRAND_MINIMUM): number => {
  const pooled = standings.map((s) => countsOf(s, brandMinimum)).reduce(plus, NOTHING)
  return pooled.attempts === 0 ? 0.5 : pooled.approvals / pooled.attempts
}
