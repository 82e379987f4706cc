/**
 * The provider journal in PostgreSQL (table `provider_journal`, migration 0018), shared by every
 * Tender process on the database: what process A sent, fenced or was told is what B reads.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { outsideUnitOfWork } from "../../storage/postgres/UnitOfWorkPg.ts"
import { type Kind, ProviderJournal, WRITES } from "./ProviderJournal.ts"

export const make: Effect.Effect<ProviderJournal["Service"], never, PgClient.PgClient | SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  const outside = outsideUnitOfWork(yield* SqlClient.SqlClient)
  // Storage failure is a defect, as in every repository.
  const run = <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(Effect.orDie, outside)

  const remember = (scope: string, kind: Kind, key: string, value: unknown) =>
    run(
      WRITES[kind] === "first"
        ? sql`
          INSERT INTO provider_journal (scope, kind, key, value) VALUES (${scope}, ${kind}, ${key}, ${sql.json(value)})
          ON CONFLICT (scope, kind, key) DO NOTHING`
        // created_at stays the first write's: retention counts from when the key was first seen.
        : sql`
          INSERT INTO provider_journal (scope, kind, key, value) VALUES (${scope}, ${kind}, ${key}, ${sql.json(value)})
          ON CONFLICT (scope, kind, key) DO UPDATE SET value = EXCLUDED.value`
    ).pipe(Effect.asVoid)

  const recall = (scope: string, kind: Kind, key: string) =>
    run(sql<{ readonly value: unknown }>`
      SELECT value FROM provider_journal WHERE scope = ${scope} AND kind = ${kind} AND key = ${key}`).pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0]).pipe(Option.map((row) => row.value)))
      )

  return ProviderJournal.of({ remember, recall })
})

export const layer: Layer.Layer<ProviderJournal, never, PgClient.PgClient | SqlClient.SqlClient> = Layer.effect(ProviderJournal, make)
