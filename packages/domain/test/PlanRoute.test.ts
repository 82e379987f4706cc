/**
 * planRoute and the dry run over in-memory stand-ins of their ports (the adapters' own are tested
 * by their contract suites; the API tests run all of it for real): pins, whose rules apply, probes
 * claimed by a payment and never by a dry run, the sandbox's answer.
 */
import { Effect, Option, Random } from "effect"
import { describe, expect, it } from "vitest"
import type { Account } from "../src/accounts/Account.ts"
import * as AccountModule from "../src/accounts/Account.ts"
import { AccountRepo } from "../src/accounts/AccountPorts.ts"
import { Accounts } from "../src/accounts/Accounts.ts"
import * as Breaker from "../src/channels/Breaker.ts"
import type { Channel } from "../src/channels/Channel.ts"
import { ChannelProviders, ChannelRepo } from "../src/channels/ChannelPorts.ts"
import { planRoute, type RoutePlan } from "../src/channels/operations/PlanRoute.ts"
import { setRouting } from "../src/channels/operations/SetRouting.ts"
import { testRouting } from "../src/channels/operations/TestRouting.ts"
import type { BreakerPosition, RouteFacts, StoredRules } from "../src/channels/RoutingModel.ts"
import { parseRules } from "../src/channels/RoutingRules.ts"
import { ChannelHealth, RoutingRulesRepo } from "../src/channels/RoutingPorts.ts"
import { ValidationFailed } from "../src/kernel/Errors.ts"
import type { AccountId } from "../src/kernel/Ids.ts"
import { channel, T0 } from "./Fixtures.ts"

const ACCOUNT = "acct_fixture0000000000000" as AccountId
const account = (mode: "test" | "live", profiles: Account["processing_profiles"] = []): Account => ({
  ...AccountModule.born({ id: ACCOUNT, name: "Shop", mode, secret_key: {} as never, publishable_key: "pk", signing_secret: "s", created_at: T0 }),
  processing_profiles: profiles
})
const profile = (code: string, channels?: Array<string>) => ({ code, name: null, status: "active" as const, created_at: T0, ...(channels ? { channels } : {}) })

interface World {
  readonly account: Account
  readonly channels: ReadonlyArray<Channel>
  readonly rules?: ReadonlyArray<{ readonly profile: string | null; readonly file: unknown }>
  readonly breakers?: Record<string, BreakerPosition>
}

/** Runs `effect` over stand-ins of the ports planRoute reads; returns its exit and the probes claimed. */
const run = <A, E>(world: World, effect: Effect.Effect<A, E, ChannelRepo | AccountRepo | ChannelProviders | RoutingRulesRepo | ChannelHealth | Accounts>) => {
  const claimed: Array<string> = []
  const stored = (world.rules ?? []).map(({ profile, file }, i): StoredRules => {
    const rules = parseRules(file, world.account, world.channels)
    if (rules instanceof ValidationFailed) throw new Error(rules.message)
    return { account_id: ACCOUNT, profile, version: i + 1, rules, document: file, created_at: T0 }
  })
  const position = (id: string): BreakerPosition => world.breakers?.[id] ?? "closed"
  const program = effect.pipe(
    Effect.provideService(ChannelRepo, { listByAccount: () => Effect.succeed(world.channels) } as unknown as ChannelRepo["Service"]),
    Effect.provideService(AccountRepo, { findById: () => Effect.succeed(Option.some(world.account)) } as unknown as AccountRepo["Service"]),
    Effect.provideService(Accounts, { get: () => Effect.succeed(world.account) } as unknown as Accounts["Service"]),
    Effect.provideService(ChannelProviders, { catalog: [{ name: "stripe", methods: ["card"], transfers: false, credentials: [] }] } as unknown as ChannelProviders["Service"]),
    Effect.provideService(RoutingRulesRepo, {
      current: (_: string, p: string | null) => Effect.succeed(Option.fromNullishOr(stored.filter((s) => s.profile === p).at(-1))),
      put: (rules) => Effect.succeed({ ...rules, version: stored.length + 1 })
    }),
    Effect.provideService(ChannelHealth, {
      observe: () => Effect.die("not in a plan"),
      breakers: () => Effect.die("not in a plan"),
      standings: (ids) => Effect.succeed(ids.map((id) => ({
        channel_id: id,
        breaker: position(id),
        breaker_state: position(id) === "half_open" ? { ...Breaker.INITIAL, failures: 5, opened_at: 0, open_until: 1, trips: 1 } : Breaker.INITIAL,
        rate: { attempts: 0, approvals: 0 },
        brand_rate: { attempts: 0, approvals: 0 }
      }))),
      claimProbe: (id) => Effect.sync(() => (claimed.push(id), true))
    }),
    Random.withSeed(27)
  )
  return Effect.runPromise(Effect.exit(program)).then((exit) => ({ exit, claimed }))
}
const FACTS: RouteFacts = { method: "card", currency: "USD", country: "US", amount: 1000, card: null }
const routingOf = (plan: RoutePlan) => (plan._tag === "Sandbox" ? "sandbox" : plan.choice.routing)
const succeeded = async <A>(p: Promise<{ exit: import("effect").Exit.Exit<A, unknown> }>) => {
  const { exit } = await p
  if (exit._tag === "Failure") throw new Error(String(exit.cause))
  return exit.value
}
const failure = async (p: Promise<{ exit: import("effect").Exit.Exit<unknown, unknown> }>) => {
  const { exit } = await p
  if (exit._tag === "Success") throw new Error("succeeded")
  return JSON.stringify(exit.cause)
}

