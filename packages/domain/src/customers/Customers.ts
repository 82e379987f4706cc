/**
 * The Customers use case (contract.md: `POST /v1/customers` `{email?, name?, phone?}`,
 * `GET /v1/customers/{id}`): customer records of an account, which payments name by `customer_id`.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Account } from "../accounts/Account.ts"
import { CustomerNotFound, type FieldError, ValidationFailed } from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import type { CustomerRecord } from "../money-out/MoneyOut.ts"
import { CustomerRepo } from "./CustomerPorts.ts"
import { MAX_EMAIL, MAX_NAME, MAX_PHONE } from "../kernel/Limits.ts"
import { EMAIL } from "../payments/RequestChecks.ts"
import { nowIso } from "../kernel/Time.ts"

export interface CreateCustomerInput {
  readonly email?: string | undefined
  readonly name?: string | undefined
  readonly phone?: string | undefined
}

/** The record as the API shows it: fields with no value are null. */
export interface CustomerView {
  readonly id: string
  readonly email: string | null
  readonly name: string | null
  readonly phone: string | null
  readonly livemode: boolean
  readonly created_at: string
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

export const customerView = (c: CustomerRecord): CustomerView => ({
  id: c.id,
  email: c.email,
  name: c.name,
  phone: c.phone,
  livemode: c.livemode,
  created_at: c.created_at
})

/** The account's customer, or 404 `customer_not_found` (another account's customer is not found either). */
export const customerOf = (accountId: string, id: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* CustomerRepo).find(accountId, id)
    if (Option.isNone(found)) return yield* new CustomerNotFound({ message: `No customer ${id}` })
    return found.value
  })

export class Customers extends Context.Service<Customers, {
  create(account: Account, input: CreateCustomerInput): Effect.Effect<CustomerView, ValidationFailed>
  get(account: Account, id: string): Effect.Effect<CustomerView, CustomerNotFound>
}>()("@tender/domain/customers/Customers") {
  static readonly layer = Layer.effect(
    Customers,
    Effect.gen(function*() {
      const repo = yield* CustomerRepo
      const ids = yield* Ids
      return Customers.of({
        create: Effect.fn("Customers.create")(function*(account, input) {
          const errors = checkCustomer(input)
          if (errors.length > 0) {
            return yield* new ValidationFailed({ message: `Invalid customer: ${errors.map((e) => e.field).join(", ")}`, errors })
          }
          const customer: CustomerRecord = {
            id: yield* ids.make("customer"),
            account_id: account.id,
            livemode: account.mode === "live",
            email: input.email ?? null,
            name: input.name ?? null,
            phone: input.phone ?? null,
            created_at: yield* nowIso
          }
          yield* repo.insert(customer)
          return customerView(customer)
        }),
        get: (account, id) => Effect.map(Effect.provideService(customerOf(account.id, id), CustomerRepo, repo), customerView)
      })
    })
  )
}
