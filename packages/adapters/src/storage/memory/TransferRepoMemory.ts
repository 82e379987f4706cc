/**
 * Transfers in memory, with PostgreSQL's guarantees: one transfer per order (a secondary index as a
 * table, like `transfers.order_id UNIQUE`), version-checked updates, reads scoped by account.
 */
import { type MoneyOut, TransferRepo } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { MemoryDatabase, table } from "./MemoryDatabase.ts"
import * as VersionedUpdateMemory from "./VersionedUpdateMemory.ts"

export const transfers = table<string, MoneyOut.Transfer>("transfers")
/** `transfers.order_id UNIQUE`: order → its transfer's id. */
const byOrder = table<string, string>("transfers_order")

export const layer: Layer.Layer<TransferRepo, never, MemoryDatabase> = Layer.effect(
  TransferRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const findAny = (id: string) => db.read((r) => Option.fromNullishOr(r.get(transfers).get(id)))

    return TransferRepo.of({
      insert: (transfer) =>
        db.write((w) => {
          // Defects either way, as PostgreSQL's constraints make them: ids are random, one transfer per order.
          if (w.get(transfers).has(transfer.id)) throw new Error(`TransferRepoMemory: duplicate transfer id ${transfer.id}`)
          if (w.get(byOrder).has(transfer.order_id)) throw new Error(`TransferRepoMemory: order ${transfer.order_id} already has a transfer`)
          w.mutable(transfers).set(transfer.id, transfer)
          w.mutable(byOrder).set(transfer.order_id, transfer.id)
          return Result.succeed(undefined)
        }),
      find: (accountId, id) => Effect.map(findAny(id), Option.filter((t) => t.account_id === accountId)),
      findAny,
      findByOrder: (orderId) =>
        db.read((r) => {
          const id = r.get(byOrder).get(orderId)
          return Option.fromNullishOr(id === undefined ? undefined : r.get(transfers).get(id))
        }),
      update: (next) =>
        db.write((w) =>
          VersionedUpdateMemory.write(w, transfers, "Transfer", next, (current) => {
            if (current.order_id !== next.order_id) throw new Error(`TransferRepoMemory: update of ${next.id} moves it to another order`)
          })
        )
    })
  })
)
