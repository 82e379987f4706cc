/**
 * Orders in PostgreSQL. The reference rule (contract.md, Idempotency: one reference space per
 * account, shared only by checkout sessions among themselves) is migration 0027's claim, made by a
 * trigger on every insert, so it holds across processes; reads by id are scoped by account except
 * the operator's `findAny`, the use cases' `lock` and the retry-window worker's `listRetryLapsed`.
 */
import { PgClient } from "@effect/sql-pg"
import { OrderRepo, Payment } from "@tender/domain"
import { Effect, Layer, Option, Schema } from "effect"
import { type SqlClient, SqlSchema } from "effect/sql"
import { duplicateReference, lockOutsideUnitOfWork } from "../Conflicts.ts"
import { jsonb, MinorUnits, Timestamp } from "./Columns.ts"
import * as SearchPg from "./SearchPg.ts"
import * as VersionedUpdate from "./VersionedUpdate.ts"
import { insertOrDefer } from "./WriteBehind.ts"

export const OrderRow = Schema.Struct({
  ...Payment.Order.fields,
  amount: MinorUnits,
  received_amount: Schema.NullOr(MinorUnits),
  refunded_amount: MinorUnits,
  retry_until: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp
})

const Inserted = Schema.Struct({ id: Schema.String })
const Key = Schema.Struct({ accountId: Schema.String, id: Schema.String })
const Reference = Schema.Struct({ accountId: Schema.String, reference: Schema.String })
const ReferencePage = Schema.Struct({ ...Reference.fields, limit: Schema.Int })

export const layer: Layer.Layer<OrderRepo, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  OrderRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const json = jsonb(sql)
    const columns = (row: typeof OrderRow.Encoded) => ({
      ...row,
      customer: json(row.customer),
      payment_instrument: json(row.payment_instrument),
      card_storage_consent: json(row.card_storage_consent)
    })
    const from = sql`SELECT r.* FROM orders r`

    const insert = SqlSchema.findAll({
      Request: OrderRow,
      Result: Inserted,
      // A refused claim skips the row (0027's trigger) rather than raising a unique violation: the
      // enclosing transaction stays usable, as in memory, when the use case handles the refusal. The
      // claim still waits for a racing claim of the same reference to commit or roll back first.
      execute: (row) => sql`INSERT INTO orders ${sql.insert(columns(row))} RETURNING id`
    })
    const encode = Schema.encodeEffect(OrderRow)
    const update = VersionedUpdate.make(sql, { table: "orders", what: "Order", Row: OrderRow, columns, deferred: "orders" })
    const find = SqlSchema.findOneOption({
      Request: Key,
      Result: OrderRow,
      execute: ({ accountId, id }) => sql`${from} WHERE r.id = ${id} AND r.account_id = ${accountId}`
    })
    const findAny = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: OrderRow,
      execute: (id) => sql`${from} WHERE r.id = ${id}`
    })
    const lock = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: OrderRow,
      execute: (id) => sql`${from} WHERE r.id = ${id} FOR UPDATE`
    })
    const findByReference = SqlSchema.findOneOption({
      Request: Reference,
      Result: OrderRow,
      // The direct payment first: it is the one a duplicate-reference refusal points the merchant to
      // (only orders stored before migration 0027 can pair one with sessions).
      execute: ({ accountId, reference }) =>
        sql`${from} WHERE r.account_id = ${accountId} AND r.merchant_reference = ${reference}
            ORDER BY r.subtype <> 'checkout' DESC, r.created_at DESC, r.id DESC LIMIT 1`
    })
    const listRetryLapsed = SqlSchema.findAll({
      Request: Schema.Struct({ now: Schema.String, limit: Schema.Int }),
      Result: OrderRow,
      // Exactly the predicate and order of `orders_retry_until_idx`.
      execute: ({ limit, now }) =>
        sql`${from} WHERE r.retry_until IS NOT NULL AND r.retry_until <= ${now}::timestamptz
            ORDER BY r.retry_until, r.id LIMIT ${limit}`
    })
    const listByReference = SqlSchema.findAll({
      Request: ReferencePage,
      Result: OrderRow,
      execute: ({ accountId, limit, reference }) =>
        sql`${from} WHERE r.account_id = ${accountId} AND r.merchant_reference = ${reference}
            ORDER BY r.created_at DESC, r.id DESC LIMIT ${limit}`
    })
    const search = SearchPg.make(sql, {
      from,
      reference: (reference) => sql`r.merchant_reference = ${reference}`,
      Row: OrderRow
    })

    const findMany = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, ids: Schema.Array(Schema.String) }),
      Result: OrderRow,
      execute: ({ accountId, ids }) => sql`${from} WHERE r.id = ANY(${ids}) AND r.account_id = ${accountId}`
    })

    const inTransaction = Effect.map(Effect.serviceOption(sql.transactionService), Option.isSome)

    return OrderRepo.of({
      insert: (order, options) => {
        const refusal = () => duplicateReference(order.merchant_reference)
        const now = insert(order).pipe(
          Effect.orDie,
          Effect.flatMap((inserted) => inserted.length === 0 ? Effect.fail(refusal()) : Effect.void)
        )
        if (options?.refusedWithUnit !== true) return now.pipe(Effect.withSpan("OrderRepoPg.insert"))
        // In a unit of work the insert waits for its flush, which checks the claim (WriteBehind.ts).
        return Effect.flatMap(Effect.orDie(encode(order)), (row) =>
          insertOrDefer({ table: "orders", id: row.id, version: row.version, columns: columns(row), refusal }, now)).pipe(
            Effect.withSpan("OrderRepoPg.insert")
          )
      },
      find: (accountId, id) => find({ accountId, id }).pipe(Effect.orDie),
      findAny: (id) => findAny(id).pipe(Effect.orDie),
      findByReference: (accountId, reference) => findByReference({ accountId, reference }).pipe(Effect.orDie),
      listRetryLapsed: (now, limit) => listRetryLapsed({ now, limit }).pipe(Effect.orDie, Effect.withSpan("OrderRepoPg.listRetryLapsed")),
      listByReference: (accountId, reference, limit) =>
        listByReference({ accountId, reference, limit }).pipe(Effect.orDie),
      lock: (id) =>
        Effect.flatMap(inTransaction, (open) =>
          open ? lock(id).pipe(Effect.orDie) : Effect.die(lockOutsideUnitOfWork("OrderRepo"))),
      update,
      search: (accountId, query) => search(accountId, query).pipe(Effect.withSpan("OrderRepoPg.search")),
      findMany: (accountId, ids) =>
        ids.length === 0 ? Effect.succeed([]) : findMany({ accountId, ids }).pipe(Effect.orDie, Effect.withSpan("OrderRepoPg.findMany"))
    })
  })
)
