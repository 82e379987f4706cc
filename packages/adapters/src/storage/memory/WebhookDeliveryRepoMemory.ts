/**
 * Webhook deliveries and their attempts in memory, with PostgreSQL's guarantees: a claim is one
 * atomic write (so two workers of one process never claim the same row), an attempt lands in the
 * same write as the state it leads to, and both are fenced by the claim's lease token.
 */
import { type AccountId, type ClaimedDelivery, type InFlightCounts, type Webhook, WebhookDeliveryRepo } from "@tender/domain"
import { Effect, Layer, Option, Queue, Result } from "effect"
import { attemptOfAnotherDelivery, deliveryNotStored } from "../Conflicts.ts"
import { statusFilter } from "../Search.ts"
import { accounts } from "./AccountRepoMemory.ts"
import { events } from "./EventRepoMemory.ts"
import { append, MemoryDatabase, table, type Writer } from "./MemoryDatabase.ts"
import { endpoints } from "./WebhookEndpointRepoMemory.ts"
import * as SearchMemory from "./SearchMemory.ts"

export const deliveries = table<string, Webhook.WebhookDelivery>("webhook_deliveries")
/** A delivery's attempts in the order they were recorded. */
export const attempts = table<string, ReadonlyArray<Webhook.DeliveryAttempt>>("webhook_attempts")
/**
 * The deliveries the pause rule paused (PostgreSQL's `paused` column): storage's alone, never part of
 * the record, and left out of the claim as PostgreSQL's index leaves them out.
 */
export const paused = table<string, true>("webhook_deliveries_paused")

const isRetryable = (d: Webhook.WebhookDelivery) => d.status === "pending" || d.status === "failed"

/** `ORDER BY next_attempt_at, id` over deliveries that have a due time. */
const dueFirst = (a: Webhook.WebhookDelivery, b: Webhook.WebhookDelivery) =>
  SearchMemory.compareKeys(
    SearchMemory.instant(a.next_attempt_at!),
    a.id,
    SearchMemory.instant(b.next_attempt_at!),
    b.id
  )

/**
 * Writes a delivery's new state and ends its lease, if the row still carries the lease `next` was
 * written under (the fence); one that was never inserted is a defect, as in PostgreSQL.
 */
const progress = (db: Writer, next: Webhook.WebhookDelivery, gone: "false" | "defect" = "defect"): boolean => {
  const current = db.get(deliveries).get(next.id)
  // Gone, for an update: pruned since it was read (retention), as the fence not holding. A leased
  // delivery, whose attempt is recorded, is never pruned.
  if (current === undefined && gone === "false") return false
  if (current === undefined || current.account_id !== next.account_id) throw deliveryNotStored(next.id)
  if (current.lease_token !== next.lease_token) return false
  // Only what progress changes: the rest of the row is fixed at insert, as in PostgreSQL's UPDATE.
  db.mutable(deliveries).set(next.id, {
    ...current,
    status: next.status,
    attempts: next.attempts,
    next_attempt_at: next.next_attempt_at,
    last_attempt_at: next.last_attempt_at,
    updated_at: next.updated_at,
    lease_token: null
  })
  return true
}

/**
 * Round-robin over accounts (each one's oldest due first, then each one's second…), at most
 * `perAccount` per account and `perEndpoint` per endpoint, from `due` sorted oldest first. As in
 * PostgreSQL, each endpoint's oldest `perEndpoint` are taken first and an account's rank counts only
 * those: rows past their endpoint's bound do not push the account's other endpoints back.
 */
const fairly = (
  due: ReadonlyArray<Webhook.WebhookDelivery>,
  options: { readonly limit: number; readonly perAccount: number; readonly perEndpoint: number; readonly busy?: InFlightCounts | undefined }
) => {
  // Attempts already in flight count first: an account's rank and an endpoint's count start after them.
  const byAccount = new Map<string, number>(options.busy?.accounts)
  const byEndpoint = new Map<string, number>(options.busy?.endpoints)
  const ranked: Array<{ readonly delivery: Webhook.WebhookDelivery; readonly rank: number; readonly order: number }> = []
  due.forEach((delivery, order) => {
    const inEndpoint = (byEndpoint.get(delivery.endpoint_id) ?? 0) + 1
    byEndpoint.set(delivery.endpoint_id, inEndpoint)
    if (inEndpoint > options.perEndpoint) return
    const rank = (byAccount.get(delivery.account_id) ?? 0) + 1
    byAccount.set(delivery.account_id, rank)
    if (rank <= options.perAccount) ranked.push({ delivery, rank, order })
  })
  return ranked
    .sort((a, b) => a.rank - b.rank || a.order - b.order)
    .slice(0, options.limit)
    .sort((a, b) => a.order - b.order)
    .map((r) => r.delivery)
}

/**
 * The dispatchers' wake-ups, per database (every repository over it announces to every listener of
 * it): the in-process counterpart of PostgreSQL's NOTIFY. One sent inside a transaction is early,
 * not lost: the claim it prompts is a write, which waits for the transaction to end.
 */
