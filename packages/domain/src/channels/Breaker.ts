/**
 * A channel's circuit breaker (issue 27), pure: consecutive unavailable answers (or timeouts) open
 * it for a cool-down that doubles on each consecutive trip, up to a cap; past its cool-down it is
 * half open and lets one probe through at a time; any answer that is not `unavailable` closes it.
 * The breaker's position is derived from its state and the time (`position`), never stored: the
 * ChannelHealth adapters keep the state, routing reads the position.
 */
import type { BreakerPosition, BreakerState, HealthOutcome } from "./RoutingModel.ts"

/** How a breaker trips and recovers. */
export interface BreakerPolicy {
  /** Unavailable answers in a row that open it. */
  readonly threshold: number
  /** The first cool-down (ms); each consecutive trip doubles it. */
  readonly coolDownMs: number
  /** The longest cool-down (ms). */
  readonly maxCoolDownMs: number
  /** How long a claimed probe keeps others off the half-open channel (ms), should its answer never come. */
  readonly probeMs: number
}

/** The breaker's policy (docs/decisions.md): 5 in a row; 30 s doubling to 5 min; a probe's claim lasts 30 s. */
export const DEFAULT: BreakerPolicy = { threshold: 5, coolDownMs: 30_000, maxCoolDownMs: 300_000, probeMs: 30_000 }

/** A breaker that never saw an unavailable answer: closed. */
export const INITIAL: BreakerState = { failures: 0, opened_at: null, open_until: null, trips: 0, probe_until: null }

/** Where the breaker stands at `now`: closed, open (in its cool-down), or half open (past it). */
export const position = (state: BreakerState, now: number): BreakerPosition =>
  state.open_until === null ? "closed" : now < state.open_until ? "open" : "half_open"

/** The cool-down of the `trips`-th consecutive trip: doubled each time, capped. */
export const coolDownOf = (trips: number, policy: BreakerPolicy = DEFAULT): number =>
  Math.min(policy.coolDownMs * 2 ** Math.max(0, trips - 1), policy.maxCoolDownMs)

const trip = (state: BreakerState, failures: number, now: number, policy: BreakerPolicy): BreakerState => {
  const trips = state.trips + 1
  return { failures, opened_at: now, open_until: now + coolDownOf(trips, policy), trips, probe_until: null }
}

/**
 * The breaker after one answer of its channel at `now`. Any answer but `unavailable` proves the
 * channel reachable: closed, its counts reset. An unavailable answer counts towards the threshold
 * while closed, reopens it (one more trip, a longer cool-down) while half open (the probe failed),
 * and changes nothing but the count while open (a call sent before it opened).
 */
export const observe = (state: BreakerState, outcome: HealthOutcome, now: number, policy: BreakerPolicy = DEFAULT): BreakerState => {
  if (outcome !== "unavailable") return INITIAL
  const failures = state.failures + 1
  switch (position(state, now)) {
    case "closed":
      return failures >= policy.threshold ? trip(state, failures, now, policy) : { ...state, failures }
    case "half_open":
      return trip(state, failures, now, policy)
    case "open":
      return { ...state, failures }
  }
}

/**
 * Claims the half-open breaker's one probe at `now`: the state with the claim (until `now +
 * probeMs`), or undefined when there is none to claim (closed, still open, or a probe in flight).
 */
export const claimProbe = (state: BreakerState, now: number, policy: BreakerPolicy = DEFAULT): BreakerState | undefined =>
  position(state, now) === "half_open" && (state.probe_until === null || now >= state.probe_until)
    ? { ...state, probe_until: now + policy.probeMs }
    : undefined
