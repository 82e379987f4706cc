/** Operation: create a customer record (`POST /v1/customers`): validate, write, answer its view. */
import { Effect } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { ValidationFailed } from "../../kernel/Errors.ts"
import { Ids } from "../../kernel/Ids.ts"
import { nowIso } from "../../kernel/Time.ts"
import type { CustomerRecord } from "../Customer.ts"
import { CustomerRepo } from "../CustomerPorts.ts"
import { checkCustomer, type CreateCustomerInput } from "../CustomerRequest.ts"
import { customerView } from "../CustomerViews.ts"

export const createCustomer = Effect.fn("Customers.create")(function*(account: Account, input: CreateCustomerInput) {
  const errors = checkCustomer(input)
  if (errors.length > 0) {
    return yield* new ValidationFailed({ message: `Invalid customer: ${errors.map((e) => e.field).join(", ")}`, errors })
  }
  const customer: CustomerRecord = {
    id: yield* (yield* Ids).make("customer"),
    account_id: account.id,
    livemode: account.mode === "live",
    email: input.email ?? null,
    name: input.name ?? null,
    phone: input.phone ?? null,
    created_at: yield* nowIso
  }
  yield* (yield* CustomerRepo).insert(customer)
  return customerView(customer)
})
