/**
 * Checkout sessions in memory, with PostgreSQL's guarantees: at most one open, pending_action or
 * completed session per reference and account (a secondary index as a table, claimed and released
 * in the same atomic write as the row, like migration 0005's partial unique index), one session per
 * order, version-checked updates, reads scoped by account. `lock` needs no row lock: the unit of
 * work's permit already serialises every transaction.
 */
import { CheckoutSession, CheckoutSessionRepo } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { duplicateSessionReference, lockOutsideUnitOfWork } from "../Conflicts.ts"
import { MemoryDatabase, table, type Writer } from "./MemoryDatabase.ts"
import * as SearchMemory from "./SearchMemory.ts"
import * as VersionedUpdateMemory from "./VersionedUpdateMemory.ts"

type Row = CheckoutSession.CheckoutSession

export const sessions = table<string, Row>("checkout_sessions")
/** `checkout_sessions_live_reference_key`: account and reference → the blocking session's id. */
const liveReferences = table<string, string>("checkout_sessions_live_reference")
/** `checkout_sessions_order_key`: order → its session's id. */
const byOrder = table<string, string>("checkout_sessions_order")

const referenceKey = (session: Row) =>
  CheckoutSession.referenceBlocks(session.status) ? JSON.stringify([session.account_id, session.merchant_reference]) : undefined

/** False when another open, pending_action or completed session holds the reference. */
const claimReference = (db: Writer, session: Row): boolean => {
  const key = referenceKey(session)
  if (key === undefined) return true
  const holder = db.get(liveReferences).get(key)
  if (holder !== undefined && holder !== session.id) return false
  db.mutable(liveReferences).set(key, session.id)
  return true
}

const releaseReference = (db: Writer, session: Row) => {
  const key = referenceKey(session)
  if (key !== undefined) db.mutable(liveReferences).delete(key)
}

/** A defect either way, as PostgreSQL's unique index makes it: the use case assigns each session its own order. */
const claimOrder = (db: Writer, session: Row) => {
  const holder = db.get(byOrder).get(session.order_id)
  if (holder !== undefined && holder !== session.id) {
    throw new Error(`CheckoutSessionRepoMemory: order ${session.order_id} already has session ${holder}`)
  }
  db.mutable(byOrder).set(session.order_id, session.id)
}

const isOverdue = (at: number) => (session: Row) =>
  CheckoutSession.isLive(session.status) && SearchMemory.instant(session.expires_at) <= at

/** `ORDER BY expires_at, id`. */
const soonestExpiry = (a: Row, b: Row) =>
  SearchMemory.compareKeys(SearchMemory.instant(a.expires_at), a.id, SearchMemory.instant(b.expires_at), b.id)

export const layer: Layer.Layer<CheckoutSessionRepo, never, MemoryDatabase> = Layer.effect(
  CheckoutSessionRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const findAny = (id: string) => db.read((r) => Option.fromNullishOr(r.get(sessions).get(id)))

    return CheckoutSessionRepo.of({
      insert: (session) =>
        db.write((w) => {
          if (w.get(sessions).has(session.id)) {
            throw new Error(`CheckoutSessionRepoMemory: duplicate session id ${session.id}`)
          }
          if (!claimReference(w, session)) return Result.fail(duplicateSessionReference(session.merchant_reference))
          claimOrder(w, session)
          w.mutable(sessions).set(session.id, session)
          return Result.succeed(undefined)
        }),
      find: (accountId, id) => Effect.map(findAny(id), Option.filter((session) => session.account_id === accountId)),
      findAny,
      findByOrder: (orderId) =>
        db.read((r) => {
          const id = r.get(byOrder).get(orderId)
          return Option.fromNullishOr(id === undefined ? undefined : r.get(sessions).get(id))
        }),
      findNewestByReference: (accountId, reference) =>
        db.read((r) => {
          const candidates = [...r.get(sessions).values()].filter((session) =>
            session.account_id === accountId && session.merchant_reference === reference
          )
          return Option.fromNullishOr(candidates.sort((a, b) => SearchMemory.oldestFirst(b, a))[0])
        }),
      lock: (id) =>
        Effect.flatMap(
          db.inTransaction,
          (open) => open ? findAny(id) : Effect.die(lockOutsideUnitOfWork("CheckoutSessionRepo"))
        ),
      update: (next) =>
        db.write((w) =>
          VersionedUpdateMemory.write(w, sessions, "CheckoutSession", next, (current) => {
            releaseReference(w, current)
            // A clash here is an update that revived a session, or moved it onto a reference another
            // blocking session holds: PostgreSQL's unique index makes that a defect too.
            if (!claimReference(w, next)) {
              throw new Error(`CheckoutSessionRepoMemory: update of ${next.id} duplicates a live merchant_reference`)
            }
            w.mutable(byOrder).delete(current.order_id)
            claimOrder(w, next)
          })
        ),
      search: (accountId, query) =>
        db.read((r) => SearchMemory.search(r.get(sessions).values(), accountId, query, (session) => session.merchant_reference)),
      listOverdue: (now, limit) =>
        db.read((r) =>
          [...r.get(sessions).values()].filter(isOverdue(SearchMemory.instant(now))).sort(soonestExpiry).slice(0, limit)
        )
    })
  })
)
