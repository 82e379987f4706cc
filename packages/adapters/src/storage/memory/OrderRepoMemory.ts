/**
 * Orders in memory, with PostgreSQL's guarantees: one reference space per account (migration 0027's
 * `order_references` as a table, claimed in the same atomic write as the row), version-checked
 * updates, reads scoped by account, and the bound on `refunded_amount` (migration 0036's trigger). `lock`
 * needs no row lock: the unit of work's permit already serialises every transaction.
 */
import { OrderRepo, Payment } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { duplicateReference, lockOutsideUnitOfWork } from "../Conflicts.ts"
import { append, MemoryDatabase, table, type Writer } from "./MemoryDatabase.ts"
import * as SearchMemory from "./SearchMemory.ts"
import * as VersionedUpdateMemory from "./VersionedUpdateMemory.ts"

export const orders = table<string, Payment.Order>("orders")
/** `order_references`: account and reference → who holds it, a direct payment or transfer (`order`) or checkout sessions. */
const references = table<string, "order" | "sessions">("order_references")
/**
 * The index PostgreSQL keeps on orders' (account_id, merchant_reference): account and reference → the
 * ids of its orders, in insertion order, so that a lookup by reference (one per create) does not scan
 * every order. Written with the row; orders are never deleted and never change their reference.
 */
const byReference = table<string, ReadonlyArray<string>>("orders_by_reference")

const referenceKeyOf = (accountId: string, reference: string) => JSON.stringify([accountId, reference])
const referenceKey = (order: Payment.Order) => referenceKeyOf(order.account_id, order.merchant_reference)

/**
 * False when the reference is taken for this order: by anyone for a direct payment or a transfer,
 * by a direct payment or a transfer for a checkout order (sessions share it among themselves).
 */
const claim = (db: Writer, order: Payment.Order): boolean => {
  const key = referenceKey(order)
  const claimant = order.subtype === "checkout" ? "sessions" : "order"
  const holder = db.get(references).get(key)
  if (holder !== undefined && (holder !== "sessions" || claimant !== "sessions")) return false
  db.mutable(references).set(key, claimant)
  return true
}

/**
 * Migration 0036's trigger: refunds give back at most what arrived, checked on an insert and on an
 * update that changes the bound's columns (an order stored past it before the bound still takes the
 * others). A write past it is a defect, as there.
 */
const checked = (order: Payment.Order, before?: Payment.Order): Payment.Order => {
  const moved = before === undefined || before.refunded_amount !== order.refunded_amount ||
    before.received_amount !== order.received_amount || before.amount !== order.amount
  if (moved && (order.refunded_amount < 0 || order.refunded_amount > Payment.arrivedAmount(order))) {
    throw new Error(`OrderRepoMemory: order ${order.id} refunded ${order.refunded_amount}, beyond the ${Payment.arrivedAmount(order)} that arrived`)
  }
  return order
}

/** The order `findByReference` prefers: the direct payment, else the newest. */
const preferred = (a: Payment.Order, b: Payment.Order) =>
  (a.subtype === "checkout") !== (b.subtype === "checkout") ? (a.subtype !== "checkout" ? -1 : 1) : SearchMemory.oldestFirst(b, a)

/** `ORDER BY retry_until, id`. */
const soonestRetryEnd = (a: Payment.Order, b: Payment.Order) =>
  SearchMemory.compareKeys(SearchMemory.instant(a.retry_until!), a.id, SearchMemory.instant(b.retry_until!), b.id)

export const layer: Layer.Layer<OrderRepo, never, MemoryDatabase> = Layer.effect(
  OrderRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const findAny = (id: string) => db.read((r) => Option.fromNullishOr(r.get(orders).get(id)))
    const withReference = (accountId: string, reference: string) =>
      db.read((r) => {
        const rows = r.get(orders)
        return (r.get(byReference).get(referenceKeyOf(accountId, reference)) ?? []).map((id) => rows.get(id)!)
      })

    return OrderRepo.of({
      insert: (order) =>
        db.write((w) => {
          if (w.get(orders).has(order.id)) throw new Error(`OrderRepoMemory: duplicate order id ${order.id}`)
          if (!claim(w, order)) return Result.fail(duplicateReference(order.merchant_reference))
          w.mutable(orders).set(order.id, checked(order))
          append(w, byReference, referenceKey(order), order.id)
          return Result.succeed(undefined)
        }),
      find: (accountId, id) => Effect.map(findAny(id), Option.filter((order) => order.account_id === accountId)),
      findAny,
      findByReference: (accountId, reference) =>
        Effect.map(withReference(accountId, reference), (candidates) => Option.fromNullishOr(candidates.sort(preferred)[0])),
      listByReference: (accountId, reference, limit) =>
        Effect.map(withReference(accountId, reference), (candidates) =>
          candidates.sort((a, b) => SearchMemory.oldestFirst(b, a)).slice(0, limit)),
      lock: (id) =>
        Effect.flatMap(db.inTransaction, (open) => open ? findAny(id) : Effect.die(lockOutsideUnitOfWork("OrderRepo"))),
      update: (next) =>
        db.write((w) =>
          VersionedUpdateMemory.write(w, orders, "Order", next, (current) => {
            // A reference is claimed once, by the insert; no flow moves an order to another.
            if (referenceKey(current) !== referenceKey(next) || current.subtype !== next.subtype) {
              throw new Error(`OrderRepoMemory: update of ${next.id} changes its merchant_reference or subtype`)
            }
            checked(next, current)
          })
        ),
      listRetryLapsed: (now, limit) =>
        db.read((r) =>
          [...r.get(orders).values()]
            .filter((order) => order.retry_until !== null && SearchMemory.instant(order.retry_until) <= SearchMemory.instant(now))
            .sort(soonestRetryEnd)
            .slice(0, limit)
        ),
      search: (accountId, query) =>
        db.read((r) => SearchMemory.search(r.get(orders).values(), accountId, query, (order) => order.merchant_reference)),
      findMany: (accountId, ids) =>
        db.read((r) => ids.flatMap((id) => {
          const order = r.get(orders).get(id)
          return order !== undefined && order.account_id === accountId ? [order] : []
        }))
    })
  })
)