const A = channel("ch_a", { priority: 1 })
const B = channel("ch_b", { priority: 5 })

describe("planRoute", () => {
  it("a test account with no usable channel goes to the sandbox; a live one is unroutable", async () => {
    expect(routingOf(await succeeded(run({ account: account("test"), channels: [] }, planRoute({ id: ACCOUNT, mode: "test" }, FACTS, null, { dryRun: false }))))).toBe("sandbox")
    expect(await failure(run({ account: account("live"), channels: [] }, planRoute({ id: ACCOUNT, mode: "live" }, FACTS, null, { dryRun: false }))))
      .toContain("No live channel is configured for this account")
  })

  it("no rules: every channel by priority, version 0, reason default", async () => {
    const plan = await succeeded(run({ account: account("live"), channels: [A, B] }, planRoute({ id: ACCOUNT, mode: "live" }, FACTS, null, { dryRun: false })))
    expect(routingOf(plan)).toEqual({ rule: null, version: 0, candidates: ["ch_b", "ch_a"], channel: "ch_b", reason: "default", attempt: 1 })
  })

  it("a profile's own rules decide its payments; a profile without rules uses the account's", async () => {
    const world: World = {
      account: account("live", [profile("eu"), profile("us")]),
      channels: [A, B],
      rules: [
        { profile: null, file: { rules: [{ id: "account", then: { channels: ["ch_a"] } }] } },
        { profile: "eu", file: { rules: [{ id: "eu", then: { channels: ["ch_b", "ch_a"] } }], strategy: "ordered" } }
      ]
    }
    const owner = { id: ACCOUNT, mode: "live" } as const
    expect(routingOf(await succeeded(run(world, planRoute(owner, FACTS, "eu", { dryRun: false }))))).toMatchObject({ rule: "eu", version: 2, channel: "ch_b" })
    expect(routingOf(await succeeded(run(world, planRoute(owner, FACTS, "us", { dryRun: false }))))).toMatchObject({ rule: "account", version: 1, channel: "ch_a" })
  })

  it("setRouting: a pinned profile's rules may name its pins only; the account's own rules, any channel", async () => {
    const world: World = { account: account("live", [profile("eu", ["ch_a"]), profile("us")]), channels: [A, B] }
    const file = { rules: [{ id: "r1", then: { channels: ["ch_a", "ch_b"] } }] }
    const refusal = await failure(run(world, setRouting(ACCOUNT, "eu", file)))
    expect(refusal).toContain("validation_failed")
    expect(refusal).toContain(`"field":"rules[r1].then.channels","message":"names channel ch_b, which processing profile eu is not pinned to (pinned: ch_a)"`)
    expect(await succeeded(run(world, setRouting(ACCOUNT, "eu", { rules: [{ id: "r1", then: { channels: ["ch_a"] } }] })))).toEqual({ version: 1 })
    // A profile without pins, or the account's own rules: every channel of the account.
    expect(await succeeded(run(world, setRouting(ACCOUNT, "us", file)))).toEqual({ version: 1 })
    expect(await succeeded(run(world, setRouting(ACCOUNT, null, file)))).toEqual({ version: 1 })
  })

  it("keeps the pins' refusals (Route.ts's words)", async () => {
    const owner = { id: ACCOUNT, mode: "live" } as const
    const disabled = { account: account("live", [profile("p", ["ch_a"])]), channels: [{ ...A, status: "disabled" as const }, B] }
    expect(await failure(run(disabled, planRoute(owner, FACTS, "p", { dryRun: false })))).toContain("No channel processing profile p is pinned to is enabled")
    const noIdeal = { account: account("live", [profile("p", ["ch_a"])]), channels: [A, B] }
    const refusal = await failure(run(noIdeal, planRoute(owner, { ...FACTS, method: "ideal", currency: "EUR", country: "NL" }, "p", { dryRun: false })))
    expect(refusal).toContain("PaymentMethodNotSupportedByProvider")
    expect(refusal).toContain("The channels processing profile p is pinned to do not take ideal")
  })

  it("a payment claims a half-open channel's probe and explores it; a dry run claims nothing", async () => {
    const world: World = { account: account("live"), channels: [A, B], breakers: { ch_b: "open", ch_a: "half_open" } }
    const owner = { id: ACCOUNT, mode: "live" } as const
    const real = await run(world, planRoute(owner, FACTS, null, { dryRun: false }))
    expect(real.claimed).toEqual(["ch_a"])
    expect(real.exit._tag === "Success" && routingOf(real.exit.value)).toMatchObject({ channel: "ch_a", reason: "exploration" })
    const dry = await run(world, planRoute(owner, FACTS, null, { dryRun: true }))
    expect(dry.claimed).toEqual([])
    expect(dry.exit._tag === "Success" && routingOf(dry.exit.value)).toMatchObject({ channel: "ch_a", reason: "exploration" })
  })
})

