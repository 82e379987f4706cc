/**
 * Validation of `POST /v1/customers` beyond its JSON shape: every field at once, each within its bound.
 */
import type { FieldError } from "../kernel/Errors.ts"
import { MAX_EMAIL, MAX_NAME, MAX_PHONE } from "../kernel/Limits.ts"
import { EMAIL } from "../payments/RequestChecks.ts"

/** A create-customer request's fields, before validation. */
export interface CreateCustomerInput {
  readonly email?: string | undefined
  readonly name?: string | undefined
  readonly phone?: string | undefined
}

const PHONE = new RegExp(`^\\+?[\\d\\s().-]{4,${MAX_PHONE}}$`)
const MIN_PHONE_DIGITS = 4

/** Every field at once (spec, Handling rules: errors[] lists the offending fields). */
export const checkCustomer = (input: CreateCustomerInput): ReadonlyArray<FieldError> => {
  const errors: Array<FieldError> = []
  const add = (field: string, message: string) => errors.push({ field, message })
  if (input.email !== undefined) {
    if (input.email.length > MAX_EMAIL) add("email", `must be at most ${MAX_EMAIL} characters`)
    else if (!EMAIL.test(input.email)) add("email", "must be an email address")
  }
  if (input.name !== undefined) {
    if (input.name.trim() === "") add("name", "must not be blank")
    else if (input.name.length > MAX_NAME) add("name", `must be at most ${MAX_NAME} characters`)
  }
  if (input.phone !== undefined && (!PHONE.test(input.phone) || input.phone.replace(/\D/g, "").length < MIN_PHONE_DIGITS)) {
    add("phone", `must be a phone number: digits, optionally a leading +, spaces, dashes, dots or parentheses (at most ${MAX_PHONE} characters)`)
  }
  return errors
}
