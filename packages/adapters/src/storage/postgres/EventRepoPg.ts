/** The event outbox in PostgreSQL: appended in the unit of work of the change each event reports. */
import { PgClient } from "@effect/sql-pg"
import { EventRepo, Payment } from "@tender/domain"
import { Effect, Layer, Schema } from "effect"
import { type SqlClient, SqlSchema } from "effect/sql"
import { Timestamp } from "./Columns.ts"

export const EventRow = Schema.Struct({ ...Payment.PaymentEvent.fields, created_at: Timestamp })

export const layer: Layer.Layer<EventRepo, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  EventRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient

    const encode = Schema.encodeEffect(EventRow)
    const append = (event: Payment.PaymentEvent) =>
      Effect.flatMap(encode(event), (row) => sql`INSERT INTO events ${sql.insert({ ...row, data: sql.json(row.data) })}`)
    const listByOrder = SqlSchema.findAll({
      Request: Schema.String,
      Result: EventRow,
      execute: (orderId) => sql`SELECT e.* FROM events e WHERE e.order_id = ${orderId} ORDER BY e.created_at, e.id`
    })

    return EventRepo.of({
      append: (event) => append(event).pipe(Effect.asVoid, Effect.orDie, Effect.withSpan("EventRepoPg.append")),
      listByOrder: (orderId) => listByOrder(orderId).pipe(Effect.orDie)
    })
  })
)
