import { describe, expect, it } from "vitest"
import * as Breaker from "../src/channels/Breaker.ts"
import type { BreakerState, HealthOutcome } from "../src/channels/RoutingModel.ts"

const T0 = 1_800_000_000_000
const fold = (outcomes: ReadonlyArray<HealthOutcome>, at = T0, from: BreakerState = Breaker.INITIAL) =>
  outcomes.reduce((state, outcome) => Breaker.observe(state, outcome, at), from)
const unavailable = (n: number): Array<HealthOutcome> => Array.from({ length: n }, () => "unavailable")

describe("Breaker (design: 5 unavailable in a row open it; 30 s doubling to 5 min; one probe while half open)", () => {
  it("stays closed under the threshold, and any other answer resets the count", () => {
    expect(Breaker.position(fold(unavailable(4)), T0)).toBe("closed")
    expect(fold([...unavailable(4), "declined", ...unavailable(4)]).failures).toBe(4)
    for (const answer of ["approved", "declined", "neutral", "reachable"] as const) {
      expect(fold([...unavailable(4), answer])).toEqual(Breaker.INITIAL)
    }
  })

  it("opens on the fifth unavailable in a row for 30 s, then is half open", () => {
    const open = fold(unavailable(5))
    expect(open).toMatchObject({ failures: 5, opened_at: T0, open_until: T0 + 30_000, trips: 1 })
    expect(Breaker.position(open, T0 + 29_999)).toBe("open")
    expect(Breaker.position(open, T0 + 30_000)).toBe("half_open")
  })

  it("lets one probe through while half open: claimed until it lapses (30 s), never while open or closed", () => {
    const open = fold(unavailable(5))
    expect(Breaker.claimProbe(Breaker.INITIAL, T0)).toBeUndefined()
    expect(Breaker.claimProbe(open, T0 + 1_000)).toBeUndefined()
    const claimed = Breaker.claimProbe(open, T0 + 30_000)
    expect(claimed?.probe_until).toBe(T0 + 60_000)
    expect(Breaker.claimProbe(claimed!, T0 + 59_999)).toBeUndefined()
    expect(Breaker.claimProbe(claimed!, T0 + 60_000)?.probe_until).toBe(T0 + 90_000)
  })

  it("a failed probe reopens it for a doubled cool-down, capped at 5 minutes; a good answer closes it for good", () => {
    let state = fold(unavailable(5))
    let at = T0
    const coolDowns: Array<number> = []
    for (let trip = 0; trip < 6; trip++) {
      coolDowns.push(state.open_until! - state.opened_at!)
      at = state.open_until!
      state = Breaker.observe(Breaker.claimProbe(state, at)!, "unavailable", at)
      expect(Breaker.position(state, at)).toBe("open")
      expect(state.probe_until).toBeNull()
    }
    expect(coolDowns).toEqual([30_000, 60_000, 120_000, 240_000, 300_000, 300_000])
    const closed = Breaker.observe(Breaker.claimProbe(state, state.open_until!)!, "approved", state.open_until!)
    expect(closed).toEqual(Breaker.INITIAL)
    expect(Breaker.position(fold(unavailable(5), at, closed), at)).toBe("open")
    expect(fold(unavailable(5), at, closed).open_until).toBe(at + 30_000)
  })

  it("an unavailable answer while open (a call sent before it opened) only counts", () => {
    const open = fold(unavailable(5))
    const later = Breaker.observe(open, "unavailable", T0 + 1_000)
    expect(later).toEqual({ ...open, failures: 6 })
  })

  it("takes its policy: a threshold of 2 and a 1 s cool-down", () => {
    const policy = { threshold: 2, coolDownMs: 1_000, maxCoolDownMs: 4_000, probeMs: 500 }
    const open = [..."xx"].reduce((s) => Breaker.observe(s, "unavailable", T0, policy), Breaker.INITIAL)
    expect(open.open_until).toBe(T0 + 1_000)
    expect(Breaker.claimProbe(open, T0 + 1_000, policy)?.probe_until).toBe(T0 + 1_500)
  })
})
