import { describe, expect, it } from "vitest"
import * as Channel from "../src/channels/Channel.ts"
import { Conflict, ValidationFailed } from "../src/kernel/Errors.ts"
import type { AccountId, ChannelId } from "../src/kernel/Ids.ts"
import type { ProviderCatalog } from "../src/channels/ProviderCatalog.ts"
import { Result } from "effect"

/** Two providers as their modules would describe them (the real ones: adapters' ProviderModules.test.ts). */
const CATALOG: ProviderCatalog = [
  { name: "stripe", methods: ["card"], transfers: false, credentials: [] },
  { name: "adyen", methods: ["card"], transfers: false, credentials: [] }
]

const fieldsOf = (result: unknown) =>
  result instanceof ValidationFailed ? (result.errors ?? []).map((e) => e.field) : "accepted"

describe("Channel.make", () => {
  const account = { id: "acct_channels000000000" as AccountId, mode: "live" as const }
  const id = "ch_make00000000000000" as ChannelId
  const NOW = "2025-05-01T10:00:00.000Z"
  const settings: Channel.ChannelSettings = { provider: "stripe", mode: "live", methods: null, currencies: null, countries: null, priority: null }

  it("makes an enabled channel of priority 0 taking everything the provider offers by default", () => {
    expect(Channel.make(account, id, settings, CATALOG, NOW)).toEqual({
      id,
      account_id: account.id,
      provider: "stripe",
      mode: "live",
      methods: null,
      currencies: null,
      countries: null,
      priority: 0,
      status: "enabled",
      created_at: NOW,
      updated_at: NOW
    })
  })

  it("normalises the lists: trimmed, case-folded, deduplicated in order", () => {
    const made = Channel.make(account, id, {
      ...settings,
      methods: [" Card", "CARD", "card"],
      currencies: ["eur", "USD"],
      countries: ["nl"],
      priority: 7
    }, CATALOG, NOW)
    expect(made).toMatchObject({ methods: ["card"], currencies: ["EUR", "USD"], countries: ["NL"], priority: 7 })
  })

  it("refuses a mode other than the account's, unknown or unoffered methods, bad codes and priorities, all at once", () => {
    const made = Channel.make(account, id, {
      ...settings,
      mode: "test",
      methods: ["card", "crypto", "bitcoin"],
      currencies: ["EURO"],
      countries: ["XX"],
      priority: 1001
    }, CATALOG, NOW)
    expect(fieldsOf(made)).toEqual(["mode", "methods", "methods", "currencies", "countries", "priority"])
    expect((made as ValidationFailed).errors?.[1].message).toBe("stripe does not offer crypto (it offers card)")
    expect((made as ValidationFailed).errors?.[2].message).toBe("bitcoin is not a payment method")
  })

  it("refuses a provider the catalog (the adapters' list of providers) lacks, naming the ones it has", () => {
    const made = Channel.make(account, id, { ...settings, provider: "paypal" }, CATALOG, NOW)
    expect(fieldsOf(made)).toEqual(["provider"])
    expect((made as ValidationFailed).errors?.[0].message).toBe("must be one of stripe, adyen")
  })

  it("refuses an empty list (omitting the option is how to allow all)", () => {
    expect(fieldsOf(Channel.make(account, id, { ...settings, methods: [" "] }, CATALOG, NOW))).toEqual(["methods"])
  })
})

describe("Channel.disable", () => {
  it("disables an enabled channel once; again is a conflict", () => {
    const channel = Channel.make(
      { id: "acct_channels000000000" as AccountId, mode: "test" },
      "ch_disable00000000000" as ChannelId,
      { provider: "adyen", mode: "test", methods: null, currencies: null, countries: null, priority: 1 },
      CATALOG,
      "2025-05-01T10:00:00.000Z"
    ) as Channel.Channel
    const disabled = Result.getOrThrow(Channel.disable(channel, "2025-05-02T10:00:00.000Z")).next
    expect(disabled).toEqual({ ...channel, status: "disabled", updated_at: "2025-05-02T10:00:00.000Z" })
    const again = Channel.disable(disabled, "2025-05-03T10:00:00.000Z")
    expect(Result.isFailure(again) && again.failure).toBeInstanceOf(Conflict)
    expect(Result.isFailure(again) && again.failure.message).toBe("Channel ch_disable00000000000 is already disabled")
  })
})
