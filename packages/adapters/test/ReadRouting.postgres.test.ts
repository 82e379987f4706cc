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
import { lagMeter, preferReplica } from "../src/storage/postgres/ReadRouting.ts"

class Missing {
  readonly _tag = "Missing"
}

/** The router over a fresh primary and replica pair (the migrated database, as Infrastructure builds it). */
const routedPair = (applyDelay: string, readMaxLagMs?: number) =>
  Effect.gen(function*() {
    const pair = yield* replicaPair({ applyDelay })
    const config = { ...configFor(".tender-unused", pair.primaryUrl), vaultKey: TEST_VAULT_KEY, readDatabaseUrl: pair.replicaUrl, readMaxLagMs }
    const sql = Context.get(yield* Layer.build(PgDatabase.layer(config)), PgClient.PgClient)
    const inRecovery = sql<{ r: boolean }>`SELECT pg_is_in_recovery() AS r`.pipe(Effect.map((rows) => rows[0].r), Effect.orDie)
    return { pair, sql, inRecovery }
  })

describe("the replica's lag, measured in time", () => {
  it("is the time since the newest primary position the replica has replayed; 0 once it has replayed the newest", () => {
    const meter = lagMeter()
    expect(meter.record(1_000, "0/100", "0/100")).toBe(0)
    // The primary moves on; the replica replays it later.
    expect(meter.record(1_200, "0/200", "0/100")).toBe(200)
    expect(meter.record(1_400, "0/300", "0/1FF")).toBe(400)
    expect(meter.record(1_600, "0/300", "0/200")).toBe(400)
    expect(meter.record(1_800, "0/300", "0/300")).toBe(0)
    // Positions past 4 GB (the high word) order as numbers, not as text.
    expect(meter.record(2_000, "1/0", "0/FFFFFFFF")).toBe(200)
    expect(meter.record(2_200, "1/0", "1/0")).toBe(0)
    // A server not in recovery (no replay position) is as current as can be.
    expect(meter.record(2_400, "1/10", null)).toBe(0)
  })
})

describe("reads on a lagging replica", () => {
  it.live("statements reach the replica only when asked and outside transactions; a not-found is asked again of the primary; the replica's loss only costs the primary a read", () =>
    Effect.gen(function*() {
      const { inRecovery, pair, sql } = yield* routedPair("2s")

      yield* sql`CREATE TABLE replica_probe (id text PRIMARY KEY)`
      // Until the replica has replayed the migrations and the table it is not read (it is behind).
      expect(yield* preferReplica(inRecovery, () => false)).toBe(false)
      yield* Effect.sleep("2500 millis")
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

      // A row just written is not on the lagging replica yet; the primary's second look finds it.
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

  it.live("a replica further behind than TENDER_READ_MAX_LAG_MS is not read until it catches up", () =>
    Effect.gen(function*() {
      const { inRecovery, sql } = yield* routedPair("2s", 700)
      yield* sql`CREATE TABLE lag_probe (id text PRIMARY KEY)`
      yield* Effect.sleep("2500 millis")
      expect(yield* preferReplica(inRecovery, () => false)).toBe(true)
      yield* sql`INSERT INTO lag_probe VALUES ('fresh')`
      const find = sql<{ id: string }>`SELECT id FROM lag_probe`.pipe(Effect.map((rows) => rows.map((r) => r.id)), Effect.orDie)
      // Just written: the replica is not yet measured behind, and does not have the row.
      expect(yield* preferReplica(find, () => false)).toEqual([])
      // Over 700 ms behind now (and the 2 s delay not over): reads go to the primary, which has it.
      yield* Effect.sleep("1200 millis")
      expect(yield* preferReplica(inRecovery, () => false)).toBe(false)
      expect(yield* preferReplica(find, () => false)).toEqual(["fresh"])
      // Once the delay has passed it has replayed the insert, and is read again.
      yield* Effect.sleep("2000 millis")
      expect(yield* preferReplica(inRecovery, () => false)).toBe(true)
      expect(yield* preferReplica(find, () => false)).toEqual(["fresh"])
    }).pipe(Effect.scoped), 120_000)
})
