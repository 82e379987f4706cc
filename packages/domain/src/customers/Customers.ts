/**
 * The Customers use case (contract.md: `POST /v1/customers`, `GET /v1/customers/{id}`): customer
 * records of an account, which payments name by `customer_id`. A facade over its operations.
 */
import { Context, Effect, Layer } from "effect"
import type { Account } from "../accounts/Account.ts"
import type { CustomerNotFound, ValidationFailed } from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import { CustomerRepo } from "./CustomerPorts.ts"
import type { CreateCustomerInput } from "./CustomerRequest.ts"
import { type CustomerView, customerView } from "./CustomerViews.ts"
import { createCustomer } from "./operations/CreateCustomer.ts"
import { customerOf } from "./operations/FindCustomer.ts"

/** The Customers use case: create and read an account's customers. */
export class Customers extends Context.Service<Customers, {
  /** Validates and stores a new customer of the account. */
  create(account: Account, input: CreateCustomerInput): Effect.Effect<CustomerView, ValidationFailed>
  /** The account's customer with this id. */
  get(account: Account, id: string): Effect.Effect<CustomerView, CustomerNotFound>
}>()("@tender/domain/customers/Customers") {
  static readonly layer = Layer.effect(
    Customers,
    Effect.gen(function*() {
      const context = Context.make(CustomerRepo, yield* CustomerRepo).pipe(Context.add(Ids, yield* Ids))
      return Customers.of({
        create: (account, input) => Effect.provide(createCustomer(account, input), context),
        get: (account, id) => Effect.provide(Effect.map(customerOf(account.id, id), customerView), context)
      })
    })
  )
}
