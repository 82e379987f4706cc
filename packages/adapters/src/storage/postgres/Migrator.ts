/**
 * Applies pending migrations, all in one transaction, under a transaction-scoped advisory lock:
 * a second process migrating at the same time waits for the first, then finds nothing left to do.
 * A migration's TypeScript step (one that needs the vault key) runs in the same transaction.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type Migration, migrations as all } from "./migrations/index.ts"

/** `hashtext` of a fixed name keeps the lock key readable in `pg_locks` queries and out of the code. */
const LOCK = "SELECT pg_advisory_xact_lock(hashtext('tender_migrations'))"

export const run = (migrations: ReadonlyArray<Migration> = all) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql.unsafe(LOCK)
      yield* sql`CREATE TABLE IF NOT EXISTS tender_migrations (
        name text PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`
      const rows = yield* sql<{ readonly name: string }>`SELECT name FROM tender_migrations`
      const done = new Set(rows.map((row) => row.name))
      const applied: Array<string> = []
      for (const migration of migrations) {
        if (done.has(migration.name)) continue
        for (const statement of migration.statements) yield* sql.unsafe(statement)
        if (migration.run !== undefined) yield* migration.run
        yield* sql`INSERT INTO tender_migrations (name) VALUES (${migration.name})`
        applied.push(migration.name)
      }
      return applied as ReadonlyArray<string>
    }))
  }).pipe(Effect.withSpan("Migrator.run"))
