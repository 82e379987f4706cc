/**
 * The retention round (issue 24; webhooks/Retention.ts, operations/Prune.ts) over real storage: its
 * cutoff follows the clock and the configured days, it works off a backlog in batches until none is
 * left, `never` keeps the event log; PostgreSQL's expired replay-cache rows go in its batches; a
 * batch that meets a merchant's retry of a delivery judges the row as retried (owed: it stays); and
 * `TENDER_RETENTION_DAYS` is read and refused as Config.ts says. The rule itself, row by row, is the
 * storage contract's (StorageContract.ts, `retentionContract`).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import {
  AccountRepo,
  ConsoleSessionRepo,
  EventRepo,
  Ids,
  Operator,
  OperatorRepo,
  Pruning,
  pruneRound,
  Retention,
  WebhookDeliveryRepo
} from "@tender/domain"
import { Deferred, Effect, Fiber, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { configFromEnv, retentionDays } from "../src/Config.ts"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { memoryStorage, postgresStorage } from "../src/Infrastructure.ts"
import * as PgDatabase from "../src/storage/postgres/PgDatabase.ts"
import * as PruningPg from "../src/storage/postgres/PruningPg.ts"
import { newAccount, newDelivery, newOperator, storedEvent } from "../src/testing/StorageContract.ts"
import { sharedConfig } from "./PgTestDatabase.ts"

const DAY = 86_400_000
const NOW = Date.parse("2026-06-01T00:00:00.000Z")
const daysAgo = (days: number) => new Date(NOW - days * DAY).toISOString()

const memory = memoryStorage.pipe(Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer)))

layer(memory)("retention round (memory storage)", (it) => {
  /** An account with an event `age` days old, delivered (succeeded) at once, or still owed. */
  const history = (ages: ReadonlyArray<{ readonly age: number; readonly owed?: boolean }>) =>
    Effect.gen(function*() {
      const { account } = yield* newAccount()
      yield* (yield* AccountRepo).insert(account)
      const endpoint = yield* (yield* Ids).make("webhookEndpoint")
      return yield* Effect.forEach(ages, ({ age, owed }) =>
        Effect.gen(function*() {
          const event = yield* storedEvent(account.id, { created_at: daysAgo(age) })
          const delivery = yield* newDelivery(event, endpoint, owed === true
            ? { status: "failed", attempts: 3, next_attempt_at: daysAgo(-1) }
            : { status: "succeeded", attempts: 1, next_attempt_at: null, last_attempt_at: event.created_at })
          yield* (yield* WebhookDeliveryRepo).insert(delivery)
          return { event, delivery }
        }))
    })
  const kept = (rows: ReadonlyArray<{ readonly event: { readonly id: string } }>) =>
    Effect.forEach(rows, ({ event }) => Effect.map(EventRepo.use((events) => events.findAny(event.id)), Option.isSome))

  it.effect("prunes what is older than the days before now, in batches until none is left; owed and recent stay", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const rows = yield* history([
        { age: 400 }, { age: 200 }, { age: 90 }, { age: 45 }, { age: 31 }, // past 30 days: go
        { age: 120, owed: true }, // owed: stays
        { age: 29 }, { age: 1 } // inside the retention: stay
      ])
      // Batches of 2: five prunable among six old events take three full batches and a short one.
      const counts = yield* pruneRound({ days: 30, batchSize: 2, pauseMs: 0 })
      expect(counts).toMatchObject({ events: 5, deliveries: 5 })
      expect(yield* kept(rows)).toEqual([false, false, false, false, false, true, true, true])
      // A round later, a year on: only the owed one is left of them.
      yield* TestClock.setTime(NOW + 365 * DAY)
      expect(yield* pruneRound({ days: 30, batchSize: 2, pauseMs: 0 })).toMatchObject({ events: 2, deliveries: 2 })
      expect(yield* kept(rows)).toEqual([false, false, false, false, false, true, false, false])
    }))

  it.effect("`never` keeps the event log, however old", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const rows = yield* history([{ age: 3650 }, { age: 100 }])
      expect(yield* pruneRound({ days: "never", batchSize: 2, pauseMs: 0 })).toEqual(Retention.NOTHING_PRUNED)
      expect(yield* kept(rows)).toEqual([true, true])
    }))

  it.effect("console sessions past their idle or absolute limit go in the round's batches (review M8); a live one stays", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const operator = yield* newOperator()
      yield* (yield* OperatorRepo).insert(operator)
      const sessions = yield* ConsoleSessionRepo
      const session = (hash: string, createdAgo: number, seenAgo: number): Operator.ConsoleSession => ({
        token_hash: `${operator.id}-${hash}`,
        operator_id: operator.id,
        csrf_token: `csrf-${hash}`,
        created_at: new Date(NOW - createdAgo).toISOString(),
        last_seen_at: new Date(NOW - seenAgo).toISOString()
      })
      const minute = 60_000
      const idle = [1, 2, 3].map((i) => session(`idle${i}`, 60 * minute, Operator.SESSION_IDLE_MS + i))
      const old = session("old", Operator.SESSION_ABSOLUTE_MS + 1, minute)
      const live = session("live", Operator.SESSION_ABSOLUTE_MS, Operator.SESSION_IDLE_MS)
      for (const s of [...idle, old, live]) yield* sessions.insert(s)
      // Batches of 2: four expired take two full batches and an empty one.
      expect(yield* pruneRound({ days: "never", batchSize: 2, pauseMs: 0 })).toEqual({ ...Retention.NOTHING_PRUNED, expired: 4 })
      for (const s of [...idle, old]) expect(yield* sessions.find(s.token_hash)).toEqual(Option.none())
      expect(yield* sessions.find(live.token_hash)).toEqual(Option.some(live))
      // The sweep's bounds are the rule the login reads a presented session by.
      expect([...idle, old, live].map((s) => Operator.sessionExpired(s, NOW))).toEqual([true, true, true, true, false])
    }))
})

