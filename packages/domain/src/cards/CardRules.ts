/**
 * The card number rules shared by the server (CardTokens) and the secure card fields in the browser
 * (packages/browser-sdk bundles this file): no imports, so the fields script stays small.
 */

/** The brands Tender names (Card.CardBrand is the same list as a schema). */
export type CardRuleBrand = "visa" | "mastercard" | "amex" | "discover" | "diners" | "jcb" | "unionpay" | "unknown"

/** The number without the spaces and dashes people type. */
export const digitsOnly = (input: string): string => input.replace(/[\s-]/g, "")

/** Whether the number is 12 to 19 digits and passes the Luhn check. */
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

/** The brand the number's prefix belongs to, or `unknown`. */
export const detectBrand = (number: string): CardRuleBrand => {
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
export const cvcLength = (brand: CardRuleBrand): number => (brand === "amex" ? 4 : 3)

/** Valid lengths per brand (unknown brands accept the ISO range). */
export const validLength = (brand: CardRuleBrand, number: string): boolean => {
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

/** Six digits for 15-digit (amex) numbers, eight for 16+ digits (the current BIN length rule). */
export const binOf = (number: string): string => number.slice(0, number.length >= 16 ? 8 : 6)

/** The last four digits: what a card is shown by. */
export const last4Of = (number: string): string => number.slice(-4)
