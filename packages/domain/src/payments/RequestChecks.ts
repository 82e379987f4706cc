/**
 * The field checks every create shares (payments, checkout sessions, transfers): money per currency,
 * a local method's document and customer IP, URLs a customer is sent to, the order basics, and how
 * a problem with a dedicated code takes the envelope. Pure; each returns the problems it found.
 */
import { isValidIp } from "../kernel/Cidr.ts"
import { isCountry } from "../kernel/Countries.ts"
import { CountryRequired, type ErrorProps, type FieldError, MerchantReferenceRequired } from "../kernel/Errors.ts"
import { MAX_REFERENCE, MAX_URL } from "../kernel/Limits.ts"
import * as Money from "../kernel/Money.ts"
import { type PaymentMethod } from "./PaymentMethods.ts"

const DOCUMENT_RULES: Record<NonNullable<PaymentMethod["document"]>, { readonly test: (d: string) => boolean; readonly describe: string }> = {
  cpf: { test: (d) => /^\d{11}$/.test(d), describe: "a CPF of 11 digits" },
  curp_or_rfc: {
    test: (d) => /^[A-Z]{4}\d{6}[HM][A-Z]{5}[A-Z0-9]\d$/.test(d) || /^[A-Z&Ñ]{3,4}\d{6}[A-Z0-9]{3}$/.test(d),
    describe: "a CURP (18 characters) or RFC (12–13 characters)"
  },
  cedula: { test: (d) => /^\d{6,10}$/.test(d), describe: "a cédula of 6 to 10 digits" }
}

/** contract.md: punctuation (`.`, `-`, `/`, spaces) is stripped before the document is checked. */
export const normalizeDocument = (document: string): string => document.replace(/[.\-/\s]/g, "").toUpperCase()

/**
 * The request's `amount` and `currency`: a known ISO 4217 code, a decimal with at most its exponent
 * of places. Problems are reported through `add`; the amount is in minor units (0 when invalid).
 */
export const checkMoney = (
  input: { readonly amount?: string | undefined; readonly currency?: string | undefined },
  add: (field: string, message: string) => void
): { readonly amount: number; readonly currency: string } => {
  const currency = input.currency ?? ""
  if (!Money.isCurrency(currency)) add("currency", "must be an ISO 4217 code such as USD")
  if (input.amount === undefined) add("amount", "is required")
  else if (Money.isCurrency(currency)) {
    const parsed = Money.parseAmount(input.amount, currency)
    if ("error" in parsed) add("amount", Money.amountErrorMessage(parsed.error, currency))
    else return { amount: parsed.minor, currency }
  }
  return { amount: 0, currency }
}

/**
 * What a local method needs from the merchant (contract.md): the document of its country,
 * punctuation stripped, and the shopper's IP. Returns the normalized document. Any other method,
 * or one not known (`undefined`), asks only that an IP given be well-formed.
 */
export const checkLocalFields = (
  method: PaymentMethod | undefined,
  documentId: string | undefined,
  ip: string | undefined,
  add: (field: string, message: string) => void
): string | undefined => {
  if (method?.document === undefined) {
    if (ip !== undefined && !isValidIp(ip)) add("customer.ip", "must be an IPv4 or IPv6 address")
    return undefined
  }
  const rule = DOCUMENT_RULES[method.document]
  let document: string | undefined
  if (documentId === undefined || documentId.trim() === "") add("payment_method.details.document_id", `is required for ${method.code}: ${rule.describe}`)
  else {
    document = normalizeDocument(documentId)
    if (!rule.test(document)) add("payment_method.details.document_id", `must be ${rule.describe}`)
  }
  if (ip === undefined) add("customer.ip", `is required for ${method.code}: the shopper's IP address`)
  else if (!isValidIp(ip)) add("customer.ip", "must be an IPv4 or IPv6 address")
  return document
}

/** The holder's document for the instrument: a local method's normalized one, else as given (any method). */
export const holderDocument = (normalized: string | undefined, given: string | undefined): string | undefined =>
  normalized ?? (given?.trim() || undefined)

export const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const isHttpUrl = (value: string): boolean => {
  try {
    const url = new URL(value)
    return url.protocol === "https:" || url.protocol === "http:"
  } catch {
    return false
  }
}

/** Printable ASCII only: a URL Tender sends a customer to goes out in a `Location` header as written. */
const HEADER_SAFE = /^[\x21-\x7e]+$/

/**
 * What is wrong with a URL a customer is sent to (success, cancel, return URLs), or `undefined`. The
 * URL parser would quietly drop a line break that a `Location` header would not: refused as written.
 */
export const urlProblem = (value: string): string | undefined =>
  value.length > MAX_URL
    ? `must be at most ${MAX_URL} characters`
    : !HEADER_SAFE.test(value)
    ? "must be printable ASCII, without spaces or line breaks (percent-encode the rest)"
    : !isHttpUrl(value)
    ? "must be an http or https URL"
    : undefined

/** A problem with a dedicated code: its message, and the error it makes once every field is known. */
export interface Dedicated<D> {
  readonly message: string
  readonly make: (props: ErrorProps) => D
}

/**
 * What every order's create names: the reference, the amount and currency, the country. Problems
 * go to `add`; a missing reference or country also to `dedicated` (their own codes).
 */
export const checkOrderBasics = (
  input: { readonly merchant_reference?: string | undefined; readonly amount?: string | undefined; readonly currency?: string | undefined; readonly country?: string | undefined },
  add: (field: string, message: string) => void,
  dedicated: { push(item: Dedicated<MerchantReferenceRequired | CountryRequired>): number }
) => {
  const reference = input.merchant_reference?.trim() ?? ""
  if (reference === "") {
    add("merchant_reference", "is required")
    dedicated.push({ message: "merchant_reference is required", make: (props) => new MerchantReferenceRequired(props) })
  } else if (reference.length > MAX_REFERENCE) add("merchant_reference", `must be at most ${MAX_REFERENCE} characters`)

  const { amount, currency } = checkMoney(input, add)

  const country = input.country ?? ""
  if (country === "") {
    add("country", "is required")
    dedicated.push({ message: "country is required", make: (props) => new CountryRequired(props) })
  } else if (!isCountry(country)) add("country", "must be an ISO 3166-1 alpha-2 code such as US")
  return { reference, amount, currency, country }
}

/** The first dedicated problem's error, its `errors[]` still listing every offending field. */
export const firstDedicated = <D>(dedicated: ReadonlyArray<Dedicated<D>>, errors: ReadonlyArray<FieldError>): D | undefined => {
  const first = dedicated[0]
  if (first === undefined) return undefined
  const others = errors.length > 1 ? `; invalid fields: ${errors.map((e) => e.field).join(", ")}` : ""
  return first.make({ message: `${first.message}${others}`, errors })
}

