/** Migrations: applied once, in order, recorded, and safe when two processes migrate together. */
import { describe, expect, it } from "@effect/vitest"
import { Accounts, EventRepo, Payments, TransactionRepo, UseCases } from "@tender/domain"
import { Effect, Layer, Option } from "effect"
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
            Effect.map((context) => PgDatabase.migrate.pipe(Effect.provide(context), Effect.provide(PgDatabase.migrationKey(config))))
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

  it.live("0030 seals the client secrets earlier versions stored in clear and drops them from events (contract.md, Secrets at rest); reads show them again", () =>
    Effect.gen(function*() {
      const config = yield* freshConfig
      const stack = UseCases.layer.pipe(Layer.provideMerge(Infrastructure.layer(config)))
      const { orderId, secret, txnId } = yield* Effect.gen(function*() {
        const accounts = yield* Accounts
        const account = yield* accounts.get((yield* accounts.create({ name: "before 0030", mode: "test" })).account_id)
        const payment = yield* (yield* Payments).create(account, {
          amount: "10.00",
          currency: "USD",
          country: "US",
          merchant_reference: "sealed-later",
          payment_method: { code: "card" },
          success_url: "https://shop.example/ok",
          cancel_url: "https://shop.example/cancel"
        })
        expect(payment.next_action?.type).toBe("collect_card")
        return { orderId: payment.order_id, secret: payment.next_action!.client_secret!, txnId: payment.transaction_id }
      }).pipe(Effect.provide(stack))
      /** Raw rows, as no repository shows them. */
      const raw = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provide(effect, PgDatabase.client(config))

      // As a version before 0030 left them: the secret in clear in the attempt and in its event.
      yield* raw(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE transactions SET next_action = jsonb_set(next_action, '{client_secret}', to_jsonb(${secret}::text)) WHERE id = ${txnId}`
        yield* sql`UPDATE events SET data = jsonb_set(data, '{next_action,client_secret}', to_jsonb(${secret}::text)) WHERE order_id = ${orderId} AND data ? 'next_action'`
        yield* sql`DELETE FROM tender_migrations WHERE name = '0030_sealed_client_secrets'`
      }))

      expect(yield* Infrastructure.migrate(config)).toEqual(["0030_sealed_client_secrets"])

      yield* raw(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ readonly stored: string }>`SELECT next_action->>'client_secret' AS stored FROM transactions WHERE id = ${txnId}`
        expect(row.stored.startsWith("sealed.v1.")).toBe(true)
        expect(row.stored).not.toContain(secret.slice(secret.lastIndexOf("_") + 1))
        const events = yield* sql<{ readonly data: string }>`SELECT data::text AS data FROM events WHERE order_id = ${orderId}`
        expect(events.length).toBeGreaterThan(0)
        for (const event of events) expect(event.data).not.toContain(secret)
      }))
      yield* Effect.gen(function*() {
        // The repository opens what the migration sealed.
        const txn = Option.getOrThrow(yield* (yield* TransactionRepo).findAny(txnId))
        expect(txn.next_action?.client_secret).toBe(secret)
        const stored = yield* (yield* EventRepo).listByOrder(orderId)
        expect(stored.some((e) => (e.data.next_action as { readonly type?: string } | undefined)?.type === "collect_card")).toBe(true)
      }).pipe(Effect.provide(stack))
    }), 120_000)
})
