/** Customer records in memory; reads are scoped by account, as in PostgreSQL. */
import { CustomerRepo, type Customer } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { MemoryDatabase, table } from "./MemoryDatabase.ts"

export const customers = table<string, Customer.CustomerRecord>("customers")

export const layer: Layer.Layer<CustomerRepo, never, MemoryDatabase> = Layer.effect(
  CustomerRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    return CustomerRepo.of({
      insert: (customer) =>
        db.write((w) => {
          // Ids are random, so a clash is a bug upstream: a defect, as the primary key makes it in PostgreSQL.
          if (w.get(customers).has(customer.id)) throw new Error(`CustomerRepoMemory: duplicate customer id ${customer.id}`)
          w.mutable(customers).set(customer.id, customer)
          return Result.succeed(undefined)
        }),
      find: (accountId, id) =>
        db.read((r) => Option.filter(Option.fromNullishOr(r.get(customers).get(id)), (c) => c.account_id === accountId))
    })
  })
)