const listeners = new WeakMap<object, Set<Queue.Queue<void>>>()

const listenersOf = (db: object) => {
  let set = listeners.get(db)
  if (set === undefined) listeners.set(db, set = new Set())
  return set
}

const announce = (db: object) =>
  Effect.sync(() => {
    for (const signal of listenersOf(db)) Queue.offerUnsafe(signal, undefined)
  })

/** Due again without a lease (a retry by hand), as PostgreSQL's trigger announces. */
const dueAgain = (d: Webhook.WebhookDelivery) => isRetryable(d) && d.lease_token === null

export const layer: Layer.Layer<WebhookDeliveryRepo, never, MemoryDatabase> = Layer.effect(
  WebhookDeliveryRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const findAny = (id: string) => db.read((r) => Option.fromNullishOr(r.get(deliveries).get(id)))

    return WebhookDeliveryRepo.of({
      insert: (...stored) =>
        stored.length === 0 ? Effect.void : db.write((w) => {
          for (const delivery of stored) {
            if (w.get(deliveries).has(delivery.id)) {
              throw new Error(`WebhookDeliveryRepoMemory: duplicate delivery id ${delivery.id}`)
            }
            w.mutable(deliveries).set(delivery.id, delivery)
          }
          return Result.succeed(undefined)
        }).pipe(Effect.tap(() => announce(db))),
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
      claimDue: ({ excludeAccounts, excludeEndpoints, lease, leaseUntil, now, ...bounds }) =>
        db.write((w) => {
          const at = SearchMemory.instant(now)
          const excluded = new Set(excludeEndpoints)
          const excludedAccounts = new Set(excludeAccounts)
          // The endpoint's status is checked too, as in PostgreSQL, for what the pause rule missed.
          const disabled = (endpointId: string) => w.get(endpoints).get(endpointId)?.status === "disabled"
          const due = [...w.get(deliveries).values()]
            .filter((d) =>
              isRetryable(d) && d.next_attempt_at !== null && SearchMemory.instant(d.next_attempt_at) <= at &&
              !excluded.has(d.endpoint_id) && !excludedAccounts.has(d.account_id) && !w.get(paused).has(d.id) &&
              !disabled(d.endpoint_id)
            )
            .sort(dueFirst)
          const claimed = fairly(due, bounds).map((d) => ({ ...d, next_attempt_at: leaseUntil, updated_at: now, lease_token: lease }))
          for (const d of claimed) w.mutable(deliveries).set(d.id, d)
          // With what each attempt needs, as PostgreSQL's claim reads it in the same statement.
          return Result.succeed(claimed.map((delivery): ClaimedDelivery => {
            const account = w.get(accounts).get(delivery.account_id as AccountId)
            return {
              delivery,
              event: Option.fromNullishOr(w.get(events).get(delivery.event_id)),
              endpoint: Option.fromNullishOr(w.get(endpoints).get(delivery.endpoint_id)),
              signing: account === undefined ? Option.none() : Option.some({
                signing_secret: account.signing_secret,
                previous_signing_secret: account.previous_signing_secret,
                previous_signing_secret_expires_at: account.previous_signing_secret_expires_at
              })
            }
          }))
        }),
      recordAttempts: (batch) =>
        db.write((w) => {
          if (new Set(batch.map(({ delivery }) => delivery.id)).size < batch.length) {
            throw new Error("WebhookDeliveryRepoMemory.recordAttempts: a delivery twice in one batch")
          }
          for (const { attempt, delivery } of batch) {
            if (attempt.delivery_id !== delivery.id) throw attemptOfAnotherDelivery(attempt.delivery_id, delivery.id)
          }
          return Result.succeed(batch.map(({ attempt, delivery }) => {
            if (!progress(w, delivery)) return false
            append(w, attempts, delivery.id, attempt)
            return true
          }))
        }),
      update: (delivery) =>
        db.write((w) => Result.succeed(progress(w, delivery, "false"))).pipe(
          Effect.tap((written) => written && dueAgain(delivery) ? announce(db) : Effect.void)
        ),
      pause: (decision) =>
        db.write((w) => {
          for (const d of w.get(deliveries).values()) {
            if (d.endpoint_id !== decision.endpoint_id || !decision.statuses.includes(d.status)) continue
            if (decision.paused) w.mutable(paused).set(d.id, true)
            else if (w.get(paused).has(d.id)) w.mutable(paused).delete(d.id)
          }
          return Result.succeed(undefined)
        }).pipe(Effect.tap(() => decision.paused ? Effect.void : announce(db))),
      wakeups: Effect.map(
        Effect.acquireRelease(
          Effect.tap(Queue.sliding<void>(1), (signal) => Effect.sync(() => listenersOf(db).add(signal))),
          (signal) => Effect.sync(() => listenersOf(db).delete(signal))
        ),
        (signal) => ({ next: Queue.take(signal), heard: Effect.succeed(true) })
      ),
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
