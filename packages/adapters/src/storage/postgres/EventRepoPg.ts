/** The event outbox in PostgreSQL: appended in the unit of work of the change each event reports. */
import { PgClient } from "@effect/sql-pg"
import { EventRepo, Payment } from "@tender/domain"
import { Effect, Layer, Schema } from "effect"
import { type SqlClient, SqlSchema, type Statement } from "effect/sql"
import { Timestamp } from "./Columns.ts"
import * as SearchPg from "./SearchPg.ts"
import { insertOrDefer } from "./WriteBehind.ts"

export const EventRow = Schema.Struct({ ...Payment.PaymentEvent.fields, created_at: Timestamp })

export const layer: Layer.Layer<EventRepo, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  EventRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const from = sql`SELECT r.* FROM events r`

    const encode = Schema.encodeEffect(EventRow)
    const append = (event: Payment.PaymentEvent) =>
      Effect.flatMap(encode(event), (row) => {
        const columns = { ...row, data: sql.json(row.data) }
        return insertOrDefer({ table: "events", id: row.id, version: undefined, columns }, sql`INSERT INTO events ${sql.insert(columns)}`)
      })
    const listByOrder = SqlSchema.findAll({
      Request: Schema.String,
      Result: EventRow,
      execute: (orderId) => sql`${from} WHERE r.order_id = ${orderId} ORDER BY r.created_at, r.seq`
    })
    const findAny = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: EventRow,
      execute: (id) => sql`${from} WHERE r.id = ${id}`
    })
    const page = SearchPg.keyset(sql, from, EventRow)

    return EventRepo.of({
      append: (event) => append(event).pipe(Effect.asVoid, Effect.orDie, Effect.withSpan("EventRepoPg.append")),
      listByOrder: (orderId) => listByOrder(orderId).pipe(Effect.orDie),
      findAny: (id) => findAny(id).pipe(Effect.orDie),
      search: (query) => {
        const where: Array<Statement.Fragment> = []
        if (query.account_id !== undefined) where.push(sql`r.account_id = ${query.account_id}`)
        if (query.type !== undefined) where.push(sql`r.type = ${query.type}`)
        if (query.created_from !== undefined) where.push(SearchPg.createdFrom(sql, query.created_from))
        return page(where, query).pipe(Effect.withSpan("EventRepoPg.search"))
      }
    })
  })
)
