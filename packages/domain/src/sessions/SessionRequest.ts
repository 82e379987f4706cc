/**
 * Checkout session requests: what a merchant sends to create one (and its pure validation), and what
 * the hosted form (or its test helper) submits for an attempt.
 */
import type { Account } from "../accounts/Account.ts"
import { activeProfile } from "../accounts/Account.ts"
import type { CardInput } from "../cards/CardRequest.ts"
import { isCountry } from "../kernel/Countries.ts"
import {
  CountryNotAvailable,
  type FieldError,
  invalidField,
  MerchantReferenceRequired,
  UnknownPaymentMethod,
  ValidationFailed
} from "../kernel/Errors.ts"
import { MAX_NAME, MAX_REFERENCE } from "../kernel/Limits.ts"
import * as Money from "../kernel/Money.ts"
import { findMethod, homeCountry, PAYMENT_METHODS, routable } from "../payments/PaymentMethods.ts"
import { checkMoney, EMAIL, urlProblem } from "../payments/RequestChecks.ts"
import type { SessionAttemptInput } from "./operations/Attempt.ts"
import * as Session from "./CheckoutSession.ts"

/** A create-session request's fields, before validation. */
export interface CreateSessionInput {
  readonly amount?: string | undefined
  readonly currency?: string | undefined
  readonly country?: string | undefined
  readonly merchant_reference?: string | undefined
  readonly success_url?: string | undefined
  readonly cancel_url?: string | undefined
  readonly capture_method?: string | undefined
  readonly customer?: { readonly email?: string | undefined; readonly name?: string | undefined } | undefined
  readonly payment_methods?: ReadonlyArray<string> | undefined
  readonly straight_through?: boolean | undefined
  readonly max_payment_attempts?: number | undefined
  readonly expires_at?: string | undefined
  readonly locale?: string | undefined
  readonly line_items?: ReadonlyArray<{ readonly name: string; readonly quantity: number; readonly unit_amount: string }> | undefined
  readonly collect_address?: boolean | undefined
  readonly collect_phone?: boolean | undefined
  readonly processing_profile?: string | undefined
}

/** The hosted form as submitted: a card is typed in (tokenized here), or already a token. */
export interface SubmitInput {
  readonly payment_method: {
    readonly code: string
    readonly details?: {
      readonly card?: CardInput | undefined
      readonly card_token?: string | undefined
      readonly document_id?: string | undefined
      /** No card yet: the attempt waits for the hosted page's card element (SessionAttemptInput). */
      readonly collect_card?: boolean | undefined
    } | undefined
  }
  readonly customer?: SessionAttemptInput["customer"]
}

/** A create request once validated: what the session and its order are born with. */
export interface ValidSession {
  readonly reference: string
  readonly amount: number
  readonly currency: string
  /** As the merchant gave it (null: none); routing falls back to the currency's home country. */
  readonly country: string | null
  readonly routingCountry: string
  readonly max: number
  readonly expiresAt: number
  readonly manual: boolean
  readonly lineItems: ReadonlyArray<Session.LineItem> | null
}

