import { describe, expect, it } from "vitest"
import type { CardFacts, RouteFacts, RuleSet } from "../src/channels/RoutingModel.ts"
import { parseRules } from "../src/channels/RoutingRules.ts"
import { holds, matchRule } from "../src/channels/RuleMatch.ts"
import { ValidationFailed } from "../src/kernel/Errors.ts"
import { channel } from "./Fixtures.ts"

const LIVE = { mode: "live" } as const
const CHANNELS = [
  channel("ch_a"),
  channel("ch_b"),
  channel("ch_c"),
  channel("ch_off", { status: "disabled" }),
  channel("ch_test", { mode: "test" })
]
const parse = (input: unknown) => parseRules(input, LIVE, CHANNELS)
const parsed = (input: unknown): RuleSet => {
  const set = parse(input)
  if (set instanceof ValidationFailed) throw new Error(set.message)
  return set
}
const refused = (input: unknown): ValidationFailed => {
  const set = parse(input)
  if (!(set instanceof ValidationFailed)) throw new Error("accepted")
  return set
}
const rule = (id: string, when: unknown, then: unknown = { channels: ["ch_a"] }) => ({ id, when, then })

const CARD: CardFacts = { bin: "42424242", brand: "visa", funding: "credit", issuer_country: "US" }
const facts = (overrides: Partial<RouteFacts> = {}): RouteFacts => ({
  method: "card",
  currency: "USD",
  country: "US",
  amount: 1050,
  card: CARD,
  ...overrides
})

