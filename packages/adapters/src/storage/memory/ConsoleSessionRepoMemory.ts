/** Console sessions in memory, by the hash of their token (the PostgreSQL twin: ConsoleSessionRepoPg.ts). */
import { ConsoleSessionRepo, type Operator } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { MemoryDatabase, table } from "./MemoryDatabase.ts"

const sessions = table<string, Operator.ConsoleSession>("console_sessions")

export const layer: Layer.Layer<ConsoleSessionRepo, never, MemoryDatabase> = Layer.effect(
  ConsoleSessionRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const change = (f: (rows: Map<string, Operator.ConsoleSession>) => void) =>
      db.write((w) => {
        f(w.mutable(sessions))
        return Result.succeed(undefined)
      })
    return ConsoleSessionRepo.of({
      insert: (session) => change((rows) => rows.set(session.token_hash, session)),
      find: (tokenHash) => db.read((r) => Option.fromNullishOr(r.get(sessions).get(tokenHash))),
      touch: (tokenHash, lastSeenAt) =>
        change((rows) => {
          const session = rows.get(tokenHash)
          if (session !== undefined) rows.set(tokenHash, { ...session, last_seen_at: lastSeenAt })
        }),
      remove: (tokenHash) => change((rows) => rows.delete(tokenHash)),
      removeForOperator: (operatorId) =>
        change((rows) => {
          for (const [hash, session] of rows) if (session.operator_id === operatorId) rows.delete(hash)
        }),
      removeExpired: ({ createdBefore, lastSeenBefore, limit }) =>
        db.write((w) => {
          const rows = w.mutable(sessions)
          let removed = 0
          for (const [hash, session] of rows) {
            if (removed >= limit) break
            // ISO 8601 in UTC, all of one length: compared as text, in time order.
            if (session.last_seen_at < lastSeenBefore || session.created_at < createdBefore) {
              rows.delete(hash)
              removed++
            }
          }
          return Result.succeed(removed)
        })
    })
  })
)
