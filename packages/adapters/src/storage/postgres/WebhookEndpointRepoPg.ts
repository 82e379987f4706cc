/**
 * Webhook endpoints in PostgreSQL: reads by id scoped by account except the operator's `findAny`,
 * inserts capped per account under an advisory lock, version-checked updates, and deletes that leave the endpoint's deliveries in place (no cascade).
 */
import { PgClient } from "@effect/sql-pg"
import { Webhook, WebhookEndpointRepo } from "@tender/domain"
import { Effect, Layer, Schema } from "effect"
import { ReadsNoDeferredTable } from "./WriteBehind.ts"
import { type SqlClient, SqlSchema } from "effect/sql"
import { Timestamp } from "./Columns.ts"
import * as VersionedUpdate from "./VersionedUpdate.ts"
import { transactionOrJoin } from "./UnitOfWorkPg.ts"

export const EndpointRow = Schema.Struct({
  ...Webhook.WebhookEndpoint.fields,
  created_at: Timestamp,
  updated_at: Timestamp
})

const Key = Schema.Struct({ accountId: Schema.String, id: Schema.String })
const Deleted = Schema.Struct({ id: Schema.String })

export const layer: Layer.Layer<WebhookEndpointRepo, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  WebhookEndpointRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const inTransaction = transactionOrJoin(sql)
    const columns = (row: typeof EndpointRow.Encoded) => ({ ...row, enabled_events: sql.json(row.enabled_events) })
    const from = sql`SELECT r.* FROM webhook_endpoints r`

    const encode = Schema.encodeEffect(EndpointRow)
    // The count and the insert run under a per-account lock, in a transaction of their own (or the
    // caller's): a count in the same statement as the insert would read a snapshot taken before a
    // concurrent create committed, and both would pass. READ COMMITTED gives the count, a statement
    // after the lock, every create that held the lock before.
    const insert = (endpoint: Webhook.WebhookEndpoint, max: number) =>
      inTransaction(Effect.gen(function*() {
        const row = yield* encode(endpoint)
        yield* sql`SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints'), hashtext(${endpoint.account_id}))`
        const [held] = yield* sql<{ readonly n: number }>`
          SELECT count(*)::integer AS n FROM webhook_endpoints WHERE account_id = ${endpoint.account_id}`
        if (held.n >= max) return false
        yield* sql`INSERT INTO webhook_endpoints ${sql.insert(columns(row))}`
        return true
      }))
    const update = VersionedUpdate.make(sql, {
      table: "webhook_endpoints",
      what: "WebhookEndpoint",
      Row: EndpointRow,
      columns
    })
    const find = SqlSchema.findOneOption({
      Request: Key,
      Result: EndpointRow,
      execute: ({ accountId, id }) => sql`${from} WHERE r.id = ${id} AND r.account_id = ${accountId}`
    })
    const findAny = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: EndpointRow,
      execute: (id) => sql`${from} WHERE r.id = ${id}`
    })
    const list = SqlSchema.findAll({
      Request: Schema.String,
      Result: EndpointRow,
      execute: (accountId) => sql`${from} WHERE r.account_id = ${accountId} ORDER BY r.created_at, r.id`
    })
    const remove = SqlSchema.findAll({
      Request: Key,
      Result: Deleted,
      execute: ({ accountId, id }) =>
        sql`DELETE FROM webhook_endpoints WHERE id = ${id} AND account_id = ${accountId} RETURNING id`
    })

    return WebhookEndpointRepo.of({
      insert: (endpoint, max) => insert(endpoint, max).pipe(Effect.orDie, Effect.withSpan("WebhookEndpointRepoPg.insert")),
      find: (accountId, id) => find({ accountId, id }).pipe(Effect.orDie),
      findAny: (id) => findAny(id).pipe(Effect.orDie),
      // The outbox lists endpoints between an event's insert and its deliveries': the endpoints table
      // has no deferred writes, so the unit need not flush the event first (WriteBehind.ts).
      list: (accountId) => list(accountId).pipe(Effect.orDie, Effect.provideService(ReadsNoDeferredTable, true)),
      update,
      delete: (accountId, id) =>
        remove({ accountId, id }).pipe(
          Effect.map((deleted) => deleted.length > 0),
          Effect.orDie,
          Effect.withSpan("WebhookEndpointRepoPg.delete")
        )
    })
  })
)