const pg = PruningPg.layer.pipe(Layer.provideMerge(Layer.unwrap(Effect.map(sharedConfig, PgDatabase.layer))))

layer(pg, { excludeTestServices: true, timeout: "2 minutes" })("retention of the replay cache (PostgreSQL)", (it) => {
  it.effect("expired replay_signatures rows go in batches through the expiry index; live ones stay", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const pruning = yield* Pruning
      const account = `acct_${Date.now().toString(36)}`
      yield* sql`INSERT INTO replay_signatures (account_id, digest, kind, request_id, expires_at)
        SELECT ${account}, md5(g::text), 'request', 'req_' || g,
          CASE WHEN g <= 5 THEN now() - g * interval '1 minute' ELSE now() + interval '5 minutes' END
        FROM generate_series(1, 8) g`
      expect(yield* pruning.pruneExpired(3)).toBe(3)
      expect(yield* pruning.pruneExpired(3)).toBe(2)
      expect(yield* pruning.pruneExpired(3)).toBe(0)
      const [{ n }] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM replay_signatures WHERE account_id = ${account}`
      expect(n).toBe(3)
      const indexes = yield* sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE tablename = 'replay_signatures'`
      expect(indexes.map((i) => i.indexdef).join("\n")).toContain("(expires_at)")
    }))
})

const pgStorage = Layer.unwrap(Effect.map(sharedConfig, postgresStorage)).pipe(
  Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer))
)

layer(pgStorage, { excludeTestServices: true, timeout: "2 minutes" })("retention racing a retry (PostgreSQL)", (it) => {
  it.effect("a delivery retried while the batch waits for its row is judged as retried: it and its event stay", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const pruning = yield* Pruning
      const { account } = yield* newAccount()
      yield* (yield* AccountRepo).insert(account)
      // Older than any other test's rows, and exhausted long ago: the rule lets it go as it stands.
      const event = yield* storedEvent(account.id, { created_at: "1950-01-01T00:00:00.000Z" })
      const delivery = yield* newDelivery(event, yield* (yield* Ids).make("webhookEndpoint"), {
        status: "exhausted",
        attempts: 8,
        next_attempt_at: null,
        last_attempt_at: "1950-01-02T00:00:00.000Z",
        updated_at: "1950-01-02T00:00:00.000Z"
      })
      yield* (yield* WebhookDeliveryRepo).insert(delivery)
      const cutoff = "1950-02-01T00:00:00.000Z"
      // The merchant's retry holds the row (its UPDATE, uncommitted) as the batch reaches it.
      const locked = yield* Deferred.make<void>()
      const retry = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = '2999-01-01T00:00:00Z', updated_at = now()
          WHERE id = ${delivery.id}`
        yield* Deferred.succeed(locked, undefined)
        yield* Effect.sleep("500 millis")
      })).pipe(Effect.orDie, Effect.forkChild)
      yield* Deferred.await(locked)
      const batch = yield* pruning.pruneEvents({ before: cutoff, limit: 10 })
      yield* Fiber.join(retry)
      expect(batch).toMatchObject({ events: 0, deliveries: 0, attempts: 0 })
      expect(yield* (yield* WebhookDeliveryRepo).findAny(delivery.id)).toMatchObject(Option.some({ status: "pending" }))
      expect(Option.isSome(yield* (yield* EventRepo).findAny(event.id))).toBe(true)
    }))
})

describe("TENDER_RETENTION_DAYS", () => {
  const read = (value: string | undefined) => configFromEnv({ storage: "memory" }, value === undefined ? {} : { TENDER_RETENTION_DAYS: value })

  it("unset is the default, 30 days; a whole number of days 1 or more, or never, is taken as given", () => {
    expect(read(undefined).retentionDays).toBeUndefined()
    expect(retentionDays(read(undefined), Retention.DEFAULT_RETENTION_DAYS)).toEqual({ ok: 30 })
    expect(retentionDays(read(""), 30)).toEqual({ ok: 30 })
    expect(retentionDays(read("1"), 30)).toEqual({ ok: 1 })
    expect(retentionDays(read(" 400 "), 30)).toEqual({ ok: 400 })
    expect(retentionDays(read("never"), 30)).toEqual({ ok: "never" })
  })

  it("anything else is refused, never read as a default or as prune-everything", () => {
    for (const value of ["0", "-3", "1.5", "thirty", "30d", "Infinity"]) {
      const answer = retentionDays(read(value), 30)
      expect(answer, value).toHaveProperty("error")
      expect("error" in answer && answer.error).toContain("TENDER_RETENTION_DAYS")
    }
  })
})
