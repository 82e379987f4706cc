/**
 * The read router (ReadRouting.ts) over a real streaming replica that lags on purpose
 * (`recovery_min_apply_delay`): which server each statement reaches, the primary's second look at a
 * not-found, and reads surviving the replica's loss.
 */
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { configFor, TEST_VAULT_KEY } from "./PgTestDatabase.ts"
import { replicaPair } from "./ReplicaPair.ts"
import * as PgDatabase from "../src/storage/postgres/PgDatabase.ts"
import { preferReplica } from "../src/storage/postgres/ReadRouting.ts"

class Missing {
  readonly _tag = "Missing"
}

describe("reads on a lagging replica", () => {
  it.live("statements reach the replica only when asked and outside transactions; a not-found is asked again of the primary; the replica's loss only costs the primary a read", () =>
    Effect.gen(function*() {
      const pair = yield* replicaPair({ applyDelay: "2s" })
      const config = { ...configFor(".tender-unused", pair.primaryUrl), vaultKey: TEST_VAULT_KEY, readDatabaseUrl: pair.replicaUrl }
      // The migrated database with the router as its client, as Infrastructure builds it.
      const sql = Context.get(yield* Layer.build(PgDatabase.layer(config)), PgClient.PgClient)
      const inRecovery = sql<{ r: boolean }>`SELECT pg_is_in_recovery() AS r`.pipe(Effect.map((rows) => rows[0].r), Effect.orDie)

      yield* sql`CREATE TABLE replica_probe (id text PRIMARY KEY)`
      // Where each statement runs: pg_is_in_recovery() is true only on the replica.
      expect(yield* inRecovery).toBe(false)
      expect(yield* preferReplica(inRecovery, () => false)).toBe(true)
      expect(yield* preferReplica(sql.withTransaction(inRecovery).pipe(Effect.orDie), () => false)).toBe(false)
      // A write beside replica reads: the write's transaction reads and writes the primary.
      expect(yield* preferReplica(
        sql.withTransaction(Effect.andThen(sql`INSERT INTO replica_probe VALUES ('in-tx')`, sql`SELECT id FROM replica_probe`)).pipe(
          Effect.map((rows) => rows.length),
          Effect.orDie
        ),
        () => false
      )).toBe(1)

      // A row just written is not on the lagging replica yet (the table is, once the delay passed);
      // the primary's second look finds it.
      yield* Effect.sleep("2500 millis")
      yield* sql`INSERT INTO replica_probe VALUES ('fresh')`
      let looks = 0
      const find = Effect.suspend(() => {
        looks++
        return sql<{ id: string }>`SELECT id FROM replica_probe WHERE id = 'fresh'`.pipe(
          Effect.orDie,
          Effect.flatMap((rows) => (rows.length === 0 ? Effect.fail(new Missing()) : Effect.succeed(rows[0].id)))
        )
      })
      expect(yield* preferReplica(find, (e) => e._tag === "Missing")).toBe("fresh")
      expect(looks).toBe(2)
      // Read on the replica alone (no second look), it is still missing: the first look was the replica's.
      expect(yield* Effect.option(preferReplica(find, () => false))).toEqual(Option.none())
      // Once the delay has passed the replica has it, and one look suffices.
      yield* Effect.sleep("2500 millis")
      looks = 0
      expect(yield* preferReplica(find, (e) => e._tag === "Missing")).toBe("fresh")
      expect(looks).toBe(1)

      // The replica stops: its pooled connections die mid-read (a defect, read again on the
      // primary) and new ones are refused (the router reads the primary).
      yield* pair.stopReplica
      expect(yield* preferReplica(find, () => false)).toBe("fresh")
      expect(yield* preferReplica(inRecovery, () => false)).toBe(false)
    }).pipe(Effect.scoped), 120_000)
})
