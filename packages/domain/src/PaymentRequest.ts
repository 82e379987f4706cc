/**
 * Validation of `POST /v1/payments` beyond its JSON shape: amounts per currency, countries,
 * method routing, documents and customer IP for local methods, return URLs, processing profiles,
 * manual-capture rules. Pure: it returns the validated request or the spec's error.
 */
import type { Account } from "./Account.ts"
import { activeProfile } from "./Account.ts"
import { isValidIp } from "./Cidr.ts"
import { isCountry } from "./Countries.ts"
import {
  CountryRequired,
  type FieldError,
  MerchantReferenceRequired,
  PaymentUnroutable,
  UnknownPaymentMethod,
  ValidationFailed
} from "./Errors.ts"
import * as Money from "./Money.ts"
import type { CaptureMethod, Customer } from "./Payment.ts"
import { findMethod, type PaymentMethod, routable } from "./PaymentMethods.ts"

export interface CreatePaymentInput {
  readonly amount?: string | undefined
  readonly currency?: string | undefined
  readonly country?: string | undefined
  readonly payment_method: {
    readonly code: string
    readonly details?: {
      readonly card_token?: string | undefined
      readonly stored_credential?: { readonly initiator: string; readonly reason?: string | undefined } | undefined
      readonly document_id?: string | undefined
    } | undefined
  }
  readonly merchant_reference?: string | undefined
  readonly success_url?: string | undefined
  readonly cancel_url?: string | undefined
  readonly customer?: { readonly email?: string | undefined; readonly name?: string | undefined; readonly ip?: string | undefined } | undefined
  readonly processing_profile?: string | undefined
  readonly capture_method?: string | undefined
  readonly collect_cvv?: boolean | undefined
}

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
  /** `collect_cvv: false`: authorize at once without the customer. */
  readonly skip_cvv: boolean
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
 * punctuation stripped, and the shopper's IP. Returns the normalized document.
 */
export const checkLocalFields = (
  method: PaymentMethod,
  documentId: string | undefined,
  ip: string | undefined,
  add: (field: string, message: string) => void
): string | undefined => {
  if (method.document === undefined) {
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

export const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const isHttpUrl = (value: string): boolean => {
  try {
    const url = new URL(value)
    return url.protocol === "https:" || url.protocol === "http:"
  } catch {
    return false
  }
}

const MAX_REFERENCE = 255

export const validateCreate = (
  account: Account,
  input: CreatePaymentInput
): ValidPayment | ValidationFailed | MerchantReferenceRequired | CountryRequired | UnknownPaymentMethod | PaymentUnroutable => {
  const reference = input.merchant_reference?.trim() ?? ""
  if (reference === "") return new MerchantReferenceRequired({ message: "merchant_reference is required" })
  if (input.country === undefined || input.country === "") return new CountryRequired({ message: "country is required" })

  const errors: Array<FieldError> = []
  const add = (field: string, message: string) => errors.push({ field, message })

  if (reference.length > MAX_REFERENCE) add("merchant_reference", `must be at most ${MAX_REFERENCE} characters`)
  const { amount, currency } = checkMoney(input, add)
  if (!isCountry(input.country)) add("country", "must be an ISO 3166-1 alpha-2 code such as US")

  const method = findMethod(input.payment_method.code)
  if (method === undefined) {
    return new UnknownPaymentMethod({ message: `Unknown payment_method.code "${input.payment_method.code}"` })
  }

  const details = input.payment_method.details
  const cardToken = details?.card_token
  if (cardToken !== undefined && method.code !== "card") add("payment_method.details.card_token", "is only accepted for card payments")
  const initiator = details?.stored_credential?.initiator
  if (initiator !== undefined && initiator !== "merchant" && initiator !== "customer") {
    add("payment_method.details.stored_credential.initiator", "must be merchant or customer")
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
    } else if (!isHttpUrl(value)) add(field, "must be an http or https URL")
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
      if (method.code !== "card") add("capture_method", "manual capture is for card payments only")
      else if (cardToken === undefined) {
        add("capture_method", "manual capture requires payment_method.details.card_token (a card collected fresh cannot use it)")
      }
    }
  }

  if (errors.length > 0) {
    return new ValidationFailed({ message: `Invalid payment: ${errors.map((e) => e.field).join(", ")}`, errors })
  }
  if (!routable(method, input.country, currency)) {
    return new PaymentUnroutable({ message: `${method.code} cannot be routed for ${input.country} / ${currency}` })
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
    country: input.country,
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
    skip_cvv: input.collect_cvv === false
  }
}
