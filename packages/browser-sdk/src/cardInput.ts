/**
 * What the fields page checks before anything leaves the browser (spec: validation_error is
 * field-level, before leaving the browser): the number (brand, length, Luhn: CardRules, shared with
 * the server), the expiry (MM / YY, not past) and the CVC length for the brand.
 */
import { cvcLength, type CardRuleBrand, detectBrand, digitsOnly, luhnValid, validLength } from "@tender/domain/cards/CardRules"

export type FieldName = "number" | "expiry" | "cvc"
export type CardErrorCode = "invalid_number" | "invalid_expiry" | "invalid_cvc"

export interface FieldState {
  readonly empty: boolean
  readonly complete: boolean
  /** Set once the field's content cannot become valid by typing more (or it was left incomplete). */
  readonly error?: CardErrorCode | undefined
}

export const ERROR_OF: Record<FieldName, CardErrorCode> = {
  number: "invalid_number",
  expiry: "invalid_expiry",
  cvc: "invalid_cvc"
}

const MAX_LENGTH: Partial<Record<CardRuleBrand, number>> = { amex: 15, mastercard: 16 }

/** The longest number a brand can have: where typing more cannot help. */
export const maxNumberLength = (brand: CardRuleBrand): number => MAX_LENGTH[brand] ?? 19

/** Groups of four (amex 4-6-5), as printed on the card. */
export const formatNumber = (input: string): string => {
  const digits = input.replace(/\D/g, "").slice(0, 19)
  const brand = detectBrand(digits)
  const groups = brand === "amex" ? [4, 6, 5] : [4, 4, 4, 4, 3]
  const parts: Array<string> = []
  let at = 0
  for (const size of groups) {
    if (at >= digits.length) break
    parts.push(digits.slice(at, at + size))
    at += size
  }
  return parts.join(" ")
}

/** `MM / YY` as typed: a leading digit above 1 is a month (`4` → `04 / `). */
export const formatExpiry = (input: string, deleting = false): string => {
  let digits = input.replace(/\D/g, "").slice(0, 4)
  if (digits.length === 1 && Number(digits) > 1) digits = `0${digits}`
  if (digits.length < 2) return digits
  if (digits.length === 2 && deleting) return digits
  return `${digits.slice(0, 2)} / ${digits.slice(2)}`
}

export const parseExpiry = (value: string): { month: number; year: number } | undefined => {
  const match = /^\s*(\d{2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(value)
  if (match === null) return undefined
  const month = Number(match[1])
  const year = match[2]!.length === 2 ? 2000 + Number(match[2]) : Number(match[2])
  return { month, year }
}

export const numberState = (value: string, final: boolean): FieldState => {
  const digits = digitsOnly(value)
  if (digits.length === 0) return { empty: true, complete: false, error: final ? "invalid_number" : undefined }
  const brand = detectBrand(digits)
  const complete = /^\d+$/.test(digits) && validLength(brand, digits) && luhnValid(digits)
  if (complete) return { empty: false, complete: true }
  const hopeless = !/^\d+$/.test(digits) || digits.length >= maxNumberLength(brand)
  return { empty: false, complete: false, error: final || hopeless ? "invalid_number" : undefined }
}

export const expiryState = (value: string, now: Date, final: boolean): FieldState => {
  if (value.trim().length === 0) return { empty: true, complete: false, error: final ? "invalid_expiry" : undefined }
  const parsed = parseExpiry(value)
  if (parsed === undefined) {
    const typedAll = value.replace(/\D/g, "").length >= 4
    return { empty: false, complete: false, error: final || typedAll ? "invalid_expiry" : undefined }
  }
  const currentYear = now.getUTCFullYear()
  const currentMonth = now.getUTCMonth() + 1
  const valid = parsed.month >= 1 && parsed.month <= 12 &&
    (parsed.year > currentYear || (parsed.year === currentYear && parsed.month >= currentMonth)) &&
    parsed.year <= currentYear + 50
  return valid ? { empty: false, complete: true } : { empty: false, complete: false, error: "invalid_expiry" }
}

export const cvcState = (value: string, brand: CardRuleBrand, final: boolean): FieldState => {
  if (value.length === 0) return { empty: true, complete: false, error: final ? "invalid_cvc" : undefined }
  const length = cvcLength(brand)
  if (new RegExp(`^\\d{${length}}$`).test(value)) return { empty: false, complete: true }
  const hopeless = !/^\d*$/.test(value) || value.length > length
  return { empty: false, complete: false, error: final || hopeless ? "invalid_cvc" : undefined }
}

/** The first field's error, in form order: what `change` and a refused collect report. */
export const firstError = (states: Partial<Record<FieldName, FieldState>>): { field: FieldName; code: CardErrorCode } | undefined => {
  for (const field of ["number", "expiry", "cvc"] as const) {
    const code = states[field]?.error
    if (code !== undefined) return { field, code }
  }
  return undefined
}

export { detectBrand, digitsOnly }
