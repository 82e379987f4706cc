/**
 * Card number facts that need no I/O: Luhn, brand detection, funding of known BINs. The rules a
 * browser also applies live in CardRules.ts (no imports, so the secure card fields bundle them).
 */

import { Schema } from "effect"

/** A card's brand, as detected from its number (`unknown` when no rule matches). */
export const CardBrand = Schema.Literals(["visa", "mastercard", "amex", "discover", "diners", "jcb", "unionpay", "unknown"])
/** A card's brand. */
export type CardBrand = typeof CardBrand.Type
/** A card's funding type, known for the sandbox's test cards, else `unknown`. */
export const CardFunding = Schema.Literals(["credit", "debit", "prepaid", "unknown"])
/** A card's funding type. */
export type CardFunding = typeof CardFunding.Type

export { binOf, cvcLength, detectBrand, digitsOnly, last4Of, luhnValid, validLength } from "./CardRules.ts"

/**
 * contract.md's sandbox card table: the only numbers test mode takes, and numbers live mode refuses
 * (issue 21, item 7). What each does is the sandbox's (PaymentProviderSandbox.ts), and a test-mode
 * channel's adapter asks its provider's test environment for the same.
 */
export const TEST_CARDS = [
  "4242424242424242",
  "5555555555554444",
  "378282246310005",
  "4000056655665556",
  "4000000000000044",
  "4000000000000002",
  "4000000000009995",
  "4000000000000069",
  "4000000000003220",
  "4000000000000259",
  "4000000000000341",
  "4000000000000119"
] as const
/** One of the sandbox's test card numbers. */
export type TestCard = typeof TEST_CARDS[number]

/** Whether the number is one of the sandbox's test cards. */
export const isTestCard = (number: string): number is TestCard => (TEST_CARDS as ReadonlyArray<string>).includes(number)

/**
 * Why a valid card number is refused in an account's mode (contract.md, Sandbox), or `undefined`:
 * test mode takes the test cards only, live mode never takes one.
 */
export const modeRefusal = (mode: "test" | "live", number: string): string | undefined =>
  mode === "test"
    ? (isTestCard(number) ? undefined : "test mode takes test cards only")
    : (isTestCard(number) ? "live mode does not take test cards" : undefined)

/**
 * Funding by BIN. Only the sandbox's documented BINs are known here; a live BIN table would be an
 * adapter concern. The sandbox's visa debit card is the one debit entry.
 */
const FUNDING_BY_NUMBER: Partial<Record<TestCard, CardFunding>> = {
  "4000056655665556": "debit",
  "4242424242424242": "credit",
  "5555555555554444": "credit",
  "378282246310005": "credit"
}

/** The funding type of a card number: the test card's, else `unknown`. */
export const fundingOf = (number: string): CardFunding => (isTestCard(number) ? FUNDING_BY_NUMBER[number] : undefined) ?? "unknown"
