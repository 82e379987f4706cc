/**
 * Webhook deliveries and their attempts in memory, with PostgreSQL's guarantees: a claim is one
 * atomic write (so two workers of one process never claim the same row), and an attempt lands in
 * the same write as the state it leads to.
 */
import { type Webhook, WebhookDeliveryRepo } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { attemptOfAnotherDelivery, deliveryNotStored } from "../Conflicts.ts"
import { statusFilter } from "../Search.ts"
import { MemoryDatabase, table, type Writer } from "./MemoryDatabase.ts"
import * as SearchMemory from "./SearchMemory.ts"

const deliveries = table<string, Webhook.WebhookDelivery>("webhook_deliveries")
/** A delivery's attempts in the order they were recorded. */
const attempts = table<string, ReadonlyArray<Webhook.DeliveryAttempt>>("webhook_attempts")

const isRetryable = (d: Webhook.WebhookDelivery) => d.status === "pending" || d.status === "failed"

/** `ORDER BY next_attempt_at, id` over deliveries that have a due time. */
const dueFirst = (a: Webhook.WebhookDelivery, b: Webhook.WebhookDelivery) =>
  SearchMemory.compareKeys(
    SearchMemory.instant(a.next_attempt_at!),
    a.id,
    SearchMemory.instant(b.next_attempt_at!),
    b.id
  )

/** Writes a delivery's new state; one that was never inserted is a defect, as in PostgreSQL. */
const progress = (db: Writer, next: Webhook.WebhookDelivery) => {
  const current = db.get(deliveries).get(next.id)
  if (current === undefined || current.account_id !== next.account_id) {
    throw deliveryNotStored(next.id)
  }
  // Only what progress changes: the rest of the row is fixed at insert, as in PostgreSQL's UPDATE.
  db.mutable(deliveries).set(next.id, {
    ...current,
    status: next.status,
    attempts: next.attempts,
    next_attempt_at: next.next_attempt_at,
    last_attempt_at: next.last_attempt_at,
    updated_at: next.updated_at
  })
}

export const layer: Layer.Layer<WebhookDeliveryRepo, never, MemoryDatabase> = Layer.effect(
  WebhookDeliveryRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const findAny = (id: string) => db.read((r) => Option.fromNullishOr(r.get(deliveries).get(id)))

    return WebhookDeliveryRepo.of({
      insert: (delivery) =>
        db.write((w) => {
          if (w.get(deliveries).has(delivery.id)) {
            throw new Error(`WebhookDeliveryRepoMemory: duplicate delivery id ${delivery.id}`)
          }
          w.mutable(deliveries).set(delivery.id, delivery)
          return Result.succeed(undefined)
        }),
      find: (accountId, id) => Effect.map(findAny(id), Option.filter((d) => d.account_id === accountId)),
      findAny,
      search: (query) => {
        const status = statusFilter(query)
        const since = SearchMemory.createdFrom(query.created_from)
        return db.read((r) =>
          SearchMemory.keyset(r.get(deliveries).values(), (d) =>
            (query.account_id === undefined || d.account_id === query.account_id) &&
            (query.endpoint_id === undefined || d.endpoint_id === query.endpoint_id) &&
            (query.event_id === undefined || d.event_id === query.event_id) &&
            (status === undefined || status.includes(d.status)) &&
            since(d), query)
        )
      },
      claimDue: ({ excludeEndpoints, leaseUntil, limit, now }) =>
        db.write((w) => {
          const at = SearchMemory.instant(now)
          const excluded = new Set(excludeEndpoints)
          const due = [...w.get(deliveries).values()]
            .filter((d) =>
              isRetryable(d) && d.next_attempt_at !== null && SearchMemory.instant(d.next_attempt_at) <= at &&
              !excluded.has(d.endpoint_id)
            )
            .sort(dueFirst)
            .slice(0, limit)
          const claimed = due.map((d) => ({ ...d, next_attempt_at: leaseUntil, updated_at: now }))
          for (const d of claimed) w.mutable(deliveries).set(d.id, d)
          return Result.succeed(claimed)
        }),
      recordAttempt: (delivery, attempt) =>
        db.write((w) => {
          if (attempt.delivery_id !== delivery.id) {
            throw attemptOfAnotherDelivery(attempt.delivery_id, delivery.id)
          }
          progress(w, delivery)
          w.mutable(attempts).set(delivery.id, [...(w.get(attempts).get(delivery.id) ?? []), attempt])
          return Result.succeed(undefined)
        }),
      update: (delivery) =>
        db.write((w) => {
          progress(w, delivery)
          return Result.succeed(undefined)
        }),
      attempts: (deliveryId) =>
        db.read((r) =>
          // Stable: attempts of the same instant keep the order they were recorded in, like `seq`.
          [...(r.get(attempts).get(deliveryId) ?? [])].sort((a, b) =>
            SearchMemory.instant(a.attempted_at) - SearchMemory.instant(b.attempted_at)
          )
        )
    })
  })
)
