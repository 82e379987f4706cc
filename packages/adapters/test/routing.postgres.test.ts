/**
 * Smart routing's storage contract over PostgreSQL (src/testing/RoutingContract.ts), and what only
 * several processes show: two storages built on one database (two pools, two listeners, two health
 * views, as two servers are) share their channels' health within a sync (1 s) and their rules'
 * current version within a notice, while every read stays in process.
 */
import { expect } from "@effect/vitest"
import * as SuccessRate from "@tender/domain/channels/SuccessRate"
import type { ChannelStanding } from "@tender/domain/channels/RoutingModel"
import { ChannelHealth, RoutingRulesRepo } from "@tender/domain/channels/RoutingPorts"
import { type Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { postgresStorage } from "../src/Infrastructure.ts"
import { CARD_EUR, newChannelId, observeAll, routingContract, ruleSet } from "../src/testing/RoutingContract.ts"
import { newAccount } from "../src/testing/StorageContract.ts"
import { AccountRepo } from "@tender/domain"
import { sharedConfig } from "./PgTestDatabase.ts"

const primitives = Layer.merge(IdsRandom.layer, KeyHasherSha256.layer)
/** One process's storage on this file's database. */
const storage = Layer.unwrap(Effect.map(sharedConfig, postgresStorage)).pipe(Layer.provideMerge(primitives))

/** Another process on the same database, for the scope (fresh: not the suite's storage, memoised). */
const otherProcess = Layer.build(Layer.fresh(storage))

type Process = Context.Context<Layer.Success<typeof storage>>

/** Asks `read` in `process` until `done` holds of its answer, for up to `withinMs`; how long it took. */
const until = <A>(process: Process, read: Effect.Effect<A, never, ChannelHealth | RoutingRulesRepo>, done: (a: A) => boolean, withinMs = 5_000) =>
  Effect.gen(function*() {
    const started = Date.now()
    while (Date.now() - started < withinMs) {
      if (done(yield* Effect.provideContext(read, process))) return Date.now() - started
      yield* Effect.sleep("20 millis")
    }
    throw new Error(`not seen within ${withinMs} ms`)
  })

const standing = (channel: string, now: number) =>
  Effect.map(Effect.flatMap(ChannelHealth, (h) => h.standings([channel], CARD_EUR, now)), ([s]) => s as ChannelStanding)

/** How long the other process may take to see a change: one sync (1 s), and slack for a loaded machine. */
const WITHIN_A_SYNC_MS = 3_000

routingContract("routing: PostgreSQL storage", storage, {
  timeout: "2 minutes",
  also: (it) => {
    it.effect("health across processes: each one's answers are in the other's standings within a sync, and the rows add both", () =>
      Effect.gen(function*() {
        const here = yield* Effect.context<Layer.Success<typeof storage>>()
        const there = yield* otherProcess
        const channel = newChannelId()
        const now = Date.now()
        yield* observeAll(channel, ["approved", "approved", "approved", "declined"], now)
        yield* Effect.provideContext(observeAll(channel, ["declined", "unavailable"], now + 10), there)
        const all = { attempts: 6, approvals: 3 }
        const seen = (s: ChannelStanding) => s.rate.attempts === all.attempts && s.rate.approvals === all.approvals
        expect(yield* until(there, standing(channel, now + 20), seen)).toBeLessThan(WITHIN_A_SYNC_MS)
        expect(yield* until(here, standing(channel, now + 20), seen)).toBeLessThan(WITHIN_A_SYNC_MS)
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ attempts: number; approvals: number }>`
          SELECT sum(attempts)::int AS attempts, sum(approvals)::int AS approvals FROM channel_health_windows WHERE channel_id = ${channel}`
        expect(row).toEqual(all)
        // Counted once each: a further sync adds nothing.
        yield* Effect.sleep("1200 millis")
        expect((yield* standing(channel, now + 20)).rate).toEqual(all)
        expect((yield* Effect.provideContext(standing(channel, now + 20), there)).rate).toEqual(all)
      }))

    it.effect("breakers across processes: opened by one, open for the other within a sync; one probe winner of both; its answer closes it for both", () =>
      Effect.gen(function*() {
        const here = yield* Effect.context<Layer.Success<typeof storage>>()
        const there = yield* otherProcess
        const channel = newChannelId()
        const t0 = Date.now()
        yield* observeAll(channel, ["unavailable", "unavailable", "unavailable", "unavailable", "unavailable"], t0)
        expect(yield* until(there, standing(channel, t0 + 10), (s) => s.breaker === "open")).toBeLessThan(WITHIN_A_SYNC_MS)
        const state = (yield* Effect.provideContext(standing(channel, t0 + 10), there)).breaker_state
        expect(state).toMatchObject({ opened_at: t0 + 4, open_until: t0 + 4 + 30_000, trips: 1 })
        // /metrics and `channels list` read it there too.
        expect((yield* Effect.provideContext(Effect.flatMap(ChannelHealth, (h) => h.breakers(t0 + 10)), there))
          .find((b) => b.channel_id === channel)?.state).toEqual(state)

        const halfOpen = t0 + 4 + 30_000
        const claim = Effect.flatMap(ChannelHealth, (h) => h.claimProbe(channel, halfOpen))
        const claims = yield* Effect.all(
          [...Array.from({ length: 8 }, () => Effect.provideContext(claim, here)), ...Array.from({ length: 8 }, () => Effect.provideContext(claim, there))],
          { concurrency: "unbounded" }
        )
        expect(claims.filter((won) => won)).toHaveLength(1)
        const winner = claims.indexOf(true) < 8 ? here : there
        const loser = winner === here ? there : here
        // The winner's probe answers: closed in the loser too, within a sync.
        yield* Effect.provideContext(observeAll(channel, ["approved"], halfOpen + 1), winner)
        expect(yield* until(loser, standing(channel, halfOpen + 2), (s) => s.breaker === "closed")).toBeLessThan(WITHIN_A_SYNC_MS)
      }))

    it.effect("a process just started routes by the breakers others opened: its first standings wait for its first sync", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const channel = newChannelId()
        const t0 = Date.now()
        yield* observeAll(channel, ["unavailable", "unavailable", "unavailable", "unavailable", "unavailable"], t0)
        // The opening is written at once (forked from the answer): wait for its row, not for a sync.
        const written = sql<{ n: number }>`SELECT count(*)::int AS n FROM channel_breakers WHERE channel_id = ${channel}`.pipe(Effect.orDie)
        const started = Date.now()
        while ((yield* written)[0]!.n === 0 && Date.now() - started < WITHIN_A_SYNC_MS) yield* Effect.sleep("20 millis")
        // A new process (the CLI's `routing test`): its very first read, with no wait of the test's, sees it open.
        const fresh = yield* otherProcess
        const first = yield* Effect.provideContext(standing(channel, t0 + 10), fresh)
        expect(first.breaker).toBe("open")
        expect(first.breaker_state).toMatchObject({ opened_at: t0 + 4, trips: 1 })
      }))

    it.effect("rules across processes: served from the cache (no round trip), and a version set elsewhere is current within a second", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const here = yield* Effect.context<Layer.Success<typeof storage>>()
        const there = yield* otherProcess
        const { account } = yield* newAccount()
        yield* (yield* AccountRepo).insert(account)
        const put = (version: number) =>
          Effect.flatMap(RoutingRulesRepo, (repo) =>
            repo.put({ account_id: account.id, profile: null, rules: ruleSet([`ch_v${version}`]), document: { version }, created_at: new Date().toISOString() }))
        const current = Effect.flatMap(RoutingRulesRepo, (repo) => Effect.map(repo.current(account.id, null), Option.getOrThrow))
        yield* put(1)
        yield* until(there, current, (rules) => rules.version === 1)

        // A change no process is told of (the trigger off): once the other process reads it from its
        // cache, what it answers is no longer the row.
        let edits = 0
        yield* until(there, Effect.gen(function*() {
          const edit = ++edits
          yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`ALTER TABLE routing_rules DISABLE TRIGGER tender_routing_rules_changed`
            yield* sql`UPDATE routing_rules SET document = ${JSON.stringify({ edit })}::jsonb WHERE account_id = ${account.id}`
            yield* sql`ALTER TABLE routing_rules ENABLE TRIGGER tender_routing_rules_changed`
          })).pipe(Effect.orDie)
          return (yield* Effect.provideContext(current, there)).document
        }), (document) => (document as { edit?: number }).edit !== edits)

        // A new version, set here (as `tender accounts routing set` does from the CLI's process).
        yield* Effect.provideContext(put(2), here)
        expect(yield* until(there, current, (rules) => rules.version === 2)).toBeLessThan(1_000)
        expect((yield* Effect.provideContext(current, there)).rules).toEqual(ruleSet(["ch_v2"]))
      }))

    it.effect("the sync deletes the buckets past the window", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const channel = newChannelId()
        const past = SuccessRate.windowStart(Date.now()) - SuccessRate.BUCKET_MS
        yield* sql`INSERT INTO channel_health_windows (channel_id, method, currency, brand, bucket, attempts, approvals)
          VALUES (${channel}, 'card', 'EUR', '', ${past}, 3, 1)`
        const left = sql<{ n: number }>`SELECT count(*)::int AS n FROM channel_health_windows WHERE channel_id = ${channel}`.pipe(Effect.orDie)
        const started = Date.now()
        while ((yield* left)[0]!.n > 0 && Date.now() - started < WITHIN_A_SYNC_MS) yield* Effect.sleep("50 millis")
        expect((yield* left)[0]!.n).toBe(0)
        // And it never counted.
        expect((yield* standing(channel, Date.now())).rate).toEqual({ attempts: 0, approvals: 0 })
      }))
  }
})
