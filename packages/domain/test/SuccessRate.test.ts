import { describe, expect, it } from "vitest"
import * as Breaker from "../src/channels/Breaker.ts"
import { CHANNEL_NEUTRAL, healthOf, isRetryable, RETRYABLE } from "../src/channels/DeclineClasses.ts"
import type { ChannelStanding } from "../src/channels/RoutingModel.ts"
import * as SuccessRate from "../src/channels/SuccessRate.ts"

const standing = (attempts: number, approvals: number, brand = { attempts: 0, approvals: 0 }): ChannelStanding => ({
  channel_id: "ch_x",
  breaker: "closed",
  breaker_state: Breaker.INITIAL,
  rate: { attempts, approvals },
  brand_rate: brand
})

describe("SuccessRate (10 s buckets over a 5 minute window)", () => {
  it("buckets by 10 s and keeps the current bucket and the 29 before it", () => {
    expect(SuccessRate.bucketOf(1_234_567)).toBe(1_230_000)
    expect(SuccessRate.windowStart(1_234_567)).toBe(1_230_000 - 290_000)
    expect((SuccessRate.bucketOf(1_234_567) - SuccessRate.windowStart(1_234_567)) / SuccessRate.BUCKET_MS + 1).toBe(30)
  })

  it("rates approvals and the channel's declines and outages; neutral declines and challenges add nothing", () => {
    expect(SuccessRate.rated("approved")).toEqual({ attempts: 1, approvals: 1 })
    expect(SuccessRate.rated("declined")).toEqual({ attempts: 1, approvals: 0 })
    expect(SuccessRate.rated("unavailable")).toEqual({ attempts: 1, approvals: 0 })
    expect(SuccessRate.rated("neutral")).toEqual({ attempts: 0, approvals: 0 })
    expect(SuccessRate.rated("reachable")).toEqual({ attempts: 0, approvals: 0 })
  })

  it("scores toward the prior with the weight of 20 attempts", () => {
    expect(SuccessRate.score({ attempts: 0, approvals: 0 }, 0.8)).toBeCloseTo(0.8)
    expect(SuccessRate.score({ attempts: 20, approvals: 20 }, 0.5)).toBeCloseTo(0.75)
    expect(SuccessRate.score({ attempts: 1000, approvals: 900 }, 0.5)).toBeCloseTo(910 / 1020)
    // A lucky few approvals do not outrank a long good record.
    expect(SuccessRate.score({ attempts: 3, approvals: 3 }, 0.7)).toBeLessThan(SuccessRate.score({ attempts: 500, approvals: 450 }, 0.7))
  })

  it("pools the prior over the candidates; 0.5 when none has attempts", () => {
    expect(SuccessRate.pooledPrior([])).toBe(0.5)
    expect(SuccessRate.pooledPrior([standing(0, 0)])).toBe(0.5)
    expect(SuccessRate.pooledPrior([standing(10, 9), standing(30, 11)])).toBeCloseTo(20 / 40)
  })

  it("ranks on the card brand's window once it has 50 attempts, else the channel's", () => {
    expect(SuccessRate.countsOf(standing(100, 90, { attempts: 49, approvals: 10 }))).toEqual({ attempts: 100, approvals: 90 })
    expect(SuccessRate.countsOf(standing(100, 90, { attempts: 50, approvals: 10 }))).toEqual({ attempts: 50, approvals: 10 })
  })
})

describe("DeclineClasses", () => {
  it("retries soft declines only: never card_declined (fraud, lost, stolen) nor a channel-neutral code", () => {
    for (const code of ["do_not_honor", "processing_error", "issuer_unavailable", "try_again_later"]) expect(isRetryable(code)).toBe(true)
    for (const code of ["card_declined", "fraudulent", "lost_card", "stolen_card", ...CHANNEL_NEUTRAL]) expect(isRetryable(code)).toBe(false)
    expect(isRetryable(null)).toBe(false)
    expect([...RETRYABLE].filter((c) => CHANNEL_NEUTRAL.has(c))).toEqual([])
  })

  it("reads each answer's health", () => {
    expect(healthOf({ _tag: "Approved" })).toBe("approved")
    expect(healthOf({ _tag: "Declined", decline_code: "do_not_honor" })).toBe("declined")
    expect(healthOf({ _tag: "Declined", decline_code: "card_declined" })).toBe("declined")
    expect(healthOf({ _tag: "Declined", decline_code: "insufficient_funds" })).toBe("neutral")
    expect(healthOf({ _tag: "Declined", decline_code: "authentication_failed" })).toBe("neutral")
    expect(healthOf({ _tag: "ChallengeRequired" })).toBe("reachable")
    expect(healthOf({ _tag: "Started" })).toBe("reachable")
    expect(healthOf({ _tag: "Unknown" })).toBe("unavailable")
    expect(healthOf({ _tag: "ProviderUnavailable" })).toBe("unavailable")
  })
})
