/** Card number facts that need no I/O: Luhn, brand detection, funding of known BINs. */

import { Schema } from "effect"

export const CardBrand = Schema.Literals(["visa", "mastercard", "amex", "discover", "diners", "jcb", "unionpay", "unknown"])
export type CardBrand = typeof CardBrand.Type
export const CardFunding = Schema.Literals(["credit", "debit", "prepaid", "unknown"])
export type CardFunding = typeof CardFunding.Type

export const digitsOnly = (input: string): string => input.replace(/[\s-]/g, "")

export const luhnValid = (number: string): boolean => {
  if (!/^\d{12,19}$/.test(number)) return false
  let sum = 0
  let double = false
  for (let i = number.length - 1; i >= 0; i--) {
    let d = number.charCodeAt(i) - 48
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return sum % 10 === 0
}

const inRange = (number: string, digits: number, from: number, to: number) => {
  const n = Number(number.slice(0, digits))
  return n >= from && n <= to
}

export const detectBrand = (number: string): CardBrand => {
  if (/^3[47]/.test(number)) return "amex"
  if (/^4/.test(number)) return "visa"
  if (inRange(number, 2, 51, 55) || inRange(number, 4, 2221, 2720)) return "mastercard"
  if (/^(6011|65|64[4-9])/.test(number)) return "discover"
  if (/^(36|30[0-5]|38|39)/.test(number)) return "diners"
  if (inRange(number, 4, 3528, 3589)) return "jcb"
  if (/^62/.test(number)) return "unionpay"
  return "unknown"
}

/** CVC length the brand expects: 4 for amex, 3 otherwise. */
export const cvcLength = (brand: CardBrand): number => (brand === "amex" ? 4 : 3)

/** Valid lengths per brand (unknown brands accept the ISO range). */
export const validLength = (brand: CardBrand, number: string): boolean => {
  switch (brand) {
    case "amex":
      return number.length === 15
    case "visa":
      return number.length === 13 || number.length === 16 || number.length === 19
    case "mastercard":
      return number.length === 16
    case "diners":
      return number.length >= 14 && number.length <= 19
    default:
      return number.length >= 12 && number.length <= 19
  }
}

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

/** Six digits for 15-digit (amex) numbers, eight for 16+ digits (the current BIN length rule). */
export const binOf = (number: string): string => number.slice(0, number.length >= 16 ? 8 : 6)

export const last4Of = (number: string): string => number.slice(-4)
