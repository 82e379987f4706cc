/**
 * Which routing rule a payment's facts select (issue 27, contract.md "Routing rules"): the first
 * whose conditions all hold (`matchRule`), over rules RoutingRules.parseRules checked and
 * normalised. Pure. Codes compare normalised (methods, brands and funding lower case; currencies
 * and countries upper case); amounts exactly, as decimals in the payment's currency, never as floats.
 */
import { toDecimalString } from "../kernel/Money.ts"
import type { AmountRange, BinMatch, Conditions, RouteFacts, Rule, RuleSet } from "./RoutingModel.ts"

/** Compares two non-negative decimal strings exactly (as integers of their common decimals): below zero when `a` < `b`. */
export const compareDecimals = (a: string, b: string): number => {
  const places = Math.max(a.split(".")[1]?.length ?? 0, b.split(".")[1]?.length ?? 0)
  const scaled = (decimal: string) => {
    const [whole, fraction = ""] = decimal.split(".")
    return BigInt(whole! + fraction.padEnd(places, "0"))
  }
  const [x, y] = [scaled(a), scaled(b)]
  return x < y ? -1 : x > y ? 1 : 0
}

const anyOf = (list: ReadonlyArray<string> | null, value: string | null | undefined) =>
  list === null || (value != null && list.includes(value))

/** Whether `minor` units of `currency` lie within the range: the amount as its exact decimal string, compared as decimals. */
const withinAmount = (range: AmountRange, minor: number, currency: string): boolean => {
  const amount = toDecimalString(minor, currency)
  return (range.min === null || compareDecimals(amount, range.min) >= 0) && (range.max === null || compareDecimals(amount, range.max) <= 0)
}

/** Whether a card's BIN matches: the prefix, or its first digits (as many as the range's ends) within the range. */
const binMatches = (match: BinMatch, bin: string): boolean => {
  if ("prefix" in match) return bin.startsWith(match.prefix)
  if (bin.length < match.from.length) return false
  // Equal-length digit strings compare as their numbers do.
  const head = bin.slice(0, match.from.length)
  return head >= match.from && head <= match.to
}

/**
 * Whether every condition holds for the payment. A card condition does not hold when the card's
 * facts (or that fact) are unknown: a rule for Visa cards never catches a payment of unknown brand.
 */
export const holds = (when: Conditions, facts: RouteFacts): boolean => {
  const card = facts.card
  return anyOf(when.method, facts.method.toLowerCase()) &&
    anyOf(when.currency, facts.currency.toUpperCase()) &&
    anyOf(when.country, facts.country.toUpperCase()) &&
    (when.amount === null || withinAmount(when.amount, facts.amount, facts.currency.toUpperCase())) &&
    anyOf(when.card_brand, card?.brand?.toLowerCase()) &&
    anyOf(when.card_funding, card?.funding?.toLowerCase()) &&
    anyOf(when.issuer_country, card?.issuer_country?.toUpperCase()) &&
    (when.bin === null || (card?.bin != null && when.bin.some((m) => binMatches(m, card.bin!))))
}

/** The first rule whose conditions all hold; none: the default decides. */
export const matchRule = (set: RuleSet, facts: RouteFacts): Rule | undefined => set.rules.find((rule) => holds(rule.when, facts))
