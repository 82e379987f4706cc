/** Migrations: applied once, in order, recorded, and safe when two processes migrate together. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as Infrastructure from "../src/Infrastructure.ts"
import { migrations } from "../src/storage/postgres/migrations/index.ts"
import * as PgDatabase from "../src/storage/postgres/PgDatabase.ts"
import { freshConfig } from "./PgTestDatabase.ts"

const ALL = migrations.map((m) => m.name)

const recorded = (config: Parameters<typeof PgDatabase.client>[0]) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ name: string }>`SELECT name FROM tender_migrations ORDER BY name`)
    .pipe(Effect.map((rows) => rows.map((r) => r.name)), Effect.provide(PgDatabase.client(config)))

describe("migrations", () => {
  it("are numbered, unique and listed in order", () => {
    expect(ALL.length).toBeGreaterThan(0)
    expect(new Set(ALL).size).toBe(ALL.length)
    expect([...ALL].sort()).toEqual(ALL)
    for (const name of ALL) expect(name).toMatch(/^\d{4}_[a-z0-9_]+$/)
  })

  it.live("migrate applies every migration once; a second run applies nothing", () =>
    Effect.gen(function*() {
      const config = yield* freshConfig
      expect(yield* Infrastructure.migrate(config)).toEqual(ALL)
      expect(yield* Infrastructure.migrate(config)).toEqual([])
      expect(yield* recorded(config)).toEqual(ALL)
    }), 60_000)

  it.live("concurrent migrations from separate connections succeed and apply each migration exactly once", () =>
    Effect.gen(function*() {
      const config = yield* freshConfig
      // Connect every migrator first (as separate processes would be), so the migrations truly race.
      const migrators = yield* Effect.forEach([1, 2, 3, 4], () =>
        Effect.flatMap(Effect.scope, (scope) =>
          Layer.buildWithMemoMap(PgDatabase.client(config), Layer.makeMemoMapUnsafe(), scope)).pipe(
            Effect.map((context) => Effect.provide(PgDatabase.migrate, context))
          ))
      const applied = yield* Effect.all(migrators, { concurrency: "unbounded" })
      expect(applied.flat().sort()).toEqual(ALL)
      expect(yield* recorded(config)).toEqual(ALL)
      expect(yield* Infrastructure.migrate(config)).toEqual([])
    }), 60_000)

  it.live("the storage layer migrates before it is ready", () =>
    Effect.gen(function*() {
      const config = yield* freshConfig
      yield* Effect.scoped(Layer.build(Infrastructure.layer(config)))
      expect(yield* Infrastructure.migrate(config)).toEqual([])
    }), 60_000)
})
