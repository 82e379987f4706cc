/**
 * Webhook deliveries and their attempts in PostgreSQL. Workers in any number of processes claim
 * due deliveries with `FOR UPDATE SKIP LOCKED` and a lease, so no two claim the same row at once;
 * an attempt and the state it leads to are written by one statement, so neither lands alone.
 */
import { PgClient } from "@effect/sql-pg"
import { Webhook, WebhookDeliveryRepo } from "@tender/domain"
import { Effect, Layer, Schema } from "effect"
import { type SqlClient, SqlSchema, type Statement } from "effect/sql"
import { attemptOfAnotherDelivery, deliveryNotStored } from "../Conflicts.ts"
import { statusFilter } from "../Search.ts"
import { Timestamp } from "./Columns.ts"
import * as SearchPg from "./SearchPg.ts"

export const DeliveryRow = Schema.Struct({
  ...Webhook.WebhookDelivery.fields,
  next_attempt_at: Schema.NullOr(Timestamp),
  last_attempt_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp
})

export const AttemptRow = Schema.Struct({ ...Webhook.DeliveryAttempt.fields, attempted_at: Timestamp })

const Key = Schema.Struct({ accountId: Schema.String, id: Schema.String })
const Written = Schema.Struct({ id: Schema.String })
const Claim = Schema.Struct({
  now: Schema.String,
  leaseUntil: Schema.String,
  limit: Schema.Int,
  excludeEndpoints: Schema.Array(Schema.String)
})

/** What a delivery's progress changes; the rest of the row is fixed at insert. */
const progress = (row: typeof DeliveryRow.Encoded) => ({
  status: row.status,
  attempts: row.attempts,
  next_attempt_at: row.next_attempt_at,
  last_attempt_at: row.last_attempt_at,
  updated_at: row.updated_at
})

export const layer: Layer.Layer<WebhookDeliveryRepo, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  WebhookDeliveryRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const from = sql`SELECT r.* FROM webhook_deliveries r`

    const encode = Schema.encodeEffect(DeliveryRow)
    const insert = (delivery: Webhook.WebhookDelivery) =>
      Effect.flatMap(encode(delivery), (row) => sql`INSERT INTO webhook_deliveries ${sql.insert(row)}`)
    const find = SqlSchema.findOneOption({
      Request: Key,
      Result: DeliveryRow,
      execute: ({ accountId, id }) => sql`${from} WHERE r.id = ${id} AND r.account_id = ${accountId}`
    })
    const findAny = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: DeliveryRow,
      execute: (id) => sql`${from} WHERE r.id = ${id}`
    })
    const page = SearchPg.keyset(sql, from, DeliveryRow)
    const claimDue = SqlSchema.findAll({
      Request: Claim,
      Result: DeliveryRow,
      // The predicate and order are `webhook_deliveries_due_idx`'s. MATERIALIZED runs the locking
      // SELECT exactly once: an `id IN (… LIMIT n FOR UPDATE SKIP LOCKED)` subquery may be re-run
      // by the planner and then claim more than `n` rows. The claim order is the old due time,
      // which the lease overwrites, hence `due_at`.
      execute: ({ excludeEndpoints, leaseUntil, limit, now }) =>
        sql`WITH due AS MATERIALIZED (
              SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
              WHERE d.status IN ('pending', 'failed') AND d.next_attempt_at <= ${now}::timestamptz
                AND d.endpoint_id <> ALL(${excludeEndpoints})
              ORDER BY d.next_attempt_at, d.id
              LIMIT ${limit}
              FOR UPDATE SKIP LOCKED
            ), claimed AS (
              UPDATE webhook_deliveries r
              SET next_attempt_at = ${leaseUntil}::timestamptz, updated_at = ${now}::timestamptz
              FROM due WHERE r.id = due.id
              RETURNING r.*, due.next_attempt_at AS due_at
            )
            SELECT * FROM claimed ORDER BY due_at, id`
    })
    const recordAttempt = SqlSchema.findAll({
      Request: Schema.Struct({ delivery: DeliveryRow, attempt: AttemptRow }),
      Result: Written,
      // One statement is atomic on its own and joins the caller's transaction when there is one (no
      // savepoint, one round trip). The attempt is inserted from the updated row, so it lands only
      // with the state it leads to.
      execute: ({ attempt, delivery }) =>
        sql`WITH updated AS (
              UPDATE webhook_deliveries SET ${sql.update(progress(delivery))}
              WHERE id = ${delivery.id} AND account_id = ${delivery.account_id}
              RETURNING id
            )
            INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, error)
            SELECT updated.id, ${attempt.attempted_at}::timestamptz, ${attempt.status_code}::integer,
              ${attempt.duration_ms}::integer, ${attempt.error}::text
            FROM updated
            RETURNING delivery_id AS id`
    })
    const update = SqlSchema.findAll({
      Request: DeliveryRow,
      Result: Written,
      execute: (row) =>
        sql`UPDATE webhook_deliveries SET ${sql.update(progress(row))}
            WHERE id = ${row.id} AND account_id = ${row.account_id}
            RETURNING id`
    })
    const attempts = SqlSchema.findAll({
      Request: Schema.String,
      Result: AttemptRow,
      execute: (deliveryId) =>
        sql`SELECT a.delivery_id, a.attempted_at, a.status_code, a.duration_ms, a.error
            FROM webhook_attempts a WHERE a.delivery_id = ${deliveryId} ORDER BY a.attempted_at, a.seq`
    })

    const written = (id: string) => (rows: ReadonlyArray<unknown>) =>
      rows.length === 0 ? Effect.die(deliveryNotStored(id)) : Effect.void

    return WebhookDeliveryRepo.of({
      insert: (delivery) =>
        insert(delivery).pipe(Effect.asVoid, Effect.orDie, Effect.withSpan("WebhookDeliveryRepoPg.insert")),
      find: (accountId, id) => find({ accountId, id }).pipe(Effect.orDie),
      findAny: (id) => findAny(id).pipe(Effect.orDie),
      search: (query) => {
        const status = statusFilter(query)
        const where: Array<Statement.Fragment> = []
        if (query.account_id !== undefined) where.push(sql`r.account_id = ${query.account_id}`)
        if (query.endpoint_id !== undefined) where.push(sql`r.endpoint_id = ${query.endpoint_id}`)
        if (query.event_id !== undefined) where.push(sql`r.event_id = ${query.event_id}`)
        if (status !== undefined) where.push(sql`r.status = ANY(${status})`)
        if (query.created_from !== undefined) where.push(SearchPg.createdFrom(sql, query.created_from))
        return page(where, query).pipe(Effect.withSpan("WebhookDeliveryRepoPg.search"))
      },
      claimDue: (options) => claimDue(options).pipe(Effect.orDie, Effect.withSpan("WebhookDeliveryRepoPg.claimDue")),
      recordAttempt: (delivery, attempt) =>
        attempt.delivery_id !== delivery.id
          ? Effect.die(attemptOfAnotherDelivery(attempt.delivery_id, delivery.id))
          : recordAttempt({ delivery, attempt }).pipe(
            Effect.orDie,
            Effect.flatMap(written(delivery.id)),
            Effect.withSpan("WebhookDeliveryRepoPg.recordAttempt")
          ),
      update: (delivery) =>
        update(delivery).pipe(
          Effect.orDie,
          Effect.flatMap(written(delivery.id)),
          Effect.withSpan("WebhookDeliveryRepoPg.update")
        ),
      attempts: (deliveryId) => attempts(deliveryId).pipe(Effect.orDie)
    })
  })
)
