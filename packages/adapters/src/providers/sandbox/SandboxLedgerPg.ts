/**
 * The sandbox ledger in PostgreSQL (table `sandbox_ledger`, migration 0009), shared by every Tender
 * process on the database, as a real provider's records are shared by all its clients. Its writes
 * commit on their own, but inside Tender's transaction when the caller asks for it
 * (ProviderRecordsInUnitOfWork): the sandbox then answers in Tender's unit of work.
 */
import { PgClient } from "@effect/sql-pg"
import { ProviderRecordsInUnitOfWork } from "@tender/domain"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { outsideUnitOfWork } from "../../storage/postgres/UnitOfWorkPg.ts"
import { WriteBehind } from "../../storage/postgres/WriteBehind.ts"
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

    const claimNow = (key: string, entry: Entry) =>
      Effect.gen(function*() {
        const operation = entry._tag === "Fenced" ? FENCE : entry.operation
        const reference = entry._tag === "Fenced" ? null : entry.order_reference
        const result = entry._tag === "Fenced" ? null : sql.json(entry.result)
        // The insert answers the row it wrote (the usual case: one statement). When it wrote none, a
        // racing insert that committed first is invisible to its snapshot, but a second statement
        // sees it.
        const inserted = yield* sql<Row>`
          INSERT INTO sandbox_ledger (idempotency_key, operation, order_reference, result)
          VALUES (${key}, ${operation}, ${reference}, ${result})
          ON CONFLICT (idempotency_key) DO NOTHING
          RETURNING operation, order_reference, result`
        const rows = inserted.length > 0 ? inserted : yield* sql<Row>`
          SELECT operation, order_reference, result FROM sandbox_ledger WHERE idempotency_key = ${key}`
        const row = rows[0]
        if (row === undefined) return yield* Effect.die(new Error(`sandbox_ledger lost the row of ${key}`))
        if (row.operation === FENCE) return FENCED
        return { _tag: "Applied", operation: row.operation, order_reference: row.order_reference ?? "", result: row.result } as Entry
      }).pipe(
        // Storage failure is a defect, as in every repository; a real provider call would time out.
        Effect.orDie
      )
    // Inside the unit of work that reserves and records the call only when the caller says so
    // (ProviderRecordsInUnitOfWork): then ours and the provider's commit together or not at all.
    const claim = (key: string, entry: Entry) =>
      Effect.flatMap(ProviderRecordsInUnitOfWork, (joined) => (joined ? joinedClaim(key, entry) : outside(claimNow(key, entry))))

    /**
     * The claim in the unit of work that reserved the key (ProviderStep.joined): no one else can know
     * the key before that unit commits, so the claim is ours, and its row waits for the unit's one
     * statement (WriteBehind.ts). Should the key be taken after all, the unit fails whole on it.
     */
    const joinedClaim = (key: string, entry: Entry): Effect.Effect<Entry> =>
      Effect.flatMap(Effect.serviceOption(WriteBehind), (pending) =>
        // A fence is a lookup's, of a key someone else reserved: it is read, never assumed.
        Option.isNone(pending) || entry._tag === "Fenced" ? claimNow(key, entry) : Effect.sync(() => {
          pending.value.insert({
            table: "sandbox_ledger",
            id: key,
            version: undefined,
            columns: {
              idempotency_key: key,
              operation: entry.operation,
              order_reference: entry.order_reference,
              result: sql.json(entry.result)
            }
          })
          return entry
        }))

    return SandboxLedger.of({ claim, joinsUnitOfWork: true })
  })
)
