/**
 * The webhook dispatcher's own connection pool (Infrastructure.dispatcherStorage): with every
 * connection of the main pool busy (payment traffic), the dispatcher's claims still run at once.
 */
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { WebhookDeliveryRepo } from "@tender/domain"
import { Context, Effect, Fiber, Layer } from "effect"
import * as Infrastructure from "../src/Infrastructure.ts"
import * as PgDatabase from "../src/storage/postgres/PgDatabase.ts"
import { sharedConfig } from "./PgTestDatabase.ts"

/** Main pool connections held busy: all of them (the pool's default size, as Infrastructure.layer opens it). */
const MAIN_POOL = 10
const HELD_MS = 3_000

describe("the webhook dispatcher's connection pool", () => {
  it.live("claims run at once while every connection of the main pool is held", () =>
    Effect.gen(function*() {
      const config = yield* sharedConfig
      const main = yield* Layer.build(PgDatabase.layer(config))
      const sql = Context.get(main, PgClient.PgClient)
      const dispatcher = yield* Layer.build(Infrastructure.dispatcherStorage(config)!)
      const deliveries = Context.get(dispatcher, WebhookDeliveryRepo)
      const claim = deliveries.claimDue({
        now: "1970-01-02T00:00:00.000Z",
        leaseUntil: "1970-01-02T00:00:30.000Z",
        lease: "pool-test",
        limit: 1,
        perAccount: 1,
        perEndpoint: 1,
        excludeEndpoints: [],
        excludeAccounts: []
      })
      yield* claim // connected and warm

      const held = yield* Effect.forkChild(
        Effect.forEach(Array.from({ length: MAIN_POOL }), () => sql`SELECT pg_sleep(${HELD_MS / 1000})`, { concurrency: "unbounded" })
      )
      yield* Effect.sleep(300)
      const started = Date.now()
      expect(yield* claim).toEqual([])
      const claimMs = Date.now() - started
      // The main pool is indeed exhausted: a query there waits for a held connection.
      const mainStarted = Date.now()
      yield* sql`SELECT 1`
      const mainMs = Date.now() - mainStarted
      yield* Fiber.join(held)
      expect(mainMs).toBeGreaterThan(HELD_MS / 2)
      expect(claimMs).toBeLessThan(HELD_MS / 2)
    }).pipe(Effect.scoped), 60_000)
})
