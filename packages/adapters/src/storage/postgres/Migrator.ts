/**
 * Applies pending migrations, all in one transaction, under a transaction-scoped advisory lock:
 * a second process migrating at the same time waits for the first, then finds nothing left to do.
 * A migration's TypeScript step (one that needs the vault key) runs in the same transaction.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { InfrastructureError } from "../../InfrastructureError.ts"
import { type Migration, migrations as all } from "./migrations/index.ts"

/** `hashtext` of a fixed name keeps the lock key readable in `pg_locks` queries and out of the code. */
const LOCK = "SELECT pg_advisory_xact_lock(hashtext('tender_migrations'))"

/**
 * A database a later Tender has migrated (its migrations are not all in this build) is refused: this
 * code does not know the tables and constraints those migrations made, and would write past them
 * (decisions.md, "Start-up failures"). Running an older Tender needs the database it migrated.
 */
const refuseUnknown = (done: ReadonlySet<string>, migrations: ReadonlyArray<Migration>) => {
  const known = new Set(migrations.map((migration) => migration.name))
  const unknown = [...done].filter((name) => !known.has(name)).sort()
  if (unknown.length === 0) return Effect.void
  const newest = migrations.map((migration) => migration.name).sort().at(-1) ?? "none"
  // Names sort by their number: one past this build's newest is a later Tender's; one within its
  // range is a migration this build does not have under that name (renamed or dropped in development).
  const later = unknown.filter((name) => name > newest)
  return Effect.fail(
    new InfrastructureError({
      message: later.length > 0
        ? `the database has migrations this build of Tender does not know (the database's newest: ${later.at(-1)}; ` +
          `this build's newest: ${newest}): upgrade Tender to the version that applied them`
        : `the database has migrations this build of Tender never had (${unknown.join(", ")}; renamed or dropped in ` +
          `development?): use a database (or a data directory) that this build migrated`
    })
  )
}

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
      yield* refuseUnknown(done, migrations)
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
