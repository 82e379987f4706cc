/**
 * An account's routing rules (issue 27, contract.md "Routing rules"): the file an operator writes,
 * parsed and checked against the account's channels (`parseRules`, refused whole with every
 * problem, each naming its rule). Which rule a payment's facts select is RuleMatch.ts's. Pure.
 * Codes are compared normalised (methods, brands and funding lower case; currencies and countries
 * upper case); amounts exactly, as decimals in the payment's currency, never as floats.
 */
import type { AccountMode } from "../accounts/Account.ts"
import { CardBrand, CardFunding } from "../cards/Card.ts"
import { isCountry } from "../kernel/Countries.ts"
import { type FieldError, ValidationFailed } from "../kernel/Errors.ts"
import { MAX_LIST, MAX_REFERENCE } from "../kernel/Limits.ts"
import { isCurrency } from "../kernel/Money.ts"
import { hasControl } from "../kernel/Text.ts"
import { findMethod } from "../payments/PaymentMethods.ts"
import type { Channel } from "./Channel.ts"
import type { AmountRange, BinMatch, Conditions, Rule, RuleAction, RuleSet, Strategy } from "./RoutingModel.ts"
import { compareDecimals } from "./RuleMatch.ts"

/** The strategies a rules file may name; absent, `success_rate` (contract.md). */
export const STRATEGIES: ReadonlyArray<Strategy> = ["ordered", "success_rate"]

/** The conditions a rule's `when` may test (contract.md); any other key is refused. */
export const CONDITION_KEYS = ["method", "currency", "country", "amount", "card_brand", "card_funding", "issuer_country", "bin"] as const

/** Card conditions: they do not hold when the payment's card facts are unknown. */
const KNOWN_BRANDS = CardBrand.literals.filter((b) => b !== "unknown")
const KNOWN_FUNDING = CardFunding.literals.filter((f) => f !== "unknown")

const DECIMAL = /^\d+(\.\d+)?$/
const DIGITS = /^\d{1,8}$/

type Json = Record<string, unknown>
const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** Where a problem is, for its message (`Rule "r1"`, `Default`, `Rules file`) and its `errors[]` field prefix. */
interface Place {
  readonly label: string
  readonly field: string
}

/** Collects problems: each message names its place, so the operator finds the rule at fault. */
class Problems {
  readonly list: Array<FieldError> = []
  readonly messages: Array<string> = []
  add(place: Place, field: string, message: string) {
    this.list.push({ field: field === "" ? place.field : place.field === "" ? field : `${place.field}.${field}`, message })
    this.messages.push(`${place.label}: ${field === "" ? "" : `${field} `}${message}`)
  }
}

const unknownKeys = (value: Json, allowed: ReadonlyArray<string>, place: Place, problems: Problems, what: string, prefix = "") => {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) problems.add(place, `${prefix}${key}`, `is not a known ${what} (known: ${allowed.join(", ")})`)
  }
}

/** A list of codes (one code alone stands for a list of one), normalised, deduplicated, each checked. */
const codeList = (
  value: unknown,
  field: string,
  place: Place,
  problems: Problems,
  normalise: (code: string) => string,
  problemOf: (code: string) => string | undefined
): ReadonlyArray<string> | null => {
  const raw = typeof value === "string" ? [value] : value
  if (!Array.isArray(raw) || raw.length === 0 || raw.some((c) => typeof c !== "string" || c.trim() === "")) {
    problems.add(place, field, "must be a code or a non-empty list of codes")
    return null
  }
  const codes = [...new Set((raw as Array<string>).map((c) => normalise(c.trim())))]
  for (const code of codes) {
    const problem = problemOf(code)
    if (problem !== undefined) problems.add(place, field, problem)
  }
  return codes
}

const amountOf = (value: unknown, place: Place, problems: Problems): AmountRange | null => {
  if (!isObject(value) || (value.min === undefined && value.max === undefined)) {
    problems.add(place, "when.amount", "must be an object with min and/or max (decimal strings)")
    return null
  }
  unknownKeys(value, ["min", "max"], place, problems, "amount bound", "when.amount.")
  const bound = (key: "min" | "max"): string | null => {
    const v = value[key]
    if (v === undefined) return null
    if (typeof v !== "string" || !DECIMAL.test(v)) {
      problems.add(place, `when.amount.${key}`, "must be a decimal string such as \"10.00\"")
      return null
    }
    return v
  }
  const min = bound("min")
  const max = bound("max")
  if (min !== null && max !== null && compareDecimals(min, max) > 0) problems.add(place, "when.amount", `min ${min} is above max ${max}`)
  return { min, max }
}

const binOf = (code: string): BinMatch | string => {
  const range = code.split("-")
  if (range.length === 1) return DIGITS.test(code) ? { prefix: code } : "must be digits (a prefix of 1 to 8) or a range such as 400000-499999"
  const [from, to] = range as [string, string]
  if (range.length !== 2 || !DIGITS.test(from) || !DIGITS.test(to) || from.length !== to.length) {
    return "must be a range of two digit strings of equal length (1 to 8), such as 400000-499999"
  }
  return from <= to ? { from, to } : `range ${code} starts above its end`
}

