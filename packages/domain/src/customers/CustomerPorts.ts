/** Port: customer records (POST /v1/customers), read only within their account. */
import { Context, type Effect, type Option } from "effect"
import type { CustomerRecord } from "./Customer.ts"

/** Port: where customers are stored. */
export class CustomerRepo extends Context.Service<CustomerRepo, {
  /** Stores a new customer. */
  insert(customer: CustomerRecord): Effect.Effect<void>
  /** The account's customer with this id; another account's is none. */
  find(accountId: string, id: string): Effect.Effect<Option.Option<CustomerRecord>>
}>()("@tender/domain/CustomerRepo") {}
