/** The event outbox in memory: rows of the same transactional tables as the changes they report. */
import { EventFeed, EventRepo, type Payment } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { MemoryDatabase, table } from "./MemoryDatabase.ts"
import * as SearchMemory from "./SearchMemory.ts"

export const events = table<string, Payment.PaymentEvent>("events")
/**
 * Each stored event's feed position (EventRepo.feed): a sequence taken when it is appended. The
 * database runs one transaction at a time, so events commit in the order they are numbered and a
 * plain `seq > cursor` never skips one (PostgreSQL's feed needs more: EventRepoPg.ts).
 */
export const positions = table<string, bigint>("event_positions")
/** The last position given (key `last`): kept apart from `positions`, which pruning shrinks. */
const lastPosition = table<"last", bigint>("event_last_position")

export const layer: Layer.Layer<EventRepo, never, MemoryDatabase> = Layer.effect(
  EventRepo,
  Effect.map(MemoryDatabase, (db) =>
    EventRepo.of({
      append: (event) =>
        db.write((w) => {
          if (w.get(events).has(event.id)) throw new Error(`EventRepoMemory: duplicate event id ${event.id}`)
          w.mutable(events).set(event.id, event)
          const seq = (w.get(lastPosition).get("last") ?? 0n) + 1n
          w.mutable(lastPosition).set("last", seq)
          w.mutable(positions).set(event.id, seq)
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
      },
      feed: (query) =>
        db.read((r) => {
          const now = r.get(lastPosition).get("last") ?? 0n
          if (query.after === undefined) return { events: [], next: { tx: 0n, seq: now } }
          const after = query.after
          const seqOf = r.get(positions)
          const served = [...r.get(events).values()]
            .map((e) => [e, seqOf.get(e.id)!] as const)
            .filter(([e, seq]) =>
              e.account_id === query.account_id && (query.types === undefined || query.types.includes(e.type)) &&
              EventFeed.isAfter({ tx: 0n, seq }, after)
            )
            .sort(([, a], [, b]) => (a < b ? -1 : a > b ? 1 : 0))
            .slice(0, query.limit)
          const last = served.at(-1)
          // A page short of the limit served everything up to now: the next read starts there.
          const next = served.length === query.limit ? { tx: 0n, seq: last![1] } : EventFeed.later(after, { tx: 0n, seq: now })
          return { events: served.map(([e]) => e), next }
        })
    }))
)
