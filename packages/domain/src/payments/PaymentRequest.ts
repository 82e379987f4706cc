/**
 * Validation of `POST /v1/payments` beyond its JSON shape: amounts per currency, countries,
 * method routing, documents and customer IP for local methods, return URLs, processing profiles,
 * manual-capture rules. Pure: it returns the validated request or the spec's error.
 */
import type { Account } from "../accounts/Account.ts"
import { activeProfile } from "../accounts/Account.ts"
import {
  CountryRequired,
  type FieldError,
  MerchantReferenceRequired,
  PaymentUnroutable,
  UnknownPaymentMethod,
  ValidationFailed
} from "../kernel/Errors.ts"
import { checkLocalFields, checkOrderBasics, type Dedicated, EMAIL, firstDedicated, holderDocument, urlProblem } from "./RequestChecks.ts"
import type { CaptureMethod, CardStorageConsent, Customer } from "./Payment.ts"
import { findMethod, type PaymentMethod, routable } from "./PaymentMethods.ts"

/** A create-payment request's fields, before validation. */
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
/** Why a merchant charges a stored card: unscheduled, recurring or installment. */
export type StoredCredentialReason = typeof STORED_CREDENTIAL_REASONS[number]

const isStoredCredentialReason = (reason: string): reason is StoredCredentialReason =>
  (STORED_CREDENTIAL_REASONS as ReadonlyArray<string>).includes(reason)

/** A payment request that passed validation: amounts in minor units, its method resolved. */
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
