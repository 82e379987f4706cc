/**
 * Validation of `POST /v1/payments` beyond its JSON shape: amounts per currency, countries,
 * method routing, documents and customer IP for local methods, return URLs, processing profiles,
 * manual-capture rules. Pure: it returns the validated request or the spec's error.
 */
import type { Account } from "../accounts/Account.ts"
import { activeProfile } from "../accounts/Account.ts"
import { isValidIp } from "../kernel/Cidr.ts"
import { isCountry } from "../kernel/Countries.ts"
import {
  CountryRequired,
  type ErrorProps,
  type FieldError,
  MerchantReferenceRequired,
  PaymentUnroutable,
  UnknownPaymentMethod,
  ValidationFailed
} from "../kernel/Errors.ts"
import { MAX_REFERENCE, MAX_URL } from "../kernel/Limits.ts"
import * as Money from "../kernel/Money.ts"
import type { CaptureMethod, CardStorageConsent, Customer } from "./Payment.ts"
import { findMethod, type PaymentMethod, routable } from "./PaymentMethods.ts"

export interface CreatePaymentInput {
  readonly amount?: string | undefined
  readonly currency?: string | undefined
  readonly country?: string | undefined
  /** Optional on the wire so that its absence is reported with every other offending field. */
  readonly payment_method?: {
    readonly code?: string | undefined
    readonly details?: {
      readonly card_token?: string | undefined
      readonly stored_credential?: { readonly initiator?: string | undefined; readonly reason?: string | undefined } | undefined
      readonly document_id?: string | undefined
    } | undefined
  } | undefined
  readonly merchant_reference?: string | undefined
  readonly success_url?: string | undefined
  readonly cancel_url?: string | undefined
  readonly customer?: { readonly email?: string | undefined; readonly name?: string | undefined; readonly ip?: string | undefined } | undefined
  readonly processing_profile?: string | undefined
  readonly capture_method?: string | undefined
  readonly collect_cvv?: boolean | undefined
  /** A customer record of the account (`cus_…`); checked by the create, before anything is written. */
  readonly customer_id?: string | undefined
  readonly card_storage_consent?: CardStorageConsent | undefined
}

/**
 * Why a merchant charges a stored card without the customer (`stored_credential.reason`), as card
 * schemes' stored-credential frameworks name merchant-initiated transactions: `unscheduled` (no fixed
 * schedule or amount: top-ups, usage), `recurring` (a subscription on a fixed schedule), `installment`
 * (one of a fixed number of payments of a purchase). Stripe takes them as they are
 * (`stored_credential_usage`); Adyen as `recurringProcessingModel` (docs/decisions.md).
 */
export const STORED_CREDENTIAL_REASONS = ["unscheduled", "recurring", "installment"] as const
export type StoredCredentialReason = typeof STORED_CREDENTIAL_REASONS[number]

const isStoredCredentialReason = (reason: string): reason is StoredCredentialReason =>
  (STORED_CREDENTIAL_REASONS as ReadonlyArray<string>).includes(reason)

export interface ValidPayment {
  readonly amount: number
  readonly currency: string
  readonly country: string
  readonly method: PaymentMethod
  readonly merchant_reference: string
  readonly success_url: string | null
  readonly cancel_url: string | null
  readonly customer: Customer | null
  readonly customer_ip: string | undefined
  readonly document_id: string | undefined
  readonly processing_profile: string | null
  readonly capture_method: CaptureMethod
  readonly card_token: string | undefined
  /** Merchant-initiated (stored credential, initiator merchant): authorizes in the create itself. */
  readonly merchant_initiated: boolean
  /**
   * The stored credential's reason as given; a merchant-initiated charge without one is `unscheduled`
   * (the scheme's catch-all for charges without a fixed schedule).
   */
  readonly stored_credential_reason: StoredCredentialReason | undefined
  /** `collect_cvv: false`: authorize at once without the customer. */
  readonly skip_cvv: boolean
  readonly customer_id: string | null
  readonly card_storage_consent: CardStorageConsent | null
  /** The holder's document as given (any method): the instrument's `document_id`. */
  readonly holder_document: string | undefined
}

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

// Their home is Limits.ts; re-exported for the modules that name them here.
export { MAX_REFERENCE, MAX_URL }

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

/** The spec's dedicated codes of a create, in the order they take the envelope (docs/decisions.md). */
type DedicatedError = MerchantReferenceRequired | CountryRequired | UnknownPaymentMethod

/**
 * Every field is checked in one pass, so one answer names every offending field (spec, Handling
 * rules). A problem with a dedicated code (missing reference or country, unknown method) gives
 * that code, the first of them in the order above, and its `errors[]` still lists every offending
 * field; otherwise `validation_failed`. Routing is judged only on a request with no field error.
 */
