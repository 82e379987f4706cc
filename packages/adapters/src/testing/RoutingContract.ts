/**
 * Smart routing's storage contract (issue 27): what RoutingRulesRepo and ChannelHealth promise
 * whatever keeps them. Memory and PostgreSQL pass the same assertions (test/routing.memory.test.ts,
 * test/routing.postgres.test.ts); what only several processes show (PostgreSQL's sharing) is tested
 * beside it in routing.postgres.test.ts.
 *
 * Within one process an answer counts at once, so every assertion here is exact. Observations are
 * stamped near the real clock: PostgreSQL's sync reads back the window of the moment, and would
 * drop counts stamped in another era.
 */
import type { Vitest } from "@effect/vitest"
import { expect, layer as layerTests } from "@effect/vitest"
import { AccountRepo, type Ids, type KeyHasher, UnitOfWork } from "@tender/domain"
import type { ChannelStanding, HealthOutcome, RuleSet, Segment } from "@tender/domain/channels/RoutingModel"
import { ChannelHealth, RoutingRulesRepo } from "@tender/domain/channels/RoutingPorts"
import { type Duration, Effect, Exit, type Layer, Option } from "effect"
import { newAccount } from "./StorageContract.ts"

/** What a layer under the contract provides. */
export type RoutingContractServices = RoutingRulesRepo | ChannelHealth | AccountRepo | UnitOfWork | Ids | KeyHasher

export interface RoutingContractOptions<R> {
  /** Per test (default 1 minute). */
  readonly timeout?: Duration.Input | undefined
  /** More tests of the suite's own, over the same layer. */
  readonly also?: ((it: Vitest.MethodsNonLive<R>) => void) | undefined
}

/** A parsed rules file: one rule for EUR cards, everything else by priority. */
export const ruleSet = (channels: ReadonlyArray<string>): RuleSet => ({
  rules: [{
    id: "eu-cards",
    when: {
      method: ["card"],
      currency: ["EUR"],
      country: null,
      amount: { min: "10.00", max: null },
      card_brand: null,
      card_funding: null,
      issuer_country: null,
      bin: [{ prefix: "4242" }, { from: "510000", to: "559999" }]
    },
    then: { _tag: "Channels", channels }
  }],
  default: null,
  strategy: "success_rate"
})

const document = (channels: ReadonlyArray<string>) => ({
  strategy: "success_rate",
  rules: [{ id: "eu-cards", when: { method: ["card"], currency: ["EUR"] }, then: { channels } }]
})

let channelCount = 0
/** A channel id of its own for a test: health is kept by channel id alone. */
export const newChannelId = () => `ch_contract${process.pid}x${Date.now().toString(36)}x${++channelCount}`

export const CARD_EUR: Segment = { method: "card", currency: "EUR", brand: "visa" }

/** `outcomes` of `channelId` in `segment`, one millisecond apart from `at`. */
export const observeAll = (channelId: string, outcomes: ReadonlyArray<HealthOutcome>, at: number, segment: Segment = CARD_EUR) =>
  Effect.flatMap(ChannelHealth, (health) =>
    Effect.forEach(outcomes, (outcome, i) => health.observe({ channel_id: channelId, segment, outcome, at: at + i }), { discard: true }))

const standingOf = (channelId: string, segment: Segment, now: number) =>
  Effect.map(Effect.flatMap(ChannelHealth, (health) => health.standings([channelId], segment, now)), ([s]) => s!)

const repeat = (n: number, a: HealthOutcome): ReadonlyArray<HealthOutcome> => Array.from({ length: n }, () => a)

const storedAccount = Effect.gen(function*() {
  const { account } = yield* newAccount()
  yield* (yield* AccountRepo).insert(account)
  return account.id
})

