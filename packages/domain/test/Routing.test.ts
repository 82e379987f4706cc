import { describe, expect, it } from "vitest"
import * as Channel from "../src/channels/Channel.ts"
import type { AccountId, ChannelId } from "../src/kernel/Ids.ts"
import { channelsFor, routeFor } from "../src/channels/Routing.ts"
import type { ProviderCatalog } from "../src/channels/ProviderCatalog.ts"

/** Two card-only providers, as their modules describe them (adapters' providers/Providers.ts). */
const CATALOG: ProviderCatalog = [
  { name: "stripe", methods: ["card"], transfers: false, credentials: [] },
  { name: "adyen", methods: ["card"], transfers: false, credentials: [] }
]

describe("routeFor", () => {
  it("lets a provider carry only the accounts of its own mode", () => {
    expect(routeFor({ mode: "test" }, false)).toBeUndefined()
    expect(routeFor({ mode: "live" }, true)).toBeUndefined()
  })

  it("refuses a live account on a test provider (the sandbox) with payment_unroutable", () => {
    const refused = routeFor({ mode: "test" }, true)
    expect(refused?.code).toBe("payment_unroutable")
    expect(refused?.message).toBe("No live provider is configured for this account")
  })

  it("refuses a test account on a live provider: test traffic never moves real money", () => {
    expect(routeFor({ mode: "live" }, false)?.code).toBe("payment_unroutable")
  })
})

describe("channelsFor (contract.md, Providers: the cascade order)", () => {
  const ACCOUNT = "acct_routing0000000000" as AccountId
  let n = 0
  /** A live, enabled Stripe channel taking everything Stripe offers, created a second after the one before. */
  const channel = (overrides: Partial<Channel.Channel> = {}): Channel.Channel => {
    n += 1
    const at = new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString()
    const made = Channel.make(
      { id: ACCOUNT, mode: "live" },
      `ch_routing${String(n).padStart(12, "0")}` as ChannelId,
      { provider: "stripe", mode: "live", methods: null, currencies: null, countries: null, priority: null },
      CATALOG,
      at
    ) as Channel.Channel
    return { ...made, ...overrides }
  }
  const LIVE = { mode: "live" } as const
  const TEST = { mode: "test" } as const
  const CARD_US = { method: "card", currency: "USD", country: "US" }
  const ids = (route: ReturnType<typeof channelsFor>) =>
    route instanceof Error ? route.code : route._tag === "Sandbox" ? "sandbox" : route.channels.map((c) => c.id)

  it("orders the candidates highest priority first, equal priorities in creation order", () => {
    const low = channel({ priority: 1 })
    const highOld = channel({ priority: 5 })
    const highNew = channel({ priority: 5, provider: "adyen" })
    // The list comes in any order: creation time decides, not the position.
    expect(ids(channelsFor(LIVE, [highNew, low, highOld], CARD_US, CATALOG))).toEqual([highOld.id, highNew.id, low.id])
  })

  it("breaks a tie of priority and creation time by the order the repository listed them", () => {
    const a = channel()
    const b = { ...channel(), created_at: a.created_at }
    expect(ids(channelsFor(LIVE, [a, b], CARD_US, CATALOG))).toEqual([a.id, b.id])
    expect(ids(channelsFor(LIVE, [b, a], CARD_US, CATALOG))).toEqual([b.id, a.id])
  })

  const cases: ReadonlyArray<{
    readonly name: string
    readonly account: { readonly mode: "test" | "live" }
    readonly channels: () => ReadonlyArray<Channel.Channel>
    readonly payment: { readonly method: string; readonly currency: string; readonly country: string }
    /** Positions in `channels` of the expected candidates, or the outcome's name. */
    readonly expected: ReadonlyArray<number> | "sandbox" | "payment_unroutable"
  }> = [
    { name: "test account, no channels → sandbox", account: TEST, channels: () => [], payment: CARD_US, expected: "sandbox" },
    {
      name: "test account whose test channels are all disabled → sandbox",
      account: TEST,
      channels: () => [channel({ mode: "test", status: "disabled" })],
      payment: CARD_US,
      expected: "sandbox"
    },
    {
      name: "test account with only a live channel (not its mode) → sandbox",
      account: TEST,
      channels: () => [channel()],
      payment: CARD_US,
      expected: "sandbox"
    },
    {
      name: "test account with a test channel → that channel",
      account: TEST,
      channels: () => [channel({ mode: "test" })],
      payment: CARD_US,
      expected: [0]
    },
    {
      name: "test account with a test channel that does not take the method → unroutable, not the sandbox",
      account: TEST,
      channels: () => [channel({ mode: "test", methods: ["card"] })],
      payment: { method: "ideal", currency: "EUR", country: "NL" },
      expected: "payment_unroutable"
    },
    { name: "live account, no channels → unroutable", account: LIVE, channels: () => [], payment: CARD_US, expected: "payment_unroutable" },
    {
      name: "live account with only a test channel → unroutable (never the test one)",
      account: LIVE,
      channels: () => [channel({ mode: "test" })],
      payment: CARD_US,
      expected: "payment_unroutable"
    },
    {
      name: "live account, disabled channel skipped",
      account: LIVE,
      channels: () => [channel({ status: "disabled", priority: 9 }), channel()],
      payment: CARD_US,
      expected: [1]
    },
    {
      name: "methods null takes every method the provider offers, and no other",
      account: LIVE,
      channels: () => [channel()],
      payment: { method: "crypto", currency: "USD", country: "US" },
      expected: "payment_unroutable"
    },
    {
      name: "card channels (what the Stripe and Adyen adapters carry) do not take iDEAL: unroutable",
      account: LIVE,
      channels: () => [channel({ priority: 9 }), channel({ provider: "adyen" })],
      payment: { method: "ideal", currency: "EUR", country: "NL" },
      expected: "payment_unroutable"
    },
    {
      name: "currency outside a channel's list skips it",
      account: LIVE,
      channels: () => [channel({ currencies: ["EUR"], priority: 9 }), channel({ currencies: ["USD", "EUR"] })],
      payment: CARD_US,
      expected: [1]
    },
    {
      name: "country outside a channel's list skips it",
      account: LIVE,
      channels: () => [channel({ countries: ["NL"] }), channel({ countries: ["US"] })],
      payment: CARD_US,
      expected: [1]
    },
    {
      name: "nothing matches the currency → unroutable",
      account: LIVE,
      channels: () => [channel({ currencies: ["EUR"] })],
      payment: CARD_US,
      expected: "payment_unroutable"
    }
  ]

  for (const c of cases) {
    it(c.name, () => {
      const channels = c.channels()
      const route = channelsFor(c.account, channels, c.payment, CATALOG)
      expect(ids(route)).toEqual(typeof c.expected === "string" ? c.expected : c.expected.map((i) => channels[i].id))
    })
  }

  it("says why a live payment is unroutable", () => {
    expect(channelsFor(LIVE, [], CARD_US, CATALOG)).toMatchObject({ message: "No live channel is configured for this account" })
    expect(channelsFor(LIVE, [channel({ methods: ["ideal"] })], CARD_US, CATALOG))
      .toMatchObject({ message: "No enabled live channel of this account takes card in USD from US" })
  })
})