describe("parseRules (contract.md: a file that cannot be applied is refused whole, naming the rule)", () => {
  it("takes a full file, normalising codes, strategy success_rate by default", () => {
    const set = parsed({
      rules: [
        rule("eu-visa", { method: "CARD", currency: ["eur", "GBP"], country: "de", card_brand: ["VISA"], issuer_country: ["fr"] }, {
          split: [{ channel: "ch_a", percent: 70 }, { channel: "ch_b", percent: 30 }]
        }),
        rule("big", { amount: { min: "1000.00" }, bin: ["4242", "510000-559999"], card_funding: "Debit" }, { channels: ["ch_c", "ch_a"] })
      ],
      default: { channels: ["ch_b"] }
    })
    expect(set.strategy).toBe("success_rate")
    expect(set.default).toEqual(["ch_b"])
    expect(set.rules[0]!.when).toMatchObject({ method: ["card"], currency: ["EUR", "GBP"], country: ["DE"], card_brand: ["visa"], issuer_country: ["FR"] })
    expect(set.rules[0]!.then).toEqual({ _tag: "Split", split: [{ channel: "ch_a", percent: 70 }, { channel: "ch_b", percent: 30 }] })
    expect(set.rules[1]!.when).toMatchObject({
      amount: { min: "1000.00", max: null },
      bin: [{ prefix: "4242" }, { from: "510000", to: "559999" }],
      card_funding: ["debit"],
      method: null
    })
    expect(parsed({ rules: [], strategy: "ordered" })).toEqual({ rules: [], default: null, strategy: "ordered" })
    expect(parsed({})).toEqual({ rules: [], default: null, strategy: "success_rate" })
  })

  const cases: ReadonlyArray<readonly [string, unknown, string, string]> = [
    ["not an object", [], "Rules file: must be a JSON object", ""],
    ["an unknown top-level key", { rulez: [] }, "Rules file: rulez is not a known key", "rulez"],
    ["rules not a list", { rules: {} }, "Rules file: rules must be a list of rules", "rules"],
    ["an unknown strategy", { strategy: "fastest" }, "Rules file: strategy must be one of ordered, success_rate", "strategy"],
    ["a rule without id", { rules: [{ then: { channels: ["ch_a"] } }] }, "Rule #1: id is required", "rules[0].id"],
    ["a duplicate rule id", { rules: [rule("r1", {}), rule("r1", {})] }, "Rule \"r1\": id is used by an earlier rule", "rules[r1].id"],
    ["an unknown condition", { rules: [rule("r1", { brand: "visa" })] }, "Rule \"r1\": when.brand is not a known condition", "rules[r1].when.brand"],
    ["an unknown method", { rules: [rule("r1", { method: "cheque" })] }, "Rule \"r1\": when.method cheque is not a payment method", "rules[r1].when.method"],
    ["an unknown currency", { rules: [rule("r1", { currency: ["USD", "XYZ"] })] }, "Rule \"r1\": when.currency XYZ is not an ISO 4217", "rules[r1].when.currency"],
    ["an unknown country", { rules: [rule("r1", { country: "UK" })] }, "Rule \"r1\": when.country UK is not an ISO 3166-1", "rules[r1].when.country"],
    ["an unknown issuer country", { rules: [rule("r1", { issuer_country: "ZZ" })] }, "Rule \"r1\": when.issuer_country ZZ", "rules[r1].when.issuer_country"],
    ["an unknown brand", { rules: [rule("r1", { card_brand: "visaa" })] }, "Rule \"r1\": when.card_brand visaa is not a card brand", "rules[r1].when.card_brand"],
    ["an empty list", { rules: [rule("r1", { currency: [] })] }, "Rule \"r1\": when.currency must be a code or a non-empty list", "rules[r1].when.currency"],
    ["an amount not a decimal", { rules: [rule("r1", { amount: { min: 10 } })] }, "Rule \"r1\": when.amount.min must be a decimal string", "rules[r1].when.amount.min"],
    ["an amount min above max", { rules: [rule("r1", { amount: { min: "10.5", max: "10.49" } })] }, "Rule \"r1\": when.amount min 10.5 is above max 10.49", "rules[r1].when.amount"],
    ["an empty amount", { rules: [rule("r1", { amount: {} })] }, "Rule \"r1\": when.amount must be an object with min and/or max", "rules[r1].when.amount"],
    ["a bin of letters", { rules: [rule("r1", { bin: "42x" })] }, "Rule \"r1\": when.bin 42x must be digits", "rules[r1].when.bin"],
    ["a bin range of unequal ends", { rules: [rule("r1", { bin: "4000-499999" })] }, "Rule \"r1\": when.bin 4000-499999 must be a range of two digit strings of equal length", "rules[r1].when.bin"],
    ["a bin range backwards", { rules: [rule("r1", { bin: "500000-400000" })] }, "starts above its end", "rules[r1].when.bin"],
    ["then with both actions", { rules: [rule("r1", {}, { channels: ["ch_a"], split: [] })] }, "Rule \"r1\": then must be an object with exactly one of channels or split", "rules[r1].then"],
    ["then with neither", { rules: [rule("r1", {}, {})] }, "Rule \"r1\": then must be an object with exactly one of channels or split", "rules[r1].then"],
    ["empty channels", { rules: [rule("r1", {}, { channels: [] })] }, "Rule \"r1\": then.channels must be a non-empty list of channel ids", "rules[r1].then.channels"],
    ["an unknown channel", { rules: [rule("r1", {}, { channels: ["ch_a", "ch_zz"] })] }, "Rule \"r1\": then.channels names unknown channel ch_zz", "rules[r1].then.channels"],
    ["a disabled channel", { rules: [rule("r1", {}, { channels: ["ch_off"] })] }, "Rule \"r1\": then.channels names channel ch_off, which is disabled", "rules[r1].then.channels"],
    ["a channel of the other mode", { rules: [rule("r1", {}, { channels: ["ch_test"] })] }, "Rule \"r1\": then.channels names channel ch_test, a test-mode channel", "rules[r1].then.channels"],
    ["a channel twice", { rules: [rule("r1", {}, { channels: ["ch_a", "ch_a"] })] }, "Rule \"r1\": then.channels names channel ch_a twice", "rules[r1].then.channels"],
    ["a split not adding to 100", { rules: [rule("r1", {}, { split: [{ channel: "ch_a", percent: 60 }, { channel: "ch_b", percent: 30 }] })] }, "Rule \"r1\": then.split percents add up to 90, not 100", "rules[r1].then.split"],
    ["a split percent not whole", { rules: [rule("r1", {}, { split: [{ channel: "ch_a", percent: 50.5 }, { channel: "ch_b", percent: 49.5 }] })] }, "then.split percent of ch_a must be a whole number from 1 to 100", "rules[r1].then.split"],
    ["a split percent of zero", { rules: [rule("r1", {}, { split: [{ channel: "ch_a", percent: 100 }, { channel: "ch_b", percent: 0 }] })] }, "then.split percent of ch_b must be a whole number", "rules[r1].then.split"],
    ["a split naming a channel twice", { rules: [rule("r1", {}, { split: [{ channel: "ch_a", percent: 50 }, { channel: "ch_a", percent: 50 }] })] }, "then.split names channel ch_a twice", "rules[r1].then.split"],
    ["a split of an unknown channel", { rules: [rule("r1", {}, { split: [{ channel: "ch_zz", percent: 100 }] })] }, "then.split names unknown channel ch_zz", "rules[r1].then.split"],
    ["a default with a split", { default: { split: [{ channel: "ch_a", percent: 100 }] } }, "Default: must be an object {\"channels\": [...]}", "default"],
    ["a default of a disabled channel", { default: { channels: ["ch_off"] } }, "Default: channels names channel ch_off, which is disabled", "default.channels"],
    // A key present holds a value: null is not read as absent.
    ["rules null", { rules: null }, "Rules file: rules must be a list of rules", "rules"],
    ["strategy null", { strategy: null }, "Rules file: strategy must be one of", "strategy"],
    // A rule's id is recorded in each transaction's routing (an API Reference, at most 255 characters).
    ["a rule id over 255 characters", { rules: [rule("r".repeat(256), {})] }, "Rule #1: id must be at most 255 characters", "rules[0].id"],
    ["a rule id with a control character", { rules: [rule("a\nb", {})] }, "Rule #1: id must not contain control characters", "rules[0].id"],
    ["over 100 channels in a list", { rules: [rule("r1", {}, { channels: Array.from({ length: 101 }, (_, i) => `ch_${i}`) })] }, "Rule \"r1\": then.channels names 101 channels; at most 100", "rules[r1].then.channels"]
  ]
  for (const [what, input, message, field] of cases) {
    it(`refuses ${what}`, () => {
      const error = refused(input)
      expect(error.code).toBe("validation_failed")
      expect(error.message).toContain(message)
      expect(error.errors?.map((e) => e.field)).toContain(field)
    })
  }

  it("takes a rule id of 255 characters, quoted in its problems", () => {
    const id = "r".repeat(255)
    expect(parsed({ rules: [rule(id, {})] }).rules[0]!.id).toBe(id)
    expect(refused({ rules: [rule(id, { method: "cheque" })] }).message).toContain(`Rule "${id}": when.method`)
  })

  it("a pinned profile's rules may name only its pins, the refusal naming the rule and the pins", () => {
    const pins = { profile: "eu", channels: ["ch_a", "ch_b"] }
    const file = { rules: [rule("r1", {}, { split: [{ channel: "ch_a", percent: 50 }, { channel: "ch_c", percent: 50 }] })], default: { channels: ["ch_b"] } }
    const error = parseRules(file, LIVE, CHANNELS, pins)
    if (!(error instanceof ValidationFailed)) throw new Error("accepted")
    expect(error.message).toContain("Rule \"r1\": then.split names channel ch_c, which processing profile eu is not pinned to (pinned: ch_a, ch_b)")
    expect(error.errors?.map((e) => e.field)).toEqual(["rules[r1].then.split"])
    // Within the pins, or without pins (the account's own rules), the same file is taken.
    expect(parseRules({ ...file, rules: [rule("r1", {}, { channels: ["ch_b", "ch_a"] })] }, LIVE, CHANNELS, pins)).not.toBeInstanceOf(ValidationFailed)
    expect(parse(file)).not.toBeInstanceOf(ValidationFailed)
  })

  it("lists every problem of the file at once, each naming its rule", () => {
    const error = refused({ rules: [rule("a", { currency: "XYZ" }), rule("b", {}, { channels: ["ch_zz"] })], default: { channels: [] } })
    expect(error.errors?.map((e) => e.field)).toEqual(["rules[a].when.currency", "rules[b].then.channels", "default.channels"])
    expect(error.message).toMatch(/^Invalid routing rules: Rule "a": .*; Rule "b": .*; Default: /)
  })
})