const conditionsOf = (value: unknown, place: Place, problems: Problems): Conditions => {
  const none: Conditions = {
    method: null, currency: null, country: null, amount: null, card_brand: null, card_funding: null, issuer_country: null, bin: null
  }
  if (value === undefined) return none
  if (!isObject(value)) {
    problems.add(place, "when", "must be an object of conditions")
    return none
  }
  unknownKeys(value, CONDITION_KEYS, place, problems, "condition", "when.")
  const list = (key: Exclude<typeof CONDITION_KEYS[number], "amount" | "bin">, lower: boolean, check: (code: string) => string | undefined) =>
    value[key] === undefined
      ? null
      : codeList(value[key], `when.${key}`, place, problems, (c) => (lower ? c.toLowerCase() : c.toUpperCase()), check)
  const country = (c: string) => (isCountry(c) ? undefined : `${c} is not an ISO 3166-1 alpha-2 country`)
  const bins: Array<BinMatch> = []
  const binCodes = value.bin === undefined ? null : codeList(value.bin, "when.bin", place, problems, (c) => c, (c) => {
    const bin = binOf(c)
    if (typeof bin === "string") return `${c} ${bin}`
    bins.push(bin)
    return undefined
  })
  return {
    method: list("method", true, (c) => (findMethod(c) === undefined ? `${c} is not a payment method` : undefined)),
    currency: list("currency", false, (c) => (isCurrency(c) ? undefined : `${c} is not an ISO 4217 currency`)),
    country: list("country", false, country),
    amount: value.amount === undefined ? null : amountOf(value.amount, place, problems),
    card_brand: list("card_brand", true, (c) =>
      (KNOWN_BRANDS as ReadonlyArray<string>).includes(c) ? undefined : `${c} is not a card brand (${KNOWN_BRANDS.join(", ")})`),
    card_funding: list("card_funding", true, (c) =>
      (KNOWN_FUNDING as ReadonlyArray<string>).includes(c) ? undefined : `${c} is not a card funding (${KNOWN_FUNDING.join(", ")})`),
    issuer_country: list("issuer_country", false, country),
    bin: binCodes === null ? null : bins
  }
}

/**
 * The channels a processing profile is pinned to (Account processing_profiles[].channels), when the
 * rules are that profile's and it pins some: its payments can use no other, so its rules may name no other.
 */
export interface ProfilePins {
  readonly profile: string
  readonly channels: ReadonlyArray<string>
}

/** Why a channel cannot be named by the rules: unknown, disabled, of the other mode, or outside the profile's pins. */
const channelProblem = (
  id: string,
  account: { readonly mode: AccountMode },
  channels: ReadonlyArray<Channel>,
  pins: ProfilePins | null
): string | undefined => {
  const channel = channels.find((c) => c.id === id)
  if (channel === undefined) return `names unknown channel ${id}`
  if (channel.status !== "enabled") return `names channel ${id}, which is disabled`
  if (channel.mode !== account.mode) return `names channel ${id}, a ${channel.mode}-mode channel of this ${account.mode}-mode account`
  if (pins !== null && !pins.channels.includes(id)) {
    return `names channel ${id}, which processing profile ${pins.profile} is not pinned to (pinned: ${pins.channels.join(", ")})`
  }
  return undefined
}

/**
 * A list of channel ids: non-empty, at most MAX_LIST (the candidates a transaction records are a
 * bounded list of the API: RoutingView), each a usable channel of the account, none twice.
 */
const channelList = (value: unknown, field: string, place: Place, problems: Problems, check: (id: string) => string | undefined) => {
  if (!Array.isArray(value) || value.length === 0 || value.some((c) => typeof c !== "string")) {
    problems.add(place, field, "must be a non-empty list of channel ids")
    return []
  }
  if (value.length > MAX_LIST) {
    problems.add(place, field, `names ${value.length} channels; at most ${MAX_LIST}`)
    return []
  }
  const ids = value as Array<string>
  ids.forEach((id, i) => {
    const problem = check(id)
    if (problem !== undefined) problems.add(place, field, problem)
    if (ids.indexOf(id) !== i) problems.add(place, field, `names channel ${id} twice`)
  })
  return ids
}