export const routingRulesContract = (it: Vitest.MethodsNonLive<RoutingContractServices>) => {
  it.effect("rules: none until set; each put is the next version of its (account, profile), the highest current", () =>
    Effect.gen(function*() {
      const repo = yield* RoutingRulesRepo
      const account = yield* storedAccount
      const other = yield* storedAccount
      expect(yield* repo.current(account, null)).toEqual(Option.none())

      const at = "2026-11-29T08:00:00.000Z"
      const first = yield* repo.put({ account_id: account, profile: null, rules: ruleSet(["ch_a"]), document: document(["ch_a"]), created_at: at })
      expect(first).toEqual({ account_id: account, profile: null, version: 1, rules: ruleSet(["ch_a"]), document: document(["ch_a"]), created_at: at })
      expect(yield* repo.current(account, null)).toEqual(Option.some(first))

      const second = yield* repo.put({ account_id: account, profile: null, rules: ruleSet(["ch_b", "ch_a"]), document: document(["ch_b", "ch_a"]), created_at: "2026-11-29T08:01:00.000Z" })
      expect(second.version).toBe(2)
      expect(yield* repo.current(account, null)).toEqual(Option.some(second))

      // A profile's rules are versioned on their own, and leave the account's as they are.
      const eu = yield* repo.put({ account_id: account, profile: "eu", rules: ruleSet(["ch_c"]), document: document(["ch_c"]), created_at: at })
      expect(eu).toMatchObject({ profile: "eu", version: 1 })
      expect(yield* repo.current(account, "eu")).toEqual(Option.some(eu))
      expect(yield* repo.current(account, null)).toEqual(Option.some(second))
      expect(yield* repo.current(account, "us")).toEqual(Option.none())
      // Another account sees none of it.
      expect(yield* repo.current(other, null)).toEqual(Option.none())
      expect(yield* repo.current(other, "eu")).toEqual(Option.none())
    }))

  it.effect("rules: 12 concurrent puts of one (account, profile) take 12 distinct versions; the highest is current", () =>
    Effect.gen(function*() {
      const repo = yield* RoutingRulesRepo
      const account = yield* storedAccount
      const stored = yield* Effect.forEach(
        Array.from({ length: 12 }, (_, i) => i),
        (i) => repo.put({ account_id: account, profile: "eu", rules: ruleSet([`ch_${i}`]), document: document([`ch_${i}`]), created_at: "2026-11-29T08:00:00.000Z" }),
        { concurrency: "unbounded" }
      )
      expect(stored.map((s) => s.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1))
      const current = Option.getOrThrow(yield* repo.current(account, "eu"))
      expect(current.version).toBe(12)
      // The current version holds what its put stored.
      expect(current).toEqual(stored.find((s) => s.version === 12))
    }))

  it.effect("rules: a put inside a unit of work that fails is not stored", () =>
    Effect.gen(function*() {
      const repo = yield* RoutingRulesRepo
      const uow = yield* UnitOfWork
      const account = yield* storedAccount
      const exit = yield* Effect.exit(uow.transaction(Effect.andThen(
        repo.put({ account_id: account, profile: null, rules: ruleSet(["ch_a"]), document: document(["ch_a"]), created_at: "2026-11-29T08:00:00.000Z" }),
        Effect.fail("rolled back" as const)
      )))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* repo.current(account, null)).toEqual(Option.none())
      // And the next put is version 1.
      const first = yield* repo.put({ account_id: account, profile: null, rules: ruleSet(["ch_a"]), document: document(["ch_a"]), created_at: "2026-11-29T08:00:00.000Z" })
      expect(first.version).toBe(1)
    }))
}

