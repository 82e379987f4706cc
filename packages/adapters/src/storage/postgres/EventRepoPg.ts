/** The event outbox in PostgreSQL: appended in the unit of work of the change each event reports. */
import { PgClient } from "@effect/sql-pg"
import { EventFeed, EventRepo, Payment } from "@tender/domain"
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
    const decodeRow = Schema.decodeUnknownEffect(EventRow)

    /**
     * The feed's bound: the oldest transaction still running, as this statement's snapshot sees it
     * (pg_current_snapshot is the statement's own). Every transaction below it has ended, so an
     * event with a txid below it is either visible now or never will be; every event still to commit
     * has a txid at or above it (migration 0044). Serving only below it, in (txid, seq) order, means
     * a cursor never passes an event that commits later. The cost: one long transaction anywhere in
     * the cluster holds the feed back (not the writes) until it ends.
     */
    const horizon = sql`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`
    const feedRows = (query: Parameters<EventRepo["Service"]["feed"]>[0], after: EventFeed.FeedPosition) =>
      sql<{ xmin: string; feed_tx: string | null; feed_seq: string | null } & Record<string, unknown>>`
        WITH h AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin)
        SELECT h.xmin::text AS xmin, f.txid::text AS feed_tx, f.seq::text AS feed_seq, f.*
        FROM h LEFT JOIN LATERAL (
          SELECT r.* FROM events r
          WHERE r.account_id = ${query.account_id}
            AND (r.txid, r.seq) > (${after.tx.toString()}::bigint, ${after.seq.toString()}::bigint)
            AND r.txid < h.xmin
            ${query.types === undefined ? sql`` : sql`AND r.type = ANY(${query.types as Array<string>}::text[])`}
          ORDER BY r.txid, r.seq
          LIMIT ${query.limit}
        ) f ON true`
    const feed = (query: Parameters<EventRepo["Service"]["feed"]>[0]) =>
      Effect.gen(function*() {
        if (query.after === undefined) {
          const [{ xmin }] = yield* horizon
          return { events: [], next: { tx: BigInt(xmin as string), seq: 0n } }
        }
        const rows = yield* feedRows(query, query.after)
        const found = rows.filter((row) => row.feed_tx !== null)
        const events = yield* Effect.forEach(found, (row) => decodeRow(row))
        const last = found.at(-1)
        // A full page may stop short of the bound: continue after its last event. A shorter one
        // served everything below the bound: continue from the bound itself.
        const next: EventFeed.FeedPosition = last !== undefined && found.length === query.limit
          ? { tx: BigInt(last.feed_tx!), seq: BigInt(last.feed_seq!) }
          : EventFeed.later(query.after, { tx: BigInt(rows[0]!.xmin), seq: 0n })
        return { events, next }
      })

    return EventRepo.of({
      append: (event) => append(event).pipe(Effect.asVoid, Effect.orDie, Effect.withSpan("EventRepoPg.append")),
      listByOrder: (orderId) => listByOrder(orderId).pipe(Effect.orDie),
      feed: (query) => feed(query).pipe(Effect.orDie, Effect.withSpan("EventRepoPg.feed")),
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
