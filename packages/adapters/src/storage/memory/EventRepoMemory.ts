/** The event outbox in memory: rows of the same transactional tables as the changes they report. */
import { EventRepo, type Payment } from "@tender/domain"
import { Effect, Layer, Result } from "effect"
import { MemoryDatabase, table } from "./MemoryDatabase.ts"
import { oldestFirst } from "./SearchMemory.ts"

const events = table<string, Payment.PaymentEvent>("events")

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
        db.read((r) => [...r.get(events).values()].filter((e) => e.order_id === orderId).sort(oldestFirst))
    }))
)