export const validateCreate = (
  account: Account,
  input: CreatePaymentInput
): ValidPayment | ValidationFailed | DedicatedError | PaymentUnroutable => {
  const errors: Array<FieldError> = []
  const add = (field: string, message: string) => errors.push({ field, message })
  const dedicated: Array<Dedicated<DedicatedError>> = []

  const { reference, amount, currency, country } = checkOrderBasics(input, add, dedicated)

  const code = input.payment_method?.code
  const method = code === undefined ? undefined : findMethod(code)
  if (code === undefined) add("payment_method.code", "is required")
  else if (method === undefined) {
    add("payment_method.code", `"${code}" is not a known payment method`)
    dedicated.push({ message: `Unknown payment_method.code "${code}"`, make: (props) => new UnknownPaymentMethod(props) })
  }

  // Checks that depend on the method run only when it is known; the others run regardless.
  const details = input.payment_method?.details
  const cardToken = details?.card_token
  if (cardToken !== undefined && method !== undefined && method.code !== "card") {
    add("payment_method.details.card_token", "is only accepted for card payments")
  }
  const initiator = details?.stored_credential?.initiator
  if (details?.stored_credential !== undefined && initiator === undefined) {
    add("payment_method.details.stored_credential.initiator", "is required: merchant or customer")
  } else if (initiator !== undefined && initiator !== "merchant" && initiator !== "customer") {
    add("payment_method.details.stored_credential.initiator", "must be merchant or customer")
  }
  const reason = details?.stored_credential?.reason
  if (reason !== undefined && !isStoredCredentialReason(reason)) {
    add("payment_method.details.stored_credential.reason", `must be one of ${STORED_CREDENTIAL_REASONS.join(", ")}`)
  }
  const merchantInitiated = initiator === "merchant"
  if (merchantInitiated && cardToken === undefined) {
    add("payment_method.details.card_token", "is required for a merchant-initiated charge")
  }

  // contract.md: the return URLs may be omitted only on a card-token charge.
  for (const field of ["success_url", "cancel_url"] as const) {
    const value = input[field]
    if (value === undefined) {
      if (cardToken === undefined) add(field, "is required")
    } else {
      const problem = urlProblem(value)
      if (problem !== undefined) add(field, problem)
    }
  }

  const document = checkLocalFields(method, details?.document_id, input.customer?.ip, add)
  const email = input.customer?.email
  if (email !== undefined && !EMAIL.test(email)) add("customer.email", "must be an email address")

  let profile: string | null = null
  if (input.processing_profile !== undefined) {
    if (activeProfile(account, input.processing_profile) === undefined) {
      add("processing_profile", "is not an active processing profile of this account")
    } else profile = input.processing_profile
  }

  let captureMethod: CaptureMethod = "automatic"
  if (input.capture_method !== undefined) {
    if (input.capture_method !== "manual" && input.capture_method !== "automatic") {
      add("capture_method", "must be manual or automatic")
    } else if (input.capture_method === "manual") {
      captureMethod = "manual"
      if (method !== undefined && method.code !== "card") add("capture_method", "manual capture is for card payments only")
      else if (method !== undefined && cardToken === undefined) {
        add("capture_method", "manual capture requires payment_method.details.card_token (a card collected fresh cannot use it)")
      }
    }
  }

  const first = firstDedicated(dedicated, errors)
  if (first !== undefined) return first
  const fields = errors.map((e) => e.field).join(", ")
  // A missing method has added its error already; the second test only narrows the type.
  if (errors.length > 0 || method === undefined) {
    return new ValidationFailed({ message: `Invalid payment: ${fields}`, errors })
  }
  if (!routable(method, country, currency)) {
    return new PaymentUnroutable({ message: `${method.code} cannot be routed for ${country} / ${currency}` })
  }
  const customer: Customer | null = input.customer?.email !== undefined || input.customer?.name !== undefined
    ? {
      ...(input.customer.email !== undefined ? { email: input.customer.email } : {}),
      ...(input.customer.name !== undefined ? { name: input.customer.name } : {})
    }
    : null
  return {
    amount,
    currency,
    country,
    method,
    merchant_reference: reference,
    success_url: input.success_url ?? null,
    cancel_url: input.cancel_url ?? null,
    customer,
    customer_ip: input.customer?.ip,
    document_id: document,
    processing_profile: profile,
    capture_method: captureMethod,
    card_token: cardToken,
    merchant_initiated: merchantInitiated,
    stored_credential_reason: reason !== undefined && isStoredCredentialReason(reason) ? reason : merchantInitiated ? "unscheduled" : undefined,
    skip_cvv: input.collect_cvv === false,
    customer_id: input.customer_id ?? null,
    card_storage_consent: input.card_storage_consent ?? null,
    holder_document: holderDocument(document, details?.document_id)
  }
}
