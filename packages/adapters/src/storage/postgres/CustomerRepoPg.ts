/** Customer records in PostgreSQL (table `customers`, migration 0010); reads are scoped by account. */
import { PgClient } from "@effect/sql-pg"
import { Customer, CustomerRepo } from "@tender/domain"
import { Effect, Layer, Schema } from "effect"
import { type SqlClient, SqlSchema } from "effect/sql"
import { Timestamp } from "./Columns.ts"

const CustomerRow = Schema.Struct({ ...Customer.CustomerRecord.fields, created_at: Timestamp })
const Key = Schema.Struct({ accountId: Schema.String, id: Schema.String })

export const layer: Layer.Layer<CustomerRepo, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  CustomerRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const encode = Schema.encodeEffect(CustomerRow)
    const insert = (customer: Customer.CustomerRecord) =>
      Effect.flatMap(encode(customer), (row) => sql`INSERT INTO customers ${sql.insert(row)}`)
    const find = SqlSchema.findOneOption({
      Request: Key,
      Result: CustomerRow,
      execute: ({ accountId, id }) =>
        sql`SELECT id, account_id, livemode, email, name, phone, created_at FROM customers WHERE id = ${id} AND account_id = ${accountId}`
    })
    return CustomerRepo.of({
      insert: (customer) => insert(customer).pipe(Effect.orDie, Effect.withSpan("CustomerRepoPg.insert")),
      find: (accountId, id) => find({ accountId, id }).pipe(Effect.orDie)
    })
  })
)
