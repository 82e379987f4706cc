/**
 * Money is exact: integer minor units per the currency's ISO 4217 exponent. Requests carry decimal
 * strings, responses JSON numbers; no floating point arithmetic is ever done on amounts.
 */
import { Option } from "effect"
import { MAX_AMOUNT_DIGITS } from "./Limits.ts"

/** Exponents that differ from the default of 2 (ISO 4217). */
const EXPONENT_OVERRIDES: Record<string, number> = {
  BIF: 0, CLP: 0, COP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0,
  UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4
}

/** Active ISO 4217 codes accepted by the API. */
export const CURRENCIES: ReadonlySet<string> = new Set([
  "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BGN", "BHD", "BIF",
  "BMD", "BND", "BOB", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHF", "CLF", "CLP", "CNY", "COP",
  "CRC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL",
  "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IQD", "IRR", "ISK",
  "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD",
  "LSL", "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN", "MYR", "MZN",
  "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "PYG", "QAR", "RON",
  "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC",
  "SYP", "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "UGX", "USD", "UYI", "UYU",
  "UYW", "UZS", "VES", "VND", "VUV", "WST", "XAF", "XCD", "XOF", "XPF", "YER", "ZAR", "ZMW", "ZWL"
])

/** Whether the code is an active ISO 4217 currency the API accepts. */
export const isCurrency = (code: string): boolean => CURRENCIES.has(code)

/** The ISO 4217 exponent (number of minor-unit digits) of a currency. */
export const exponent = (currency: string): number => EXPONENT_OVERRIDES[currency] ?? 2

/** The largest exponent of any currency: what an amount in whole units may gain in digits as minor units. */
export const MAX_EXPONENT = Math.max(2, ...Object.values(EXPONENT_OVERRIDES))

const DECIMAL = /^\d+(\.\d+)?$/
/** A well-formed decimal with a minus sign: not positive, rather than not a decimal at all. */
const NEGATIVE = /^-\d+(\.\d+)?$/

/** Why an amount string was refused. */
export type AmountError = "format" | "not_positive" | "too_many_decimals" | "too_large"

/**
 * Parses a request amount (`^\d+(\.\d+)?$`, positive, at most the currency's exponent of decimals)
 * into integer minor units.
 */
export const parseAmount = (input: string, currency: string): { readonly minor: number } | { readonly error: AmountError } => {
  if (NEGATIVE.test(input)) return { error: "not_positive" }
  if (!DECIMAL.test(input)) return { error: "format" }
  const exp = exponent(currency)
  const [whole, fraction = ""] = input.split(".")
  if (fraction.length > exp) return { error: "too_many_decimals" }
  const digits = (whole + fraction.padEnd(exp, "0")).replace(/^0+(?=\d)/, "")
  if (digits.length > MAX_AMOUNT_DIGITS) return { error: "too_large" }
  const minor = Number(digits)
  if (minor <= 0) return { error: "not_positive" }
  return { minor }
}

/**
 * Parses an amount of no currency in particular, read in every currency (an account-wide default):
 * whole units (decimals only when zero, as JPY has none), and digits few enough that it is exact in
 * every currency's minor units (`wholeToMinor`).
 */
export const parseWholeUnits = (input: string): { readonly units: number } | { readonly error: AmountError } => {
  if (NEGATIVE.test(input)) return { error: "not_positive" }
  if (!DECIMAL.test(input)) return { error: "format" }
  const [whole, fraction = ""] = input.split(".")
  if (/[^0]/.test(fraction)) return { error: "too_many_decimals" }
  const digits = whole!.replace(/^0+(?=\d)/, "")
  if (digits.length > MAX_AMOUNT_DIGITS - MAX_EXPONENT) return { error: "too_large" }
  const units = Number(digits)
  return units <= 0 ? { error: "not_positive" } : { units }
}

/** `parseWholeUnits`'s refusals, in words. */
export const wholeUnitsErrorMessage = (error: AmountError): string => {
  switch (error) {
    case "too_many_decimals":
      return "must be a whole amount when no currency is named: it applies in every currency, some without minor units (JPY); name a currency for its decimals"
    case "too_large":
      return `must be at most ${MAX_AMOUNT_DIGITS - MAX_EXPONENT} digits when no currency is named`
    default:
      return amountErrorMessage(error, "USD")
  }
}

/** Whole units of `currency` in its minor units: exact for what `parseWholeUnits` takes. */
export const wholeToMinor = (units: number, currency: string): number => units * 10 ** exponent(currency)

/** `parseAmount`'s refusals, in words (naming the currency's decimals). */
export const amountErrorMessage = (error: AmountError, currency: string): string => {
  switch (error) {
    case "format":
      return "must be a decimal string such as \"10.50\""
    case "not_positive":
      return "must be greater than zero"
    case "too_many_decimals":
      return `must have at most ${exponent(currency)} decimal places for ${currency}`
    case "too_large":
      return `must be at most ${MAX_AMOUNT_DIGITS} digits in minor units (${"9".repeat(MAX_AMOUNT_DIGITS)})`
  }
}

/** Minor units → the response's JSON number (e.g. 1050 USD → 10.5). Exact for amounts below 2^53. */
export const toMajor = (minor: number, currency: string): number => {
  const exp = exponent(currency)
  return exp === 0 ? minor : Number(toDecimalString(minor, currency))
}

/** Minor units → the canonical decimal string (e.g. 1050 USD → "10.50"). */
export const toDecimalString = (minor: number | bigint, currency: string): string => {
  const exp = exponent(currency)
  if (exp === 0) return String(minor)
  const s = String(minor).padStart(exp + 1, "0")
  return `${s.slice(0, -exp)}.${s.slice(-exp)}`
}

/** `parseAmount` as an Option of minor units, for callers that need no reason. */
export const parseAmountOption = (input: string, currency: string): Option.Option<number> => {
  const r = parseAmount(input, currency)
  return "minor" in r ? Option.some(r.minor) : Option.none()
}
