/**
 * Refunds and payouts in memory, with PostgreSQL's guarantees: the record's reference unique per
 * account (a secondary index as a table, claimed in the same atomic write as the row),
 * version-checked updates, reads scoped by account. One store shape serves both records.
 */
import { duplicateOutflowReference, type MoneyOut, type OutflowStore, PayoutRepo, RefundRepo } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { MemoryDatabase, type Table, table } from "./MemoryDatabase.ts"
import { oldestFirst } from "./SearchMemory.ts"
import * as VersionedUpdateMemory from "./VersionedUpdateMemory.ts"

type Outflow = MoneyOut.Refund | MoneyOut.Payout

export const refunds = table<string, MoneyOut.Refund>("refunds")
export const payouts = table<string, MoneyOut.Payout>("payouts")

const make = <R extends Outflow>(
  rows: Table<string, R>,
  what: "Refund" | "Payout",
  field: "refund_reference" | "payout_reference",
  referenceOf: (record: R) => string | null
) =>
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    /** `<name>_reference_key`: account and reference → the record's id. */
    const references = table<string, string>(`${rows.name}_reference`)
    const keyOf = (accountId: string, reference: string) => JSON.stringify([accountId, reference])
    const findAny = (id: string) => db.read((r) => Option.fromNullishOr(r.get(rows).get(id)))
    const list = (keep: (record: R) => boolean) => db.read((r) => [...r.get(rows).values()].filter(keep).sort(oldestFirst))

    const store: OutflowStore<R> = {
      insert: (record) =>
        db.write((w) => {
          if (w.get(rows).has(record.id)) throw new Error(`${what}RepoMemory: duplicate id ${record.id}`)
          const reference = referenceOf(record)
          if (reference !== null) {
            const key = keyOf(record.account_id, reference)
            if (w.get(references).has(key)) return Result.fail(duplicateOutflowReference(field, reference))
            w.mutable(references).set(key, record.id)
          }
          w.mutable(rows).set(record.id, record)
          return Result.succeed(undefined)
        }),
      find: (accountId, id) => Effect.map(findAny(id), Option.filter((r) => r.account_id === accountId)),
      findAny,
      findByReference: (accountId, reference) =>
        db.read((r) => {
          const id = r.get(references).get(keyOf(accountId, reference))
          return Option.fromNullishOr(id === undefined ? undefined : r.get(rows).get(id))
        }),
      findByTransaction: (transactionId) => Effect.map(list((r) => r.transaction_id === transactionId), (found) => Option.fromNullishOr(found[0])),
      // A record's reference never changes after insert, so the index stays as it is.
      update: (next) => db.write((w) => VersionedUpdateMemory.write(w, rows, what, next))
    }
    return store
  })

export const refundLayer: Layer.Layer<RefundRepo, never, MemoryDatabase> = Layer.effect(
  RefundRepo,
  make(refunds, "Refund", "refund_reference", (r) => r.refund_reference)
)

export const payoutLayer: Layer.Layer<PayoutRepo, never, MemoryDatabase> = Layer.effect(
  PayoutRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const store = yield* make(payouts, "Payout", "payout_reference", (p) => p.payout_reference)
    return PayoutRepo.of({
      ...store,
      // The memory database runs one unit of work at a time: that is the lock.
      lockedDayTotal: (accountId, currency, from, to) =>
        db.read((r) =>
          [...r.get(payouts).values()]
            .filter((p) => p.account_id === accountId && p.currency === currency && p.status !== "failed" && p.created_at >= from && p.created_at < to)
            .reduce((sum, p) => sum + p.amount, 0)
        )
    })
  })
)
