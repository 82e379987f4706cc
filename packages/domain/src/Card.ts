/**
 * Card number facts that need no I/O: Luhn, brand detection, funding of known BINs. The rules a
 * browser also applies live in CardRules.ts (no imports, so the secure card fields bundle them).
 */

import { Schema } from "effect"

export const CardBrand = Schema.Literals(["visa", "mastercard", "amex", "discover", "diners", "jcb", "unionpay", "unknown"])
export type CardBrand = typeof CardBrand.Type
export const CardFunding = Schema.Literals(["credit", "debit", "prepaid", "unknown"])
export type CardFunding = typeof CardFunding.Type

export { binOf, cvcLength, detectBrand, digitsOnly, last4Of, luhnValid, validLength } from "./CardRules.ts"

/**
 * Funding by BIN. Only the sandbox's documented BINs are known here; a live BIN table would be an
 * adapter concern. The sandbox's visa debit card is the one debit entry.
 */
const FUNDING_BY_NUMBER: Record<string, CardFunding> = {
  "4000056655665556": "debit",
  "4242424242424242": "credit",
  "5555555555554444": "credit",
  "378282246310005": "credit"
}

export const fundingOf = (number: string): CardFunding => FUNDING_BY_NUMBER[number] ?? "unknown"
