/**
 * Pruning in memory: the retention rule (Retention.ts) over the memory tables, each batch one atomic
 * write, as PostgreSQL's is one transaction. The memory replay cache is no table of this database:
 * it drops its expired entries itself (ReplayCacheMemory.ts), so `pruneExpired` has nothing to do.
 */
import { Pruning, Retention, type Webhook } from "@tender/domain"
import { Effect, Layer, Result } from "effect"
import { events, positions } from "./EventRepoMemory.ts"
import { MemoryDatabase } from "./MemoryDatabase.ts"
import * as SearchMemory from "./SearchMemory.ts"
import { attempts, deliveries, paused } from "./WebhookDeliveryRepoMemory.ts"

const keyOf = (row: { readonly created_at: string; readonly id: string }) => ({ at: SearchMemory.instant(row.created_at), id: row.id })

export const layer: Layer.Layer<Pruning, never, MemoryDatabase> = Layer.effect(
  Pruning,
  Effect.map(MemoryDatabase, (db) =>
    Pruning.of({
      pruneEvents: ({ after, before, limit }) =>
        db.write((w) => {
          const cut = SearchMemory.instant(before)
          const from = after === undefined ? undefined : keyOf(after)
          const candidates = [...w.get(events).values()]
            .filter((e) => {
              const k = keyOf(e)
              return k.at < cut && (from === undefined || SearchMemory.compareKeys(k.at, k.id, from.at, from.id) > 0)
            })
            .sort(SearchMemory.oldestFirst)
            .slice(0, limit)
          const chosen = new Set(candidates.map((e) => e.id))
          const byEvent = new Map<string, Array<Webhook.WebhookDelivery>>()
          for (const d of w.get(deliveries).values()) {
            if (chosen.has(d.event_id)) byEvent.set(d.event_id, [...(byEvent.get(d.event_id) ?? []), d])
          }
          let removedEvents = 0
          let removedDeliveries = 0
          let removedAttempts = 0
          for (const event of candidates) {
            const own = byEvent.get(event.id) ?? []
            const going = own.filter((d) => Retention.deliveryMayGo(d, before))
            for (const d of going) {
              removedAttempts += w.get(attempts).get(d.id)?.length ?? 0
              w.mutable(attempts).delete(d.id)
              w.mutable(paused).delete(d.id)
              w.mutable(deliveries).delete(d.id)
            }
            removedDeliveries += going.length
            if (Retention.eventMayGo(event, own.length - going.length, before)) {
              w.mutable(events).delete(event.id)
              w.mutable(positions).delete(event.id)
              removedEvents++
            }
          }
          const last = candidates.at(-1)
          return Result.succeed({
            events: removedEvents,
            deliveries: removedDeliveries,
            attempts: removedAttempts,
            scanned: candidates.length,
            last: last === undefined ? undefined : { created_at: last.created_at, id: last.id }
          })
        }),
      pruneExpired: () => Effect.succeed(0)
    }))
)
