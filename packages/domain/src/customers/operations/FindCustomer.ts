/** Operation: read one of the account's customers (`GET /v1/customers/{id}`, and the payments that name one). */
import { Effect, Option } from "effect"
import { CustomerNotFound } from "../../kernel/Errors.ts"
import { CustomerRepo } from "../CustomerPorts.ts"

/** The account's customer, or 404 `customer_not_found` (another account's customer is not found either). */
export const customerOf = (accountId: string, id: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* CustomerRepo).find(accountId, id)
    if (Option.isNone(found)) return yield* new CustomerNotFound({ message: `No customer ${id}` })
    return found.value
  })