describe("holds / matchRule (the first rule whose conditions all hold decides)", () => {
  const when = (conditions: unknown) => parsed({ rules: [rule("r", conditions)] }).rules[0]!.when

  it("matches lists as any-of, codes case-insensitively", () => {
    expect(holds(when({ currency: ["eur", "usd"] }), facts({ currency: "usd" }))).toBe(true)
    expect(holds(when({ currency: ["EUR"] }), facts())).toBe(false)
    expect(holds(when({ method: "card", country: "us" }), facts())).toBe(true)
    expect(holds(when({}), facts())).toBe(true)
  })

  it("compares amounts exactly, inclusively, in the payment's currency (no floats)", () => {
    const range = when({ amount: { min: "10.50", max: "20" } })
    expect(holds(range, facts({ amount: 1049 }))).toBe(false)
    expect(holds(range, facts({ amount: 1050 }))).toBe(true)
    expect(holds(range, facts({ amount: 2000 }))).toBe(true)
    expect(holds(range, facts({ amount: 2001 }))).toBe(false)
    // JPY has no minor units: 1050 is 1050 yen; BHD has three.
    expect(holds(range, facts({ currency: "JPY", amount: 15 }))).toBe(true)
    expect(holds(range, facts({ currency: "BHD", amount: 10_499 }))).toBe(false)
    expect(holds(range, facts({ currency: "BHD", amount: 10_500 }))).toBe(true)
    // A bound finer than the currency is still exact: 0.1 + 0.2 is not 0.30000000000000004 here.
    expect(holds(when({ amount: { max: "0.3" } }), facts({ amount: 30 }))).toBe(true)
    expect(holds(when({ amount: { min: "0.305" } }), facts({ amount: 30 }))).toBe(false)
    expect(holds(when({ amount: { max: "90071992547409.91" } }), facts({ amount: Number.MAX_SAFE_INTEGER }))).toBe(true)
    expect(holds(when({ amount: { max: "90071992547409.90" } }), facts({ amount: Number.MAX_SAFE_INTEGER }))).toBe(false)
  })

  it("matches BINs by prefix or by a range over the card's first digits", () => {
    expect(holds(when({ bin: "4242" }), facts())).toBe(true)
    expect(holds(when({ bin: "4000-4199" }), facts())).toBe(false)
    expect(holds(when({ bin: ["4000-4199", "424000-424299"] }), facts())).toBe(true)
    expect(holds(when({ bin: "42424243" }), facts())).toBe(false)
    expect(holds(when({ bin: "42424242" }), facts({ card: { ...CARD, bin: "424242" } }))).toBe(false)
  })

  it("a card condition never holds when the card's facts are unknown", () => {
    for (const condition of [{ card_brand: "visa" }, { card_funding: "credit" }, { issuer_country: "US" }, { bin: "4" }]) {
      expect(holds(when(condition), facts())).toBe(true)
      expect(holds(when(condition), facts({ card: null }))).toBe(false)
      expect(holds(when(condition), facts({ card: { bin: null, brand: null, funding: null, issuer_country: null } }))).toBe(false)
    }
    expect(holds(when({ card_brand: ["mastercard", "VISA"] }), facts({ card: { ...CARD, brand: "Visa" } }))).toBe(true)
  })

  it("the first rule that holds decides; none leaves the default", () => {
    const set = parsed({
      rules: [rule("eur", { currency: "EUR" }), rule("visa", { card_brand: "visa" }), rule("all", {})],
      default: { channels: ["ch_b"] }
    })
    expect(matchRule(set, facts({ currency: "EUR" }))?.id).toBe("eur")
    expect(matchRule(set, facts())?.id).toBe("visa")
    expect(matchRule(set, facts({ card: null }))?.id).toBe("all")
    expect(matchRule({ ...set, rules: set.rules.slice(0, 2) }, facts({ card: null }))).toBeUndefined()
  })
})
