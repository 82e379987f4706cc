/** Transactions in memory: version-checked updates, reads scoped by account, PostgreSQL's orderings. */
import { awaitsSettlement, isInFlight, type Payment, TransactionRepo } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { append, MemoryDatabase, table } from "./MemoryDatabase.ts"
import { orders } from "./OrderRepoMemory.ts"
import * as SearchMemory from "./SearchMemory.ts"
import * as VersionedUpdateMemory from "./VersionedUpdateMemory.ts"

export const transactions = table<string, Payment.Transaction>("transactions")
/**
 * An order's transaction ids, as PostgreSQL's index on order_id: reading an order's transactions
 * scanned every transaction (an order's read, the console's story, a bench reading each payment's
 * tries), so each read cost the table's size. Written with the row; transactions are never deleted
 * and never change their order.
 */
const byOrder = table<string, ReadonlyArray<string>>("transactions_by_order")

const isSettling = (t: Payment.Transaction) => awaitsSettlement(t) && t.provider_transaction_id !== null

export const layer: Layer.Layer<TransactionRepo, never, MemoryDatabase> = Layer.effect(
  TransactionRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const findAny = (id: string) => db.read((r) => Option.fromNullishOr(r.get(transactions).get(id)))

    /** The transactions of `orderIds` through the index, PostgreSQL's order (oldest first). */
    const ofOrders = (orderIds: ReadonlyArray<string>) =>
      db.read((r) => {
        const rows = r.get(transactions)
        const index = r.get(byOrder)
        return [...new Set(orderIds)].flatMap((id) => (index.get(id) ?? []).map((txnId) => rows.get(txnId)!)).sort(SearchMemory.oldestFirst)
      })

    return TransactionRepo.of({
      insert: (transaction) =>
        db.write((w) => {
          if (w.get(transactions).has(transaction.id)) {
            throw new Error(`TransactionRepoMemory: duplicate transaction id ${transaction.id}`)
          }
          w.mutable(transactions).set(transaction.id, transaction)
          append(w, byOrder, transaction.order_id, transaction.id)
          return Result.succeed(undefined)
        }),
      find: (accountId, id) => Effect.map(findAny(id), Option.filter((t) => t.account_id === accountId)),
      findAny,
      listByOrder: (orderId) => ofOrders([orderId]),
      listByOrders: ofOrders,
      update: (next) => db.write((w) => VersionedUpdateMemory.write(w, transactions, "Transaction", next)),
      search: (accountId, query) =>
        db.read((r) =>
          SearchMemory.search(
            r.get(transactions).values(),
            accountId,
            query,
            (t) => r.get(orders).get(t.order_id)?.merchant_reference
          )
        ),
      listSettling: (before, limit) =>
        db.read((r) => {
          const at = SearchMemory.instant(before)
          const due = (t: Payment.Transaction) => SearchMemory.instant(t.settlement_check_at ?? t.created_at)
          return [...r.get(transactions).values()]
            .filter((t) => isSettling(t) && due(t) <= at)
            .sort((a, b) => SearchMemory.compareKeys(due(a), a.id, due(b), b.id))
            .slice(0, limit)
        }),
      listExpiredWindows: (now, limit) =>
        db.read((r) => {
          const at = SearchMemory.instant(now)
          const expiry = (t: Payment.Transaction) => SearchMemory.instant(t.expires_at!)
          return [...r.get(transactions).values()]
            .filter((t) => t.expires_at !== null && isInFlight(t.status) && t.pending_call === null && expiry(t) <= at)
            .sort((a, b) => SearchMemory.compareKeys(expiry(a), a.id, expiry(b), b.id))
            .slice(0, limit)
        })
,
      listPendingCalls: (before, limit) =>
        db.read((r) => {
          const due = (t: Payment.Transaction) => t.pending_call!.retry_at ?? t.pending_call!.at
          return [...r.get(transactions).values()]
            .filter((t) => t.pending_call !== null && due(t) <= before)
            .sort((a, b) => due(a).localeCompare(due(b)) || a.id.localeCompare(b.id))
            .slice(0, limit)
        })
    })
  })
)
