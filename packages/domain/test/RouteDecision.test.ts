import { describe, expect, it } from "vitest"
import * as Breaker from "../src/channels/Breaker.ts"
import { type Candidates, candidatesFor, choose } from "../src/channels/RouteDecision.ts"
import type { BreakerPosition, ChannelStanding, RouteFacts, RoutingReason, StoredRules } from "../src/channels/RoutingModel.ts"
import { parseRules } from "../src/channels/RoutingRules.ts"
import { PaymentUnroutable, ValidationFailed } from "../src/kernel/Errors.ts"
import { channel } from "./Fixtures.ts"

const A = channel("ch_a")
const B = channel("ch_b")
const C = channel("ch_c")
const ALL = [A, B, C]
const FACTS: RouteFacts = { method: "card", currency: "USD", country: "US", amount: 1000, card: null }

const stored = (file: unknown, version = 3): StoredRules => {
  const rules = parseRules(file, { mode: "live" }, ALL)
  if (rules instanceof ValidationFailed) throw new Error(rules.message)
  return { account_id: A.account_id, profile: null, version, rules, document: file, created_at: A.created_at }
}
const candidates = (file: unknown, usable = ALL, facts = FACTS): Candidates => {
  const c = candidatesFor(stored(file), usable, facts)
  if (c instanceof PaymentUnroutable) throw new Error(c.message)
  return c
}

/** A seeded generator (mulberry32): the same draws every run. */
const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const NEVER = () => 0.999_999

const standing = (c: { readonly id: string }, rate: [number, number] = [0, 0], breaker: BreakerPosition = "closed", brand: [number, number] = [0, 0]): ChannelStanding => ({
  channel_id: c.id,
  breaker,
  breaker_state: Breaker.INITIAL,
  rate: { attempts: rate[0], approvals: rate[1] },
  brand_rate: { attempts: brand[0], approvals: brand[1] }
})
const ids = (list: ReadonlyArray<{ readonly id: string }>) => list.map((c) => c.id)

describe("candidatesFor", () => {
  it("without a list of its own, at most 100 candidates: the usable channels of highest priority (a transaction records at most 100)", () => {
    const many = Array.from({ length: 150 }, (_, i) => channel(`ch_${String(i).padStart(3, "0")}`))
    const noRules = candidatesFor(undefined, many, FACTS)
    const noDefault = candidatesFor(stored({ rules: [{ id: "only-a", when: { currency: ["EUR"] }, then: { channels: ["ch_a"] } }] }), many, FACTS)
    for (const c of [noRules, noDefault]) {
      if (c instanceof PaymentUnroutable || c._tag !== "Ordered") throw new Error("expected ordered candidates")
      expect(ids(c.channels)).toEqual(ids(many.slice(0, 100)))
    }
  })

  it("no rules: every usable channel in priority order, version 0, rule null, ordered", () => {
    expect(candidatesFor(undefined, [B, A], FACTS)).toEqual({ _tag: "Ordered", rule: null, version: 0, strategy: "ordered", channels: [B, A] })
  })

  it("the first rule that holds decides, its channels in its order among the usable ones", () => {
    const file = { rules: [{ id: "eur", when: { currency: "EUR" }, then: { channels: ["ch_a"] } }, { id: "usd", when: { currency: "USD" }, then: { channels: ["ch_c", "ch_b", "ch_a"] } }] }
    const c = candidates(file, [A, B])
    expect(c).toMatchObject({ _tag: "Ordered", rule: "usd", version: 3, strategy: "success_rate" })
    expect(c._tag === "Ordered" && ids(c.channels)).toEqual(["ch_b", "ch_a"])
  })

  it("none holds: the default's channels, or every usable one when it has none", () => {
    const rules = [{ id: "eur", when: { currency: "EUR" }, then: { channels: ["ch_a"] } }]
    const listed = candidates({ rules, default: { channels: ["ch_c", "ch_a"] }, strategy: "ordered" })
    expect(listed).toMatchObject({ rule: null, version: 3, strategy: "ordered" })
    expect(listed._tag === "Ordered" && ids(listed.channels)).toEqual(["ch_c", "ch_a"])
    const every = candidates({ rules }, [C, B])
    expect(every._tag === "Ordered" && ids(every.channels)).toEqual(["ch_c", "ch_b"])
  })

  it("a split keeps the entries whose channel is usable", () => {
    const c = candidates({ rules: [{ id: "s", then: { split: [{ channel: "ch_a", percent: 50 }, { channel: "ch_b", percent: 50 }] } }] }, [B, C])
    expect(c).toMatchObject({ _tag: "Split", rule: "s", split: [{ channel: B, percent: 50 }] })
  })

  it("nothing usable left is payment_unroutable naming the rule, or the default", () => {
    const ruled = candidatesFor(stored({ rules: [{ id: "only-a", then: { channels: ["ch_a"] } }] }), [B], FACTS)
    expect(ruled).toBeInstanceOf(PaymentUnroutable)
    expect((ruled as PaymentUnroutable).message).toBe("Rule \"only-a\": none of its channels is usable for card in USD from US")
    const byDefault = candidatesFor(stored({ default: { channels: ["ch_a"] } }), [B], FACTS)
    expect((byDefault as PaymentUnroutable).message).toMatch(/^Default: /)
  })
})

