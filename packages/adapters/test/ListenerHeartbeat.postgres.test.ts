/**
 * A server's heartbeat (ServerListeners, `keepListed`) outlives a failed write. Issue 21, item 10:
 * "webhook endpoints may not name any port of this Tender deployment (… sibling processes), also
 * from a standalone `tender worker`": the other processes know a server's port only while its row is
 * refreshed, so a beat that stopped at the first database error freed the port to webhooks 90 s later
 * while the server still answered on it. Real PostgreSQL: the table is renamed away for a few beats
 * (every write fails), its row deleted meanwhile; once it is back, the next beat writes the row again.
 * A beat that hangs (a lock held on the table) stalled the loop the same way: it is given up after
 * its interval, logged, and the loop goes on. docs/decisions.md, "Webhook endpoints and this
 * deployment's ports".
 */
import { expect, layer } from "@effect/vitest"
import { keepListed, LISTENER_STALE_MS, ServerListeners } from "@tender/domain"
import { Effect, Layer, Logger } from "effect"
import { SqlClient } from "effect/sql"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { postgresStorage } from "../src/Infrastructure.ts"
import { freshConfig } from "./PgTestDatabase.ts"

// A database of its own: the rename would break any other test using the table meanwhile.
const storage = Layer.unwrap(Effect.map(freshConfig, postgresStorage)).pipe(
  Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer))
)

const PORT = 61_777
const BEAT_MS = 100

/** Whether the table lists the test's port now, asked until `expected` or for 10 s. */
const until = (expected: boolean) =>
  Effect.gen(function*() {
    const listeners = yield* ServerListeners
    for (let i = 0; i < 100; i++) {
      if ((yield* listeners.listening(LISTENER_STALE_MS)).some((row) => row.port === PORT) === expected) return expected
      yield* Effect.sleep("100 millis")
    }
    return !expected
  })

layer(storage, { excludeTestServices: true, timeout: "2 minutes" })("the listener heartbeat", (it) => {
  it.effect("a beat that fails (the table away) is logged, and the beats after it write the row again", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* Effect.forkScoped(Effect.scoped(Effect.andThen(keepListed("heartbeat-test", { port: PORT, addresses: [] }, BEAT_MS), Effect.never)))
      expect(yield* until(true)).toBe(true)
      yield* sql`ALTER TABLE server_listeners RENAME TO server_listeners_away`
      yield* sql`DELETE FROM server_listeners_away`
      // Several beats fail meanwhile: the relation does not exist.
      yield* Effect.sleep(`${5 * BEAT_MS} millis`)
      yield* sql`ALTER TABLE server_listeners_away RENAME TO server_listeners`
      expect(yield* until(true)).toBe(true)
    }))

  it.effect("a beat that hangs (a lock held on the table) is given up after its interval and logged, its statement cancelled; the beat after the hang writes again", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const failed: Array<string> = []
      const collect = Logger.layer([Logger.make((options) => {
        if (options.logLevel === "Warn") failed.push(String(options.message))
      })])
      yield* Effect.forkScoped(
        Effect.scoped(Effect.andThen(keepListed("heartbeat-hang", { port: PORT, addresses: [] }, BEAT_MS), Effect.never)).pipe(Effect.provide(collect))
      )
      expect(yield* until(true)).toBe(true)
      const waiting = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`LOCK TABLE server_listeners IN ACCESS EXCLUSIVE MODE`
        yield* sql`DELETE FROM server_listeners`
        const before = failed.length
        // Many beats' time: each waits for the lock until its interval is up.
        yield* Effect.sleep(`${10 * BEAT_MS} millis`)
        const waiting = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO server_listeners%' AND pid <> pg_backend_pid()`
        return { given: failed.length - before, waiting: waiting[0]!.n }
      }))
      // The loop went on: several beats given up, and none left waiting beside the one in progress.
      expect(waiting.given).toBeGreaterThanOrEqual(3)
      expect(waiting.waiting).toBeLessThanOrEqual(1)
      expect(failed.at(-1)).toContain(`recording port ${PORT} as this server's failed`)
      expect(yield* until(true)).toBe(true)
    }))
})