describe("testRouting (the dry run)", () => {
  const body = { amount: "10.00", currency: "USD", country: "US", merchant_reference: "dry-1", payment_method: { code: "card" }, success_url: "https://shop.example/ok", cancel_url: "https://shop.example/no" }
  const world: World = {
    account: account("live", [profile("eu")]),
    channels: [A, B],
    rules: [{ profile: null, file: { rules: [{ id: "visa", when: { card_brand: "visa" }, then: { channels: ["ch_a"] } }], default: { channels: ["ch_b"] } } }]
  }

  it("answers the decision; the card's facts select card rules", async () => {
    expect(await succeeded(run(world, testRouting(ACCOUNT, null, body)))).toEqual({ rule: null, version: 1, candidates: ["ch_b"], channel: "ch_b", reason: "default" })
    expect(await succeeded(run(world, testRouting(ACCOUNT, null, { ...body, card: { brand: "VISA", bin: "424242" } }))))
      .toEqual({ rule: "visa", version: 1, candidates: ["ch_a"], channel: "ch_a", reason: "rule" })
  })

  it("the sandbox's answer", async () => {
    expect(await succeeded(run({ account: account("test"), channels: [] }, testRouting(ACCOUNT, null, body))))
      .toEqual({ rule: null, version: 0, candidates: [], channel: "sandbox", reason: "default" })
  })

  it("a bad body is validation_failed naming the field, never a defect", async () => {
    expect(await failure(run(world, testRouting(ACCOUNT, null, { ...body, amount: 10 })))).toMatch(/"field":"amount".*"ValidationFailed"/)
    expect(await failure(run(world, testRouting(ACCOUNT, null, "nope")))).toContain("ValidationFailed")
    expect(await failure(run(world, testRouting(ACCOUNT, null, { ...body, currency: "XYZ" })))).toContain("\"field\":\"currency\"")
    expect(await failure(run(world, testRouting(ACCOUNT, null, { ...body, card: { bin: "42" } })))).toContain("card.bin")
    expect(await failure(run(world, testRouting(ACCOUNT, "nope", body)))).toContain("nope is not a processing profile")
    expect(await failure(run(world, testRouting(ACCOUNT, "eu", { ...body, processing_profile: "other" })))).toContain("processing_profile")
  })
})