export const channelHealthContract = (it: Vitest.MethodsNonLive<RoutingContractServices>) => {
  it.effect("health: a channel never observed stands closed with empty windows, in the order asked", () =>
    Effect.gen(function*() {
      const health = yield* ChannelHealth
      const [a, b] = [newChannelId(), newChannelId()]
      const now = Date.now()
      const standings = yield* health.standings([b, a], CARD_EUR, now)
      const initial = { failures: 0, opened_at: null, open_until: null, trips: 0, probe_until: null }
      const zero = { attempts: 0, approvals: 0 }
      expect(standings).toEqual([b, a].map((channel_id): ChannelStanding => ({ channel_id, breaker: "closed", breaker_state: initial, rate: zero, brand_rate: zero })))
      expect((yield* health.breakers(now)).filter((x) => x.channel_id === a || x.channel_id === b)).toEqual([])
    }))

  it.effect("health: approvals and rated declines count; channel-neutral declines and challenges do not; brands add up to the rate", () =>
    Effect.gen(function*() {
      const channel = newChannelId()
      const now = Date.now()
      yield* observeAll(channel, ["approved", "approved", "declined", "unavailable", "neutral", "reachable"], now, CARD_EUR)
      yield* observeAll(channel, ["approved", "declined"], now + 10, { method: "card", currency: "EUR", brand: "mastercard" })
      // Other segments are kept apart.
      yield* observeAll(channel, ["declined"], now + 20, { method: "card", currency: "USD", brand: "visa" })
      yield* observeAll(channel, ["approved"], now + 30, { method: "ideal", currency: "EUR", brand: null })

      const visa = yield* standingOf(channel, CARD_EUR, now + 100)
      expect(visa.rate).toEqual({ attempts: 6, approvals: 3 })
      expect(visa.brand_rate).toEqual({ attempts: 4, approvals: 2 })
      const mastercard = yield* standingOf(channel, { method: "card", currency: "EUR", brand: "mastercard" }, now + 100)
      expect(mastercard.brand_rate).toEqual({ attempts: 2, approvals: 1 })
      // A segment without a brand: the rate alone, the brand's window empty.
      const unbranded = yield* standingOf(channel, { method: "card", currency: "EUR", brand: null }, now + 100)
      expect([unbranded.rate, unbranded.brand_rate]).toEqual([{ attempts: 6, approvals: 3 }, { attempts: 0, approvals: 0 }])
      expect((yield* standingOf(channel, { method: "card", currency: "USD", brand: "visa" }, now + 100)).rate).toEqual({ attempts: 1, approvals: 0 })
      expect((yield* standingOf(channel, { method: "ideal", currency: "EUR", brand: null }, now + 100)).rate).toEqual({ attempts: 1, approvals: 1 })
    }))

  it.effect("health: five unavailable answers in a row open the breaker for 30 s; past it one probe at a time; an answer closes it", () =>
    Effect.gen(function*() {
      const health = yield* ChannelHealth
      const channel = newChannelId()
      const t0 = Date.now()
      yield* observeAll(channel, repeat(4, "unavailable"), t0)
      const counting = yield* standingOf(channel, CARD_EUR, t0 + 10)
      expect([counting.breaker, counting.breaker_state.failures]).toEqual(["closed", 4])
      // No probe while closed.
      expect(yield* health.claimProbe(channel, t0 + 10)).toBe(false)

      yield* observeAll(channel, ["unavailable"], t0 + 20)
      const opened = yield* standingOf(channel, CARD_EUR, t0 + 21)
      expect(opened.breaker).toBe("open")
      expect(opened.breaker_state).toMatchObject({ failures: 5, opened_at: t0 + 20, open_until: t0 + 20 + 30_000, trips: 1, probe_until: null })
      expect((yield* health.breakers(t0 + 21)).find((b) => b.channel_id === channel)?.state).toEqual(opened.breaker_state)
      // No probe while open.
      expect(yield* health.claimProbe(channel, t0 + 21)).toBe(false)

      const later = t0 + 20 + 30_000
      expect((yield* standingOf(channel, CARD_EUR, later)).breaker).toBe("half_open")
      expect(yield* health.claimProbe(channel, later)).toBe(true)
      expect(yield* health.claimProbe(channel, later + 1)).toBe(false)
      expect((yield* standingOf(channel, CARD_EUR, later + 2)).breaker_state.probe_until).toBe(later + 30_000)

      // The probe's answer: reachable closes it, and it is no longer listed.
      yield* observeAll(channel, ["approved"], later + 3)
      const closed = yield* standingOf(channel, CARD_EUR, later + 4)
      expect([closed.breaker, closed.breaker_state.failures, closed.breaker_state.trips]).toEqual(["closed", 0, 0])
      expect((yield* health.breakers(later + 4)).some((b) => b.channel_id === channel)).toBe(false)
    }))

  it.effect("health: a failed probe reopens the breaker for twice as long; a probe whose answer never comes lapses after 30 s", () =>
    Effect.gen(function*() {
      const health = yield* ChannelHealth
      const channel = newChannelId()
      const t0 = Date.now()
      yield* observeAll(channel, repeat(5, "unavailable"), t0)
      const halfOpen = t0 + 4 + 30_000
      expect(yield* health.claimProbe(channel, halfOpen)).toBe(true)
      yield* observeAll(channel, ["unavailable"], halfOpen + 1)
      const reopened = yield* standingOf(channel, CARD_EUR, halfOpen + 2)
      expect(reopened.breaker).toBe("open")
      expect(reopened.breaker_state).toMatchObject({ trips: 2, opened_at: halfOpen + 1, open_until: halfOpen + 1 + 60_000 })

      const again = halfOpen + 1 + 60_000
      expect(yield* health.claimProbe(channel, again)).toBe(true)
      // Its answer never came: 30 s later the claim is free again, for one.
      expect(yield* health.claimProbe(channel, again + 29_999)).toBe(false)
      expect(yield* health.claimProbe(channel, again + 30_000)).toBe(true)
      expect(yield* health.claimProbe(channel, again + 30_001)).toBe(false)
    }))

  it.effect("health: any answer but unavailable resets the count: four, a challenge, four more leave the breaker closed", () =>
    Effect.gen(function*() {
      const channel = newChannelId()
      const t0 = Date.now()
      yield* observeAll(channel, [...repeat(4, "unavailable"), "reachable", ...repeat(4, "unavailable")], t0)
      const standing = yield* standingOf(channel, CARD_EUR, t0 + 20)
      expect([standing.breaker, standing.breaker_state.failures]).toEqual(["closed", 4])
    }))

  it.effect("health: of 16 concurrent claims of a half-open breaker's probe, exactly one wins", () =>
    Effect.gen(function*() {
      const health = yield* ChannelHealth
      const channel = newChannelId()
      const t0 = Date.now()
      yield* observeAll(channel, repeat(5, "unavailable"), t0)
      const halfOpen = t0 + 4 + 30_000
      const claims = yield* Effect.forEach(Array.from({ length: 16 }), () => health.claimProbe(channel, halfOpen), { concurrency: "unbounded" })
      expect(claims.filter((won) => won)).toHaveLength(1)
    }))
}

/**
 * Registers the contract over `layer` (the routing ports with AccountRepo, UnitOfWork, Ids and
 * KeyHasher; nothing left to provide) in a block named `name`, built once for its tests: each test
 * makes its own accounts and channel ids, so a database holding other data passes as well.
 */
export const routingContract = <L extends Layer.Layer<RoutingContractServices, unknown>>(
  name: string,
  layer: L,
  options: RoutingContractOptions<Layer.Success<L>> = {}
): void =>
  layerTests(layer as Layer.Layer<Layer.Success<L>, Layer.Error<L>>, { excludeTestServices: true, timeout: options.timeout ?? "1 minute" })(name, (it) => {
    const contract = it as unknown as Vitest.MethodsNonLive<RoutingContractServices>
    routingRulesContract(contract)
    channelHealthContract(contract)
    options.also?.(it)
  })