describe("choose (breakers first, then the rule's action)", () => {
  const ordered = candidates({ rules: [{ id: "r", then: { channels: ["ch_a", "ch_b", "ch_c"] } }], strategy: "ordered" })
  const byDefault = candidatesFor(undefined, ALL, FACTS) as Candidates

  it("ordered: the first listed, reason rule (default without rules); the rest follow as the try order", () => {
    const choice = choose(ordered, [], new Set(), NEVER)
    expect(choice.routing).toEqual({ rule: "r", version: 3, candidates: ["ch_a", "ch_b", "ch_c"], channel: "ch_a", reason: "rule", attempt: 1 })
    expect(ids(choice.order)).toEqual(["ch_a", "ch_b", "ch_c"])
    expect(choose(byDefault, [], new Set(), NEVER).routing).toMatchObject({ rule: null, version: 0, channel: "ch_a", reason: "default" })
  })

  it("skips an open breaker and a half-open one without this payment's probe: reason breaker, skipped ones out of the order", () => {
    const choice = choose(ordered, [standing(A, [0, 0], "open"), standing(B, [0, 0], "half_open")], new Set(), NEVER)
    expect(choice.routing).toMatchObject({ channel: "ch_c", reason: "breaker", candidates: ["ch_a", "ch_b", "ch_c"] })
    expect(ids(choice.order)).toEqual(["ch_c"])
    // A skipped channel further down does not change the reason.
    expect(choose(ordered, [standing(B, [0, 0], "open")], new Set(), NEVER).routing.reason).toBe("rule")
  })

  it("fails open: every breaker open, none is skipped, in rank order", () => {
    const all = ALL.map((c) => standing(c, [0, 0], "open"))
    const choice = choose(ordered, all, new Set(), NEVER)
    expect(choice.routing).toMatchObject({ channel: "ch_a", reason: "rule" })
    expect(ids(choice.order)).toEqual(["ch_a", "ch_b", "ch_c"])
  })

  it("a half-open channel whose probe this payment claimed goes first: exploration", () => {
    const choice = choose(ordered, [standing(C, [0, 0], "half_open")], new Set(["ch_c"]), NEVER)
    expect(choice.routing).toMatchObject({ channel: "ch_c", reason: "exploration" })
    expect(ids(choice.order)).toEqual(["ch_c", "ch_a", "ch_b"])
  })

  describe("split", () => {
    const split = candidates({
      rules: [{ id: "s", then: { split: [{ channel: "ch_a", percent: 20 }, { channel: "ch_b", percent: 50 }, { channel: "ch_c", percent: 30 }] } }]
    })

    it("draws by percent: within ±2% of the percentages over 10,000 payments", () => {
      const random = seeded(27)
      const counts = new Map<string, number>()
      for (let i = 0; i < 10_000; i++) {
        const { routing } = choose(split, [], new Set(), random)
        expect(routing.reason).toBe("split")
        counts.set(routing.channel, (counts.get(routing.channel) ?? 0) + 1)
      }
      expect(Math.abs(counts.get("ch_a")! / 100 - 20)).toBeLessThanOrEqual(2)
      expect(Math.abs(counts.get("ch_b")! / 100 - 50)).toBeLessThanOrEqual(2)
      expect(Math.abs(counts.get("ch_c")! / 100 - 30)).toBeLessThanOrEqual(2)
    })

    it("ranks by percent; the drawn channel skipped goes to the highest remaining percent: breaker", () => {
      const drawA = () => 0.1
      expect(choose(split, [], new Set(), drawA).routing).toMatchObject({ channel: "ch_a", reason: "split", candidates: ["ch_b", "ch_c", "ch_a"] })
      expect(ids(choose(split, [], new Set(), drawA).order)).toEqual(["ch_a", "ch_b", "ch_c"])
      const choice = choose(split, [standing(A, [0, 0], "open"), standing(B, [0, 0], "open")], new Set(), drawA)
      expect(choice.routing).toMatchObject({ channel: "ch_c", reason: "breaker" })
      expect(ids(choice.order)).toEqual(["ch_c"])
    })
  })

  describe("success_rate", () => {
    const rated = candidates({ rules: [{ id: "sr", then: { channels: ["ch_a", "ch_b", "ch_c"] } }] })
    const standings = [standing(A, [100, 60]), standing(B, [100, 90]), standing(C, [100, 75])]

    it("goes to the best score, ranks the rest by score, reason success_rate", () => {
      const choice = choose(rated, standings, new Set(), NEVER)
      expect(choice.routing).toMatchObject({ rule: "sr", channel: "ch_b", reason: "success_rate", candidates: ["ch_b", "ch_c", "ch_a"] })
      expect(ids(choice.order)).toEqual(["ch_b", "ch_c", "ch_a"])
    })

    it("explores about 2% of payments, never to the best", () => {
      const random = seeded(7)
      let explored = 0
      for (let i = 0; i < 10_000; i++) {
        const { routing } = choose(rated, standings, new Set(), random)
        if (routing.reason === "exploration") {
          explored++
          expect(routing.channel).not.toBe("ch_b")
        } else expect(routing.channel).toBe("ch_b")
      }
      expect(explored).toBeGreaterThan(150)
      expect(explored).toBeLessThan(250)
    })

    it("the best skipped by its breaker: the next best, reason breaker; one candidate left is as ordered", () => {
      expect(choose(rated, [...standings.slice(0, 1), standing(B, [100, 90], "open"), standings[2]!], new Set(), NEVER).routing)
        .toMatchObject({ channel: "ch_c", reason: "breaker" })
      const one = choose(rated, [standing(A, [100, 60], "open"), standing(B, [100, 90], "open"), standings[2]!], new Set(), () => 0)
      expect(one.routing).toMatchObject({ channel: "ch_c", reason: "breaker" })
      const single = candidates({ rules: [{ id: "one", then: { channels: ["ch_a"] } }] })
      expect(choose(single, [], new Set(), () => 0).routing).toMatchObject({ channel: "ch_a", reason: "rule" })
    })

    it("scores a new channel at the pooled prior; ties keep the listed order; a brand's own window counts from 50 attempts", () => {
      // ch_a unrated scores the pool's 0.5, between ch_b's 0.9 and ch_c's 0.2.
      expect(choose(rated, [standing(B, [100, 90]), standing(C, [100, 20])], new Set(), NEVER).routing.candidates).toEqual(["ch_b", "ch_a", "ch_c"])
      expect(choose(rated, [], new Set(), NEVER).routing).toMatchObject({ channel: "ch_a", candidates: ["ch_a", "ch_b", "ch_c"] })
      const brand = [standing(A, [100, 90], "closed", [60, 10]), standing(B, [100, 80], "closed", [49, 0])]
      expect(choose(rated, brand, new Set(), NEVER).routing.channel).toBe("ch_b")
    })
  })

  it("every reason is reachable", () => {
    const reasons = new Set<RoutingReason>()
    const split = candidates({ rules: [{ id: "s", then: { split: [{ channel: "ch_a", percent: 50 }, { channel: "ch_b", percent: 50 }] } }] })
    const rated = candidates({ rules: [{ id: "sr", then: { channels: ["ch_a", "ch_b"] } }] })
    const random = seeded(1)
    for (let i = 0; i < 1_000; i++) {
      reasons.add(choose(ordered, [], new Set(), random).routing.reason)
      reasons.add(choose(byDefault, [], new Set(), random).routing.reason)
      reasons.add(choose(split, [standing(A, [0, 0], "open")], new Set(), random).routing.reason)
      reasons.add(choose(rated, [standing(A, [10, 9])], new Set(), random).routing.reason)
    }
    expect([...reasons].sort()).toEqual(["breaker", "default", "exploration", "rule", "split", "success_rate"])
  })
})