const actionOf = (value: unknown, place: Place, problems: Problems, check: (id: string) => string | undefined): RuleAction => {
  if (!isObject(value) || (value.channels === undefined) === (value.split === undefined)) {
    problems.add(place, "then", "must be an object with exactly one of channels or split")
    return { _tag: "Channels", channels: [] }
  }
  unknownKeys(value, ["channels", "split"], place, problems, "action", "then.")
  if (value.channels !== undefined) return { _tag: "Channels", channels: channelList(value.channels, "then.channels", place, problems, check) }
  const split = value.split
  if (!Array.isArray(split) || split.length === 0 || !split.every(isObject)) {
    problems.add(place, "then.split", "must be a non-empty list of {channel, percent}")
    return { _tag: "Split", split: [] }
  }
  const entries = (split as Array<Json>).map((entry) => {
    unknownKeys(entry, ["channel", "percent"], place, problems, "split key", "then.split.")
    const percent = entry.percent
    if (typeof percent !== "number" || !Number.isInteger(percent) || percent <= 0 || percent > 100) {
      problems.add(place, "then.split", `percent of ${String(entry.channel)} must be a whole number from 1 to 100`)
    }
    return { channel: typeof entry.channel === "string" ? entry.channel : "", percent: typeof percent === "number" ? percent : 0 }
  })
  channelList(entries.map((e) => e.channel).filter((c) => c !== ""), "then.split", place, problems, check)
  if (entries.some((e) => e.channel === "")) problems.add(place, "then.split", "every entry must name its channel")
  const total = entries.reduce((sum, e) => sum + e.percent, 0)
  if (total !== 100) problems.add(place, "then.split", `percents add up to ${total}, not 100`)
  return { _tag: "Split", split: entries }
}

/** Why a rule's id cannot be recorded (a transaction's `routing.rule` is a Reference of the API), or undefined. */
const idProblem = (id: unknown): string | undefined => {
  if (typeof id !== "string" || id.trim() === "") return "is required: a non-empty string unique in the file"
  if (id.length > MAX_REFERENCE) return `must be at most ${MAX_REFERENCE} characters`
  if (hasControl(id)) return "must not contain control characters"
  return undefined
}

/**
 * A rules file checked against the account's channels (and, for a profile's rules, its pins): the
 * rule set, or `validation_failed` with every problem found, each message naming its rule
 * (`Rule "<id>": …`, `Rule #n` when the id itself is at fault, `Default: …`, `Rules file: …`) and
 * each `errors[]` field its place (`rules[<id>].then.channels`). Nothing of a refused file applies.
 * A key present must hold a value: `"rules": null` is refused, not read as absent.
 */
export const parseRules = (
  input: unknown,
  account: { readonly mode: AccountMode },
  channels: ReadonlyArray<Channel>,
  pins: ProfilePins | null = null
): RuleSet | ValidationFailed => {
  const problems = new Problems()
  const file: Place = { label: "Rules file", field: "" }
  const check = (id: string) => channelProblem(id, account, channels, pins)
  if (!isObject(input)) {
    problems.add(file, "", "must be a JSON object {\"rules\": [...], \"default\": {...}, \"strategy\": ...}")
    return refusal(problems)
  }
  unknownKeys(input, ["rules", "default", "strategy"], file, problems, "key")
  const strategy = input.strategy !== undefined ? input.strategy : "success_rate"
  if (typeof strategy !== "string" || !(STRATEGIES as ReadonlyArray<unknown>).includes(strategy)) {
    problems.add(file, "strategy", `must be one of ${STRATEGIES.join(", ")}`)
  }
  const rules: Array<Rule> = []
  const raw = input.rules !== undefined ? input.rules : []
  if (!Array.isArray(raw)) problems.add(file, "rules", "must be a list of rules")
  else {
    const seen = new Set<string>()
    raw.forEach((rule: unknown, i) => {
      const problem = isObject(rule) ? idProblem(rule.id) : undefined
      // An id at fault is not quoted (it may be long, or hold control characters): the rule's number names it.
      const id = isObject(rule) && problem === undefined ? rule.id as string : undefined
      const place: Place = id !== undefined ? { label: `Rule "${id}"`, field: `rules[${id}]` } : { label: `Rule #${i + 1}`, field: `rules[${i}]` }
      if (!isObject(rule)) return problems.add(place, "", "must be an object {id, when, then}")
      if (id === undefined) problems.add(place, "id", problem!)
      else if (seen.has(id)) problems.add(place, "id", "is used by an earlier rule")
      else seen.add(id)
      unknownKeys(rule, ["id", "when", "then"], place, problems, "rule key")
      rules.push({ id: id ?? "", when: conditionsOf(rule.when, place, problems), then: actionOf(rule.then, place, problems, check) })
    })
  }
  let defaults: ReadonlyArray<string> | null = null
  if (input.default !== undefined) {
    const place: Place = { label: "Default", field: "default" }
    if (!isObject(input.default) || input.default.channels === undefined) {
      problems.add(place, "", "must be an object {\"channels\": [...]} (a split belongs in a rule)")
    } else {
      unknownKeys(input.default, ["channels"], place, problems, "default key")
      defaults = channelList(input.default.channels, "channels", place, problems, check)
    }
  }
  if (problems.list.length > 0) return refusal(problems)
  return { rules, default: defaults, strategy: strategy as Strategy }
}

const refusal = (problems: Problems) =>
  new ValidationFailed({ message: `Invalid routing rules: ${problems.messages.join("; ")}`, errors: problems.list })
