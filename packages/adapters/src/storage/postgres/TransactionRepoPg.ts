/**
 * Transactions in PostgreSQL: one row per attempt at the provider, every read by id scoped by
 * account except the operator's `findAny`. Search filters `merchant_reference` on the order's.
 */
import { PgClient } from "@effect/sql-pg"
import { Payment, TransactionRepo } from "@tender/domain"
import { Effect, Layer, Schema } from "effect"
import { type SqlClient, SqlSchema } from "effect/sql"
import { VaultCipher } from "../../crypto/VaultCipher.ts"
import { jsonb, MinorUnits, Timestamp } from "./Columns.ts"
import { sealingClientSecrets } from "./SealedClientSecrets.ts"
import * as SearchPg from "./SearchPg.ts"
import * as VersionedUpdate from "./VersionedUpdate.ts"
import { insertOrDefer } from "./WriteBehind.ts"

const StoredTransaction = Schema.Struct({
  ...Payment.Transaction.fields,
  amount: MinorUnits,
  expires_at: Schema.NullOr(Timestamp),
  settlement_check_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp
})

const Key = Schema.Struct({ accountId: Schema.String, id: Schema.String })
const Due = Schema.Struct({ now: Schema.String, limit: Schema.Int })

export const layer: Layer.Layer<TransactionRepo, never, SqlClient.SqlClient | PgClient.PgClient | VaultCipher> = Layer.effect(
  TransactionRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    // A card form's client secret (next_action) is stored sealed (SealedClientSecrets.ts).
    const TransactionRow = sealingClientSecrets(yield* VaultCipher, StoredTransaction)
    const json = jsonb(sql)
    const columns = (row: typeof TransactionRow.Encoded) => ({
      ...row,
      payment_instrument: json(row.payment_instrument),
      next_action: json(row.next_action),
      pending_call: json(row.pending_call),
      routing: json(row.routing)
    })
    const from = sql`SELECT r.* FROM transactions r`

    const encode = Schema.encodeEffect(TransactionRow)
    const insert = (transaction: Payment.Transaction) =>
      Effect.flatMap(encode(transaction), (row) =>
        insertOrDefer(
          { table: "transactions", id: row.id, version: row.version, columns: columns(row) },
          sql`INSERT INTO transactions ${sql.insert(columns(row))}`
        ))
    const update = VersionedUpdate.make(sql, { table: "transactions", what: "Transaction", Row: TransactionRow, columns, deferred: "transactions" })
    const find = SqlSchema.findOneOption({
      Request: Key,
      Result: TransactionRow,
      execute: ({ accountId, id }) => sql`${from} WHERE r.id = ${id} AND r.account_id = ${accountId}`
    })
    const findAny = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: TransactionRow,
      execute: (id) => sql`${from} WHERE r.id = ${id}`
    })
    const listByOrder = SqlSchema.findAll({
      Request: Schema.String,
      Result: TransactionRow,
      execute: (orderId) => sql`${from} WHERE r.order_id = ${orderId} ORDER BY r.created_at, r.id`
    })
    const listByOrders = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: TransactionRow,
      // One statement for a whole search page, whatever its size (`transactions_order_idx` serves each id).
      execute: (orderIds) => sql`${from} WHERE r.order_id = ANY(${orderIds}) ORDER BY r.created_at, r.id`
    })
    const listSettling = SqlSchema.findAll({
      Request: Schema.Struct({ before: Schema.String, limit: Schema.Int }),
      Result: TransactionRow,
      // Exactly the predicate and key of `transactions_settling_idx` (migration 0033; the predicate is
      // TransactionStatus.awaitsSettlement's), so the worker's poll reads only what is due.
      execute: ({ before, limit }) =>
        sql`${from}
            WHERE ((r.kind = 'capture' AND r.status = 'processing') OR (r.kind IN ('refund', 'payout', 'transfer') AND r.status IN ('pending', 'processing')))
              AND r.provider_transaction_id IS NOT NULL AND r.pending_call IS NULL
              AND coalesce(r.settlement_check_at, r.created_at) <= ${before}
            ORDER BY coalesce(r.settlement_check_at, r.created_at), r.id LIMIT ${limit}`
    })
    const listPendingCalls = SqlSchema.findAll({
      Request: Schema.Struct({ before: Schema.String, limit: Schema.Int }),
      Result: TransactionRow,
      // The predicate of `transactions_pending_call_idx`: ISO timestamps of one format order as text.
      execute: ({ before, limit }) =>
        sql`${from}
            WHERE r.pending_call IS NOT NULL AND coalesce(r.pending_call->>'retry_at', r.pending_call->>'at') <= ${before}
            ORDER BY coalesce(r.pending_call->>'retry_at', r.pending_call->>'at'), r.id LIMIT ${limit}`
    })
    const listExpiredWindows = SqlSchema.findAll({
      Request: Due,
      Result: TransactionRow,
      // Exactly the predicate and order of `transactions_window_idx` (migration 0008); the statuses
      // are TransactionStatus's in-flight ones.
      execute: ({ limit, now }) =>
        sql`${from}
            WHERE r.expires_at IS NOT NULL AND r.status IN ('initial', 'pending', 'processing') AND r.pending_call IS NULL
              AND r.expires_at <= ${now}
            ORDER BY r.expires_at, r.id LIMIT ${limit}`
    })
    const search = SearchPg.make(sql, {
      from,
      // `orders_reference_idx` finds the orders, `transactions_order_idx` their transactions (issue
      // 13, growth). That index is in the column's default collation while `orders.id` is "C": compared
      // as "C", the ids could not use it and the planner scanned every transaction of the account.
      // Equality is the same under both; the account is a value, so the subquery runs once.
      reference: (reference, accountId) =>
        sql`r.order_id IN (
          SELECT o.id COLLATE "default" FROM orders o WHERE o.account_id = ${accountId} AND o.merchant_reference = ${reference})`,
      Row: TransactionRow
    })

    return TransactionRepo.of({
      insert: (transaction) =>
        insert(transaction).pipe(Effect.asVoid, Effect.orDie, Effect.withSpan("TransactionRepoPg.insert")),
      find: (accountId, id) => find({ accountId, id }).pipe(Effect.orDie),
      findAny: (id) => findAny(id).pipe(Effect.orDie),
      listByOrder: (orderId) => listByOrder(orderId).pipe(Effect.orDie),
      listByOrders: (orderIds) =>
        orderIds.length === 0 ? Effect.succeed([]) : listByOrders(orderIds).pipe(Effect.orDie, Effect.withSpan("TransactionRepoPg.listByOrders")),
      update,
      search: (accountId, query) => search(accountId, query).pipe(Effect.withSpan("TransactionRepoPg.search")),
      listSettling: (before, limit) => listSettling({ before, limit }).pipe(Effect.orDie, Effect.withSpan("TransactionRepoPg.listSettling")),
      listExpiredWindows: (now, limit) =>
        listExpiredWindows({ now, limit }).pipe(Effect.orDie, Effect.withSpan("TransactionRepoPg.listExpiredWindows")),
      listPendingCalls: (before, limit) =>
        listPendingCalls({ before, limit }).pipe(Effect.orDie, Effect.withSpan("TransactionRepoPg.listPendingCalls"))
    })
  })
)
