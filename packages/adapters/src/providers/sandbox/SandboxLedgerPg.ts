/**
 * The sandbox ledger in PostgreSQL (table `sandbox_ledger`, migration 0009), shared by every Tender
 * process on the database, as a real provider's records are shared by all its clients.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { outsideUnitOfWork } from "../../storage/postgres/UnitOfWorkPg.ts"
import { type Entry, FENCED, type Operation, SandboxLedger } from "./SandboxLedger.ts"

interface Row {
  readonly operation: Operation | "fence"
  readonly order_reference: string | null
  readonly result: unknown
}

const FENCE = "fence"

export const layer: Layer.Layer<SandboxLedger, never, PgClient.PgClient | SqlClient.SqlClient> = Layer.effect(
  SandboxLedger,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const client = yield* SqlClient.SqlClient
    // The provider's writes are not part of Tender's transaction: each statement commits at once.
    const outside = outsideUnitOfWork(client)

    const claim = (key: string, entry: Entry) =>
      Effect.gen(function*() {
        const operation = entry._tag === "Fenced" ? FENCE : entry.operation
        const reference = entry._tag === "Fenced" ? null : entry.order_reference
        const result = entry._tag === "Fenced" ? null : sql.json(entry.result)
        // Two statements, not one: a racing insert that committed first is invisible to the
        // snapshot of a single INSERT … ON CONFLICT statement, but the second statement sees it.
        yield* sql`
          INSERT INTO sandbox_ledger (idempotency_key, operation, order_reference, result)
          VALUES (${key}, ${operation}, ${reference}, ${result})
          ON CONFLICT (idempotency_key) DO NOTHING`
        const rows = yield* sql<Row>`
          SELECT operation, order_reference, result FROM sandbox_ledger WHERE idempotency_key = ${key}`
        const row = rows[0]
        if (row === undefined) return yield* Effect.die(new Error(`sandbox_ledger lost the row of ${key}`))
        if (row.operation === FENCE) return FENCED
        return { _tag: "Applied", operation: row.operation, order_reference: row.order_reference ?? "", result: row.result } as Entry
      }).pipe(
        // Storage failure is a defect, as in every repository; a real provider call would time out.
        Effect.orDie,
        outside
      )

    return SandboxLedger.of({ claim })
  })
)
