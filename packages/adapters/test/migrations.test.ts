/** Migrations: applied once, in order, recorded, and safe when two processes migrate together. */
import { describe, expect, it } from "@effect/vitest"
import { Accounts, EventRepo, Payments, TransactionRepo, UseCases } from "@tender/domain"
import { Effect, Layer, Logger, Option } from "effect"
import { SqlClient } from "effect/sql"
import * as Infrastructure from "../src/Infrastructure.ts"
import { migrations } from "../src/storage/postgres/migrations/index.ts"
import * as Migrator from "../src/storage/postgres/Migrator.ts"
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

  it.live("0031 marks the attempts stored before it that were a browser flow's: a checkout session's, or a payment's with a client secret", () =>
    Effect.gen(function*() {
      const config = yield* freshConfig
      const before = migrations.slice(0, migrations.findIndex((m) => m.name === "0031_transaction_browser_flow"))
      const flows = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Migrator.run(before)
        yield* sql`INSERT INTO accounts (id, name, mode, status, publishable_key, signing_secret, created_at, updated_at, version)
          VALUES ('acct_m', 'm', 'test', 'active', 'pk_test_m', 'whsec_m', now(), now(), 1)`
        const order = (id: string, session: string | null) =>
          sql`INSERT INTO orders (id, account_id, livemode, merchant_reference, subtype, checkout_session_id, status, amount, currency, country,
              payment_method, capture_method, created_at, updated_at, version)
            VALUES (${id}, 'acct_m', false, ${id}, ${session === null ? "direct_payment" : "checkout"}, ${session}, 'requires_action', 100, 'USD', 'US',
              'card', 'automatic', now(), now(), 1)`
        const attempt = (id: string, orderId: string, kind = "payment") =>
          sql`INSERT INTO transactions (id, order_id, account_id, livemode, kind, status, amount, currency, payment_method, provider, three_ds,
              created_at, updated_at, version)
            VALUES (${id}, ${orderId}, 'acct_m', false, ${kind}, 'processing', 100, 'USD', 'card', 'sandbox', 'required', now(), now(), 1)`
        const secret = (orderId: string, kind: "payment" | "transfer") =>
          sql`INSERT INTO client_secrets (hash, account_id, order_id, kind, collect, created_at, expires_at)
            VALUES (${`h_${orderId}`}, 'acct_m', ${orderId}, ${kind}, 'card', now(), now())`
        yield* order("ord_session", "cs_1")
        yield* attempt("txn_session", "ord_session")
        yield* order("ord_sdk", null)
        yield* secret("ord_sdk", "payment")
        yield* attempt("txn_sdk", "ord_sdk", "authorization")
        yield* order("ord_server", null)
        yield* attempt("txn_server", "ord_server")
        // A card transfer's secret collects a card to pay out to: its order's rows are no payment's browser flow.
        yield* order("ord_transfer", null)
        yield* secret("ord_transfer", "transfer")
        yield* attempt("txn_transfer", "ord_transfer")
        yield* Migrator.run()
        return yield* sql<{ readonly id: string; readonly browser_flow: boolean }>`SELECT id, browser_flow FROM transactions ORDER BY id`
      }).pipe(Effect.provide(Layer.merge(PgDatabase.client(config), PgDatabase.migrationKey(config))))
      expect(flows).toEqual([
        { id: "txn_sdk", browser_flow: true },
        { id: "txn_server", browser_flow: false },
        { id: "txn_session", browser_flow: true },
        { id: "txn_transfer", browser_flow: false }
      ])
    }), 60_000)

  it.live("the storage layer migrates before it is ready", () =>
    Effect.gen(function*() {
      const config = yield* freshConfig
      yield* Effect.scoped(Layer.build(Infrastructure.layer(config)))
      expect(yield* Infrastructure.migrate(config)).toEqual([])
    }), 60_000)

  it.live("0030 seals the client secrets earlier versions stored in clear (more rows than one batch) and drops them from events (contract.md, Secrets at rest); reads show them again", () =>
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
        // More rows than a batch (500): copies of the attempt, each paged past once.
        yield* sql`INSERT INTO transactions
          SELECT (jsonb_populate_record(t, jsonb_build_object('id', t.id || '_copy' || lpad(g::text, 4, '0')))).*
          FROM transactions t, generate_series(1, 1100) g WHERE t.id = ${txnId}`
        yield* sql`DELETE FROM tender_migrations WHERE name = '0030_sealed_client_secrets'`
      }))

      expect(yield* Infrastructure.migrate(config)).toEqual(["0030_sealed_client_secrets"])

      yield* raw(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ readonly stored: string }>`SELECT next_action->>'client_secret' AS stored FROM transactions WHERE id = ${txnId}`
        expect(row.stored.startsWith("sealed.v1.")).toBe(true)
        const [copies] = yield* sql<{ readonly sealed: number; readonly clear: number }>`
          SELECT count(*) FILTER (WHERE next_action->>'client_secret' LIKE 'sealed.v1.%')::int AS sealed,
                 count(*) FILTER (WHERE next_action->>'client_secret' NOT LIKE 'sealed.v1.%')::int AS clear
          FROM transactions WHERE id LIKE ${`${txnId}_copy%`}`
        expect(copies).toEqual({ sealed: 1100, clear: 0 })
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

  it.live("0028, 0036: refunded_amount is bounded by what arrived (received_amount, else amount), not by amount; rows already past that bound do not fail them, are named in a warning, take every update that leaves the bound's columns alone and no further refund", () =>
    Effect.gen(function*() {
      const config = yield* freshConfig
      const warnings: Array<string> = []
      const collect = Logger.layer([Logger.make((options) => {
        if (options.logLevel === "Warn") warnings.push(String(options.message))
      })])
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        expect(yield* Migrator.run(migrations.filter((m) => m.name < "0028"))).not.toContain("0028_refunds_within_arrived")
        yield* sql`INSERT INTO accounts (id, name, mode, status, publishable_key, signing_secret, created_at, updated_at, version)
                   VALUES ('acct_m28', 'm28', 'test', 'active', 'pk_test_m28', 'secret', now(), now(), 1)`
        const order = (id: string, received: number | null, refunded: number) =>
          sql`INSERT INTO orders (id, account_id, livemode, merchant_reference, subtype, status, amount, currency, country,
                payment_method, capture_method, received_amount, refunded_amount, created_at, updated_at, version)
              VALUES (${id}, 'acct_m28', false, ${id}, 'direct_payment', 'processing', 10000, 'USD', 'US', 'crypto', 'automatic',
                ${received}, ${refunded}, now(), now(), 1)`
        // An accepted overpayment (150.00 on 100.00); orders written before the bound, refunded past what arrived.
        yield* order("ord_over", 15000, 0)
        yield* order("ord_legacy", 5000, 8000)
        yield* order("ord_legacy2", 2000, 2500)
        yield* order("ord_plain", null, 0)
        const refund = (id: string, amount: number) =>
          Effect.exit(sql`UPDATE orders SET refunded_amount = ${amount} WHERE id = ${id}`)
        // Before: the bound was the amount, so the overpayment's refund could not be recorded.
        expect((yield* refund("ord_over", 15000))._tag).toBe("Failure")

        expect(yield* Migrator.run(migrations).pipe(Effect.provide(collect))).toEqual(ALL.filter((name) => name >= "0028"))
        // The operator is told which orders (PostgreSQL's own notices never reach Tender's log).
        expect(warnings).toEqual([expect.stringContaining("2 order(s) refunded beyond what arrived: ord_legacy, ord_legacy2.")])
        expect((yield* refund("ord_over", 15000))._tag).toBe("Success")
        expect((yield* refund("ord_over", 15001))._tag).toBe("Failure")
        expect((yield* refund("ord_plain", 10000))._tag).toBe("Success")
        expect((yield* refund("ord_plain", 10001))._tag).toBe("Failure")
        expect((yield* refund("ord_plain", -1))._tag).toBe("Failure")
        // Nor does what arrived go below what was refunded, nor a row land past the bound.
        expect((yield* Effect.exit(sql`UPDATE orders SET received_amount = 14999 WHERE id = 'ord_over'`))._tag).toBe("Failure")
        const refused = yield* Effect.flip(order("ord_new", 4000, 4001))
        // Refused as the CHECK refused it: check_violation, under the bound's name.
        expect(refused.reason._tag).toBe("ConstraintError")
        expect(refused.reason.cause).toMatchObject({ code: "23514", constraint: "orders_refunded_within_arrived" })

        // A legacy row keeps what it holds and takes every update that leaves the bound's columns
        // alone, its settlement for one: as the repository writes it, every column set again.
        const legacy = yield* sql<{ refunded_amount: string }>`SELECT refunded_amount FROM orders WHERE id = 'ord_legacy'`
        expect(Number(legacy[0]!.refunded_amount)).toBe(8000)
        yield* sql`UPDATE orders SET status = 'succeeded', refunded_amount = refunded_amount, received_amount = received_amount,
                     amount = amount, version = version + 1, updated_at = now() WHERE id = 'ord_legacy'`
        // No further refund, nor one short of the bound still past it.
        expect((yield* refund("ord_legacy", 9000))._tag).toBe("Failure")
        expect((yield* refund("ord_legacy", 6000))._tag).toBe("Failure")
        // The correction docs/decisions.md gives: the order claims no more than arrived.
        yield* sql`UPDATE orders SET refunded_amount = coalesce(received_amount, amount) WHERE id = 'ord_legacy'`
        const after = yield* sql<{ status: string; refunded_amount: string; version: number }>`
          SELECT status, refunded_amount, version FROM orders WHERE id = 'ord_legacy'`
        expect(after.map((row) => [row.status, Number(row.refunded_amount), row.version])).toEqual([["succeeded", 5000, 2]])
        expect((yield* refund("ord_legacy", 5001))._tag).toBe("Failure")
        // The bound is a trigger now: 0028's check, left NOT VALID over the legacy rows, is gone.
        const checks = yield* sql<{ conname: string }>`
          SELECT conname FROM pg_constraint
          WHERE conrelid = 'orders'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%refunded_amount%'`
        expect(checks).toEqual([])
      }).pipe(Effect.provide(Layer.merge(PgDatabase.client(config), PgDatabase.migrationKey(config))))
    }), 60_000)

  it.live("0036 recreates the settlement poll's index as 0033 defines it where an earlier 0033 left another predicate", () =>
    Effect.gen(function*() {
      const config = yield* freshConfig
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const settlingIndex = Effect.map(
          sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE indexname = 'transactions_settling_idx'`,
          (rows) => rows.map((row) => row.indexdef)
        )
        yield* Migrator.run(migrations.filter((m) => m.name < "0036"))
        const current = yield* settlingIndex
        // What a database migrated with 0033 before its predicate widened holds.
        yield* sql`DROP INDEX transactions_settling_idx`
        yield* sql`CREATE INDEX transactions_settling_idx ON transactions ((coalesce(settlement_check_at, created_at)), id)
          WHERE ((kind = 'capture' AND status = 'processing') OR (kind IN ('refund', 'payout', 'transfer') AND status = 'pending'))
            AND provider_transaction_id IS NOT NULL AND pending_call IS NULL`
        expect(yield* settlingIndex).not.toEqual(current)
        expect(yield* Migrator.run(migrations)).toEqual(ALL.filter((name) => name >= "0036"))
        expect(yield* settlingIndex).toEqual(current)
      }).pipe(Effect.provide(Layer.merge(PgDatabase.client(config), PgDatabase.migrationKey(config))))
    }), 60_000)

  it.live("0037 drops 0022's pause triggers (the domain decides `paused` now), keeps every flag they set, and resumes the deliveries of disabled endpoints deleted before it", () =>
    Effect.gen(function*() {
      const config = yield* freshConfig
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Migrator.run(migrations.filter((m) => m.name < "0037"))
        yield* sql`INSERT INTO accounts (id, name, mode, status, publishable_key, signing_secret, created_at, updated_at, version)
          VALUES ('acct_p', 'p', 'test', 'active', 'pk_test_p', 'whsec_p', now(), now(), 1)`
        yield* sql`INSERT INTO events (id, account_id, type, created_at, livemode, data)
          VALUES ('evt_p', 'acct_p', 'payment.succeeded', now(), false, '{}')`
        const endpoint = (id: string, status: string) =>
          sql`INSERT INTO webhook_endpoints (id, account_id, url, enabled_events, description, status, created_at, updated_at, version)
            VALUES (${id}, 'acct_p', 'https://shop.example/hooks', '["*"]', NULL, ${status}, now(), now(), 1)`
        const delivery = (id: string, endpointId: string) =>
          sql`INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
            VALUES (${id}, 'acct_p', ${endpointId}, 'evt_p', 'payment.succeeded', 'pending', 0, now(), now(), now())`
        yield* endpoint("we_on", "enabled")
        yield* endpoint("we_off", "disabled")
        yield* endpoint("we_gone", "disabled")
        yield* delivery("whd_on", "we_on")
        yield* delivery("whd_off", "we_off")
        yield* delivery("whd_gone", "we_gone")
        yield* sql`DELETE FROM webhook_endpoints WHERE id = 'we_gone'`
        const paused = Effect.map(
          sql<{ id: string; paused: boolean }>`SELECT id, paused FROM webhook_deliveries WHERE account_id = 'acct_p'`,
          (rows) => Object.fromEntries(rows.map((r) => [r.id, r.paused]))
        )
        // As 0022's triggers left them: the deleted endpoint's delivery paused for ever.
        expect(yield* paused).toEqual({ whd_on: false, whd_off: true, whd_gone: true })

        expect(yield* Migrator.run(migrations)).toEqual(ALL.filter((name) => name >= "0037"))
        expect(yield* paused).toEqual({ whd_on: false, whd_off: true, whd_gone: false })
        const triggers = yield* sql<{ tgname: string }>`SELECT tgname FROM pg_trigger WHERE tgname LIKE 'webhook_%pause'`
        expect(triggers).toEqual([])
        // The endpoint's status no longer reaches its deliveries but through the domain.
        yield* sql`UPDATE webhook_endpoints SET status = 'enabled' WHERE id = 'we_off'`
        yield* delivery("whd_late", "we_on")
        yield* sql`UPDATE webhook_endpoints SET status = 'disabled' WHERE id = 'we_on'`
        expect(yield* paused).toEqual({ whd_on: false, whd_off: true, whd_gone: false, whd_late: false })
      }).pipe(Effect.provide(Layer.merge(PgDatabase.client(config), PgDatabase.migrationKey(config))))
    }), 60_000)
})

describe("0027_order_references", () => {
  const at = migrations.findIndex((m) => m.name === "0027_order_references")
  const before = migrations.slice(0, at)
  /** Up to 0027 itself: later migrations are not this test's. */
  const through = migrations.slice(0, at + 1)

  it.live("contract.md, Idempotency (one reference space per account): fills the claims from existing orders, old shared references included, then enforces them on every insert", () =>
    Effect.gen(function*() {
      const config = yield* freshConfig
      const scenario = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Migrator.run(before)
        for (const id of ["acct_old1", "acct_old2"]) {
          yield* sql`INSERT INTO accounts (id, name, mode, status, publishable_key, signing_secret, created_at, updated_at, version)
            VALUES (${id}, 'old', 'test', 'active', ${`pk_test_${id}`}, 'whsec_old', now(), now(), 1)`
        }
        const order = (id: string, account: string, reference: string, subtype: string) =>
          sql`INSERT INTO orders (id, account_id, livemode, merchant_reference, subtype, status, amount, currency, country,
                payment_method, capture_method, created_at, updated_at, version)
              VALUES (${id}, ${account}, false, ${reference}, ${subtype}, 'succeeded', 100, 'USD', 'US', 'card', 'automatic', now(), now(), 1)
              RETURNING id`
        // What the rules before 0027 let in: a direct payment and sessions sharing a reference (the
        // session's order first, then the payment's), sessions sharing one, a transfer's, and another
        // account's order under the same reference.
        yield* order("ord_old_shared_checkout", "acct_old1", "shared", "checkout")
        yield* order("ord_old_shared_direct", "acct_old1", "shared", "direct_payment")
        yield* order("ord_old_shared_checkout2", "acct_old1", "shared", "checkout")
        yield* order("ord_old_sessions1", "acct_old1", "sessions", "checkout")
        yield* order("ord_old_sessions2", "acct_old1", "sessions", "checkout")
        yield* order("ord_old_transfer", "acct_old1", "transfer", "transfer")
        yield* order("ord_old_elsewhere", "acct_old2", "shared", "checkout")

        expect(yield* Migrator.run(through)).toEqual(["0027_order_references"])
        const claims = yield* sql<{ account_id: string; merchant_reference: string; holder: string }>`
          SELECT account_id, merchant_reference, holder FROM order_references ORDER BY account_id, merchant_reference`
        expect(claims.map((c) => [c.account_id, c.merchant_reference, c.holder])).toEqual([
          ["acct_old1", "sessions", "sessions"],
          ["acct_old1", "shared", "order"],
          ["acct_old1", "transfer", "order"],
          ["acct_old2", "shared", "sessions"]
        ])
        // Old rows are kept as they were.
        expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM orders`)[0].n).toBe(7)

        // From now on: a reference a direct payment or transfer holds takes nothing else; sessions'
        // take another session's order, never a payment's. A refused insert writes nothing.
        const inserted = (id: string, account: string, reference: string, subtype: string) =>
          Effect.map(order(id, account, reference, subtype), (rows) => rows.length === 1)
        expect(yield* inserted("ord_new1", "acct_old1", "shared", "checkout")).toBe(false)
        expect(yield* inserted("ord_new2", "acct_old1", "transfer", "direct_payment")).toBe(false)
        expect(yield* inserted("ord_new3", "acct_old1", "sessions", "direct_payment")).toBe(false)
        expect(yield* inserted("ord_new4", "acct_old1", "sessions", "checkout")).toBe(true)
        expect(yield* inserted("ord_new5", "acct_old2", "shared", "transfer")).toBe(false)
        expect(yield* inserted("ord_new6", "acct_old1", "fresh", "direct_payment")).toBe(true)
        expect(yield* inserted("ord_new7", "acct_old1", "fresh", "direct_payment")).toBe(false)
        expect((yield* sql<{ id: string }>`SELECT id FROM orders WHERE id LIKE 'ord_new%' ORDER BY id`).map((r) => r.id))
          .toEqual(["ord_new4", "ord_new6"])
      })
      yield* scenario.pipe(Effect.provide(Layer.merge(PgDatabase.client(config), PgDatabase.migrationKey(config))))
    }), 60_000)
})
