/** The console's audit log in memory, append-only (the PostgreSQL twin: AuditLogPg.ts). */
import { AuditLog, type Operator } from "@tender/domain"
import { Effect, Layer, Result } from "effect"
import { MemoryDatabase, table } from "./MemoryDatabase.ts"
import { keyset } from "./SearchMemory.ts"

const entries = table<string, Operator.AuditEntry & { readonly created_at: string }>("audit_log")

export const layer: Layer.Layer<AuditLog, never, MemoryDatabase> = Layer.effect(
  AuditLog,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    return AuditLog.of({
      append: (entry) =>
        db.write((w) => {
          w.mutable(entries).set(entry.id, { ...entry, created_at: entry.at })
          return Result.succeed(undefined)
        }),
      list: (query) =>
        db.read((r) => {
          const accounts = query.accounts === undefined ? undefined : new Set(query.accounts)
          return keyset(
            r.get(entries).values(),
            (e) =>
              (query.operator_id === undefined || e.operator_id === query.operator_id) &&
              (accounts === undefined || (e.account_id !== null && accounts.has(e.account_id))),
            query
          )
        })
    })
  })
)
