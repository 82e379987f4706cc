/**
 * The payment reads: an order by id (the account's, or any for the operator), by reference; a
 * transaction; the searches; the attempt a hosted page shows. No lock, no decision: what is stored,
 * viewed. Another account's order is not found (404), never forbidden.
 */
import { Effect, Option } from "effect"
import { OrderNotFound, TransactionNotFound } from "../../kernel/Errors.ts"
import { search, type SearchInput } from "../../kernel/Search.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"
import { transactionView } from "../PaymentViews.ts"
import { viewOrder, viewOrders } from "./Snapshot.ts"

/** The account's order (`accountId`), or any account's for the operator (undefined); else 404. */
export const findOrder = (accountId: string | undefined, id: string) =>
  Effect.gen(function*() {
    const orders = yield* OrderRepo
    const found = yield* (accountId === undefined ? orders.findAny(id) : orders.find(accountId, id))
    if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${id}` })
    return found.value
  })

export const getOrder = (accountId: string, id: string) => Effect.flatMap(findOrder(accountId, id), viewOrder)

export const getOrderByReference = (accountId: string, reference: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* OrderRepo).findByReference(accountId, reference)
    if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order with merchant_reference ${reference}` })
    return yield* viewOrder(found.value)
  })

export const getTransaction = (accountId: string, id: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* TransactionRepo).find(accountId, id)
    if (Option.isNone(found)) return yield* new TransactionNotFound({ message: `No transaction ${id}` })
    const order = Option.getOrThrow(yield* (yield* OrderRepo).find(accountId, found.value.order_id))
    return transactionView(order, found.value)
  })

export const searchOrders = (accountId: string, input: SearchInput) =>
  Effect.gen(function*() {
    const orders = yield* OrderRepo
    return yield* search(input, (q) => orders.search(accountId, q), viewOrders)
  })

/** A page of transactions with their orders read in one statement (no N+1). */
export const searchTransactions = (accountId: string, input: SearchInput) =>
  Effect.gen(function*() {
    const orders = yield* OrderRepo
    const transactions = yield* TransactionRepo
    return yield* search(input, (q) => transactions.search(accountId, q), (txns) =>
      Effect.map(orders.findMany(accountId, [...new Set(txns.map((t) => t.order_id))]), (found) => {
        const byId = new Map(found.map((o) => [o.id, o]))
        return txns.map((t) => transactionView(byId.get(t.order_id)!, t))
      }))
  })

/** The attempt a hosted page (sandbox, 3-D Secure) shows, with its order; none when unknown. */
export const hostedAttempt = (transactionId: string) =>
  Effect.gen(function*() {
    const txn = yield* (yield* TransactionRepo).findAny(transactionId)
    if (Option.isNone(txn)) return Option.none()
    return Option.map(yield* (yield* OrderRepo).findAny(txn.value.order_id), (order) => ({ order, transaction: txn.value }))
  })