/** Pure: the create request checked against the account at `now` (ms), or the first error to answer. */
export const validateCreate = (account: Account, input: CreateSessionInput, now: number) => {
  const reference = input.merchant_reference?.trim() ?? ""
  if (reference === "") return new MerchantReferenceRequired({ message: "merchant_reference is required" })
  const errors: Array<FieldError> = []
  const add = (field: string, message: string) => errors.push({ field, message })
  if (reference.length > MAX_REFERENCE) add("merchant_reference", `must be at most ${MAX_REFERENCE} characters`)
  const { amount, currency } = checkMoney(input, add)
  if (input.country !== undefined && !isCountry(input.country)) add("country", "must be an ISO 3166-1 alpha-2 code")
  for (const field of ["success_url", "cancel_url"] as const) {
    const value = input[field]
    const problem = value === undefined ? "is required" : urlProblem(value)
    if (problem !== undefined) add(field, problem)
  }
  const max = input.max_payment_attempts ?? Session.DEFAULT_MAX_ATTEMPTS
  if (!Number.isInteger(max) || max < Session.MAX_ATTEMPTS_BOUNDS.min || max > Session.MAX_ATTEMPTS_BOUNDS.max) {
    add("max_payment_attempts", `must be an integer from ${Session.MAX_ATTEMPTS_BOUNDS.min} to ${Session.MAX_ATTEMPTS_BOUNDS.max}`)
  }
  let expiresAt = now + Session.DEFAULT_LIFETIME_MS
  if (input.expires_at !== undefined) {
    const parsed = Date.parse(input.expires_at)
    if (Number.isNaN(parsed)) add("expires_at", "must be an ISO 8601 timestamp")
    else if (parsed <= now) add("expires_at", "must be in the future")
    else if (parsed > now + Session.MAX_LIFETIME_MS) add("expires_at", "must be at most 24 hours ahead")
    else expiresAt = parsed
  }
  const methods = input.payment_methods
  if (methods !== undefined) {
    if (methods.length === 0) add("payment_methods", "must name at least one method")
    const unknown = methods.find((m) => findMethod(m) === undefined)
    if (unknown !== undefined) return new UnknownPaymentMethod({ message: `Unknown payment method ${unknown}` })
  }
  const manual = input.capture_method === "manual"
  if (input.capture_method !== undefined && input.capture_method !== "manual" && input.capture_method !== "automatic") {
    add("capture_method", "must be manual or automatic")
  }
  if (input.straight_through === true) {
    const single = methods?.length === 1 ? findMethod(methods[0]) : undefined
    if (single === undefined || single.next_action_type !== "redirect") {
      add("straight_through", "needs exactly one payment method, a redirect method")
    }
  }
  if (input.locale !== undefined && !/^[a-z]{2}(-[A-Z]{2})?$/.test(input.locale)) add("locale", "must be a language tag such as en or pt-BR")
  const items = input.line_items ?? []
  const errorsBeforeItems = errors.length
  if (items.length > Session.MAX_LINE_ITEMS) add("line_items", `must have at most ${Session.MAX_LINE_ITEMS} items`)
  const lineItems = items.slice(0, Session.MAX_LINE_ITEMS).map((item, i) => {
    if (item.name.trim() === "") add(`line_items[${i}].name`, "is required")
    else if (item.name.length > MAX_NAME) add(`line_items[${i}].name`, `must be at most ${MAX_NAME} characters`)
    if (!Number.isSafeInteger(item.quantity) || item.quantity < 1 || item.quantity > Session.MAX_QUANTITY) {
      add(`line_items[${i}].quantity`, `must be an integer from 1 to ${Session.MAX_QUANTITY}`)
    }
    const unit = Money.parseAmount(item.unit_amount, Money.isCurrency(currency) ? currency : "USD")
    if ("error" in unit) add(`line_items[${i}].unit_amount`, Money.amountErrorMessage(unit.error, currency))
    return { name: item.name, quantity: item.quantity, unit_amount: "minor" in unit ? unit.minor : 0 }
  })
  // contract.md: the items add up to the amount exactly, so the page never shows a total it does
  // not charge. Judged once every item and the amount are valid; in BigInt, since a quantity
  // times a unit amount may pass 2^53.
  const itemsValid = errors.length === errorsBeforeItems
  const amountValid = !errors.some((e) => e.field === "amount" || e.field === "currency")
  if (input.line_items !== undefined && itemsValid && amountValid) {
    const total = lineItems.reduce((sum, item) => sum + BigInt(item.quantity) * BigInt(item.unit_amount), 0n)
    if (total !== BigInt(amount)) {
      add("line_items", `must add up to amount: quantity × unit_amount totals ${Money.toDecimalString(total, currency)}, amount is ${Money.toDecimalString(amount, currency)}`)
    }
  }
  if (input.processing_profile !== undefined && activeProfile(account, input.processing_profile) === undefined) {
    add("processing_profile", "is not an active processing profile of this account")
  }
  if (input.customer?.email !== undefined && !EMAIL.test(input.customer.email)) add("customer.email", "must be an email address")
  if (errors.length > 0) return new ValidationFailed({ message: `Invalid checkout session: ${errors.map((e) => e.field).join(", ")}`, errors })
  const country = input.country ?? homeCountry(currency)
  const offered = (methods ?? PAYMENT_METHODS.map((m) => m.code)).filter((m) => routable(findMethod(m)!, country, currency))
  if (offered.length === 0) {
    return new CountryNotAvailable({ message: `None of the session's payment methods can be routed for ${country} / ${currency}` })
  }
  if (manual && !offered.includes("card")) {
    return invalidField("capture_method", "manual capture needs card among the session's payment methods")
  }
  const valid: ValidSession = {
    reference,
    amount,
    currency,
    country: input.country ?? null,
    routingCountry: country,
    max,
    expiresAt,
    manual,
    lineItems: input.line_items === undefined ? null : lineItems
  }
  return valid
}
