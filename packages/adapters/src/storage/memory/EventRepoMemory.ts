/** The event outbox in memory: rows of the same transactional tables as the changes they report. */
import { EventRepo, type Payment } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { MemoryDatabase, table } from "./MemoryDatabase.ts"
import * as SearchMemory from "./SearchMemory.ts"

export const events = table<string, Payment.PaymentEvent>("events")

export const layer: Layer.Layer<EventRepo, never, MemoryDatabase> = Layer.effect(
  EventRepo,
  Effect.map(MemoryDatabase, (db) =>
    EventRepo.of({
      append: (event) =>
        db.write((w) => {
          if (w.get(events).has(event.id)) throw new Error(`EventRepoMemory: duplicate event id ${event.id}`)
          w.mutable(events).set(event.id, event)
          return Result.succeed(undefined)
        }),
      listByOrder: (orderId) =>
        // Oldest first; the sort is stable, so events of one millisecond keep their insertion order
        // (a Map's), which is the order they were recorded in.
        db.read((r) =>
          [...r.get(events).values()].filter((e) => e.order_id === orderId).sort((a, b) =>
            a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0
          )),
      findAny: (id) => db.read((r) => Option.fromNullishOr(r.get(events).get(id))),
      search: (query) => {
        const since = SearchMemory.createdFrom(query.created_from)
        return db.read((r) =>
          SearchMemory.keyset(r.get(events).values(), (e) =>
            (query.account_id === undefined || e.account_id === query.account_id) &&
            (query.type === undefined || e.type === query.type) &&
            since(e), query)
        )
      }
    }))
)
