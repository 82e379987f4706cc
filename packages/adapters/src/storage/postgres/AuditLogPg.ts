/**
 * The console's audit log in PostgreSQL (table `audit_log`, migration 0046): append-only, read newest
 * first by (at, id) — the keyset of every search (SearchPg.ts), with `at` as the page's `created_at`.
 */
import { PgClient } from "@effect/sql-pg"
import { AuditLog, Operator } from "@tender/domain"
import { Effect, Layer, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import { Timestamp } from "./Columns.ts"
import { keyset } from "./SearchPg.ts"

const Row = Schema.Struct({
  id: Schema.String,
  at: Timestamp,
  operator_id: Schema.String,
  operator_name: Schema.String,
  action: Schema.Literals(Operator.CONSOLE_ACTIONS),
  target: Schema.String,
  account_id: Schema.NullOr(Schema.String),
  outcome: Schema.Literals(["succeeded", "failed"]),
  detail: Schema.String,
  created_at: Timestamp
})

export const layer: Layer.Layer<AuditLog, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  AuditLog,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    // `created_at` is `at` under the keyset's name, read through the alias `r` as keyset wants.
    const page = keyset(sql, sql`SELECT * FROM (SELECT *, at AS created_at FROM audit_log) r`, Row)
    return AuditLog.of({
      append: (entry) => Effect.orDie(sql`INSERT INTO audit_log ${sql.insert({ ...entry })}`),
      list: (query) =>
        // No accounts means no entries (and `IN ()` is not SQL).
        query.accounts !== undefined && query.accounts.length === 0 ? Effect.succeed({ data: [], has_more: false }) : page([
          ...(query.operator_id === undefined ? [] : [sql`r.operator_id = ${query.operator_id}`]),
          ...(query.accounts === undefined ? [] : [sql`r.account_id IN ${sql.in(query.accounts)}`])
        ], query)
    })
  })
)
