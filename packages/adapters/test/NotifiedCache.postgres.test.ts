/**
 * The notified cache (NotifiedCache.ts) on real PostgreSQL, once for every cache built on it
 * (accounts, channels, webhook endpoints): a probe table whose trigger is migration 0038's, a cache
 * of its rows by account, and a count of the reads that reached the database. A change made on
 * another connection, not through the cache (as another process makes it), is seen within a second;
 * what could have been missed is never served (reconnect empties, a read under way when a change
 * arrives is not kept); this process's own changes are seen at once, transactions included.
 */
import { expect, layer } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { type Context, Deferred, Effect, Fiber, Layer, Option } from "effect"
import * as PgDatabase from "../src/storage/postgres/PgDatabase.ts"
import * as NotifiedCache from "../src/storage/postgres/NotifiedCache.ts"
import { preferReplica, ReadSource } from "../src/storage/postgres/ReadRouting.ts"
import { sharedConfig } from "./PgTestDatabase.ts"

const database = Layer.unwrap(Effect.map(sharedConfig, (config) => PgDatabase.client(config)))

/** The probe table's notices, sent by migration 0038's trigger function as channels' and endpoints' are. */
const ANNOUNCED = "probe_changed"
/** A channel nothing notifies: only the cache's own forgetting (or its max age) can show a change. */
const UNANNOUNCED = "probe_unannounced"
/** How soon another connection's change must be seen (LISTEN/NOTIFY carries it in milliseconds). */
const PROMPTLY_MS = 1_000
/** The listener's wait before listening again after its connection is lost. */
const RETRY_MS = 300

const probeTable = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  yield* sql`CREATE TABLE IF NOT EXISTS probe (account_id text PRIMARY KEY, value text NOT NULL)`
  yield* sql`CREATE OR REPLACE TRIGGER probe_changed AFTER INSERT OR UPDATE OR DELETE ON probe
    FOR EACH ROW EXECUTE FUNCTION tender_account_rows_changed('probe_changed')`
})

let keys = 0
const newKey = () => `acct_probe_${process.pid}_${++keys}_${Date.now().toString(36)}`

/**
 * A cache of the probe's values by key over a listener of its own, and `loads`: how many reads
 * reached the database. `gate`, when set, holds a load after its statement until it is opened.
 */
const probe = (
  options: Partial<NotifiedCache.CacheOptions> & {
    readonly channel?: string
    /** Another probe's listener (by default, one of its own). */
    readonly listener?: Context.Context<NotifiedCache.Listener>
  } = {}
) =>
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    yield* probeTable
    const listener = options.listener ?? (yield* Layer.build(NotifiedCache.listenerLayerWith({ retryMs: RETRY_MS })))
    const cache = yield* NotifiedCache.make<string, Option.Option<string>>({
      capacity: options.capacity ?? 100,
      maxAgeMs: options.maxAgeMs ?? 60_000,
      channel: options.channel ?? ANNOUNCED,
      keyOf: (key) => key
    }).pipe(Effect.provideContext(listener))
    const state = { loads: 0, gate: undefined as Deferred.Deferred<void> | undefined, held: false, onReplica: 0 }
    const load = (key: string) =>
      Effect.gen(function*() {
        state.loads++
        if ((yield* ReadSource) !== undefined) state.onReplica++
        const rows = yield* sql<{ value: string }>`SELECT value FROM probe WHERE account_id = ${key}`
        if (state.gate !== undefined) {
          state.held = true
          yield* Deferred.await(state.gate)
        }
        return Option.fromNullishOr(rows[0]?.value)
      }).pipe(Effect.orDie)
    return {
      listener,
      state,
      read: (key: string) => cache.read(key, load(key)),
      /** Through the cache, as this process's repository writes. */
      change: (key: string, value: string) => cache.change(key, write(key, value))
    }
  })

/** A write the cache is not told of: as another process makes it. */
const write = (key: string, value: string) =>
  Effect.flatMap(PgClient.PgClient, (sql) =>
    sql`INSERT INTO probe (account_id, value) VALUES (${key}, ${value})
        ON CONFLICT (account_id) DO UPDATE SET value = EXCLUDED.value`).pipe(Effect.asVoid, Effect.orDie)

type Probe = Effect.Success<ReturnType<typeof probe>>

/** Reads until a read is answered from the cache (the listener listens, the entry is kept). */
const cached = (p: Probe, key: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100; i++) {
      const before = p.state.loads
      yield* p.read(key)
      if (p.state.loads === before) return
      yield* Effect.sleep("20 millis")
    }
    throw new Error(`${key} is never answered from the cache`)
  })

/** Reads until the value is `expected`; how long that took. */
const untilRead = (p: Probe, key: string, expected: string) =>
  Effect.gen(function*() {
    const started = Date.now()
    while (Date.now() - started < 10_000) {
      if (Option.getOrUndefined(yield* p.read(key)) === expected) return Date.now() - started
      yield* Effect.sleep("10 millis")
    }
    throw new Error(`${key} never read as ${expected}`)
  })

/** Reads until a read reaches the database (the cache is bypassed or was emptied). */
const uncached = (p: Probe, key: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100; i++) {
      const before = p.state.loads
      yield* p.read(key)
      if (p.state.loads > before) return
      yield* Effect.sleep("10 millis")
    }
    throw new Error(`${key} is always answered from the cache`)
  })

/** The backends listening on `channel` (their last statement was the LISTEN). */
const listenerPids = (channel: string) =>
  Effect.flatMap(PgClient.PgClient, (sql) =>
    sql<{ pid: number }>`SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND query = ${`LISTEN "${channel}"`}`).pipe(
    Effect.map((rows) => rows.map((r) => r.pid)),
    Effect.orDie
  )

layer(database, { excludeTestServices: true, timeout: "2 minutes" })("NotifiedCache on PostgreSQL", (it) => {
  it.effect("answers from the cache once listening; the listener starts with the first read, not before", () =>
    Effect.gen(function*() {
      const p = yield* probe({ channel: UNANNOUNCED })
      const key = newKey()
      yield* write(key, "v1")
      expect(yield* listenerPids(UNANNOUNCED)).toEqual([])
      yield* cached(p, key)
      expect(yield* listenerPids(UNANNOUNCED)).toHaveLength(1)
      const loads = p.state.loads
      for (let i = 0; i < 5; i++) expect(yield* p.read(key)).toEqual(Option.some("v1"))
      expect(p.state.loads).toBe(loads)
    }))

  it.effect("a change committed on another connection is seen within a second, for its key only", () =>
    Effect.gen(function*() {
      const p = yield* probe()
      const [key, other] = [newKey(), newKey()]
      yield* write(key, "v1")
      yield* write(other, "o1")
      yield* cached(p, key)
      yield* cached(p, other)
      yield* write(key, "v2")
      expect(yield* untilRead(p, key, "v2")).toBeLessThan(PROMPTLY_MS)
      // The notice named `key`: `other` is still answered from the cache.
      const loads = p.state.loads
      expect(yield* p.read(other)).toEqual(Option.some("o1"))
      expect(p.state.loads).toBe(loads)
    }))

  it.effect("nothing is kept across a lost listener: a change made while it was down is read after it listens again", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const p = yield* probe()
      const key = newKey()
      yield* write(key, "v1")
      yield* cached(p, key)
      // Earlier tests' listeners may take a moment to leave: wait for this one alone.
      for (let i = 0; i < 100 && (yield* listenerPids(ANNOUNCED)).length !== 1; i++) yield* Effect.sleep("20 millis")
      const [pid] = yield* listenerPids(ANNOUNCED)
      yield* sql`SELECT pg_terminate_backend(${pid!})`
      // Once the loss is noticed, and before the listener can listen again (it waits RETRY_MS), v2
      // commits: its notice is never heard.
      yield* uncached(p, key)
      yield* write(key, "v2")
      for (let i = 0; i < 100 && (yield* listenerPids(ANNOUNCED)).filter((n) => n !== pid).length === 0; i++) {
        expect(yield* p.read(key)).toEqual(Option.some("v2"))
        yield* Effect.sleep("20 millis")
      }
      expect((yield* listenerPids(ANNOUNCED)).filter((n) => n !== pid)).toHaveLength(1)
      expect(yield* p.read(key)).toEqual(Option.some("v2"))
      // Listening again, the cache is trusted again.
      yield* cached(p, key)
      expect(yield* p.read(key)).toEqual(Option.some("v2"))
    }))

  it.effect("one connection listens for every cache, a cache that comes after listening began included", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const first = yield* probe({ channel: UNANNOUNCED })
      const key = newKey()
      yield* write(key, "v1")
      yield* cached(first, key)
      // Made once the listener listens: it starts over, listening for both.
      const late = yield* probe({ listener: first.listener })
      yield* cached(late, key)
      yield* cached(first, key)
      yield* write(key, "v2")
      expect(yield* untilRead(late, key, "v2")).toBeLessThan(PROMPTLY_MS)
      expect(yield* first.read(key)).toEqual(Option.some("v1"))
      // One backend listens for both (an earlier test's listener may take a moment to leave).
      const listening = () =>
        Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND query IN (${`LISTEN "${ANNOUNCED}"`}, ${`LISTEN "${UNANNOUNCED}"`})`, (rows) => rows[0]!.n)
      for (let i = 0; i < 100 && (yield* listening()) !== 1; i++) yield* Effect.sleep("20 millis")
      expect(yield* listening()).toBe(1)
    }))

  it.effect("a read under way when a change is announced returns what it read, and is not kept", () =>
    Effect.gen(function*() {
      const p = yield* probe()
      const key = newKey()
      const canary = newKey()
      yield* write(key, "v1")
      yield* write(canary, "c1")
      yield* cached(p, key)
      yield* cached(p, canary)
      yield* p.change(key, "v1") // forgets `key`: the next read loads it
      p.state.gate = yield* Deferred.make<void>()
      const reading = yield* Effect.forkChild(p.read(key))
      // The read has its row (v1) and is held; v2 commits and is announced meanwhile.
      for (let i = 0; i < 1_000 && !p.state.held; i++) yield* Effect.sleep("5 millis")
      expect(p.state.held).toBe(true)
      yield* write(key, "v2")
      yield* write(canary, "c2")
      const gate = p.state.gate
      p.state.gate = undefined
      // The canary's notice came after v2's (one connection, in commit order): v2's was heard too.
      yield* untilRead(p, canary, "c2")
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(reading)).toEqual(Option.some("v1"))
      expect(yield* p.read(key)).toEqual(Option.some("v2"))
    }))

  it.effect("a read that prefers the replica loads from the primary: a replica may not have replayed what a notice announced", () =>
    Effect.gen(function*() {
      const p = yield* probe()
      const key = newKey()
      yield* write(key, "v1")
      yield* preferReplica(cached(p, key), () => false)
      expect(p.state.loads).toBeGreaterThan(0)
      expect(p.state.onReplica).toBe(0)
    }))

  it.effect("this process's own change is seen at once, without its notice", () =>
    Effect.gen(function*() {
      const p = yield* probe({ channel: UNANNOUNCED })
      const key = newKey()
      yield* write(key, "v1")
      yield* cached(p, key)
      // Unannounced: a change the cache is not told of stays unseen (the cache is in use).
      yield* write(key, "hidden")
      expect(yield* p.read(key)).toEqual(Option.some("v1"))
      yield* p.change(key, "v2")
      expect(yield* p.read(key)).toEqual(Option.some("v2"))
    }))

  it.effect("in a transaction that changed it, reads go to the database and are not kept; a read by another fiber before the commit does not outlive it", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const p = yield* probe({ channel: UNANNOUNCED })
      const key = newKey()
      yield* write(key, "v1")
      yield* cached(p, key)

      // Rolled back: the transaction read its own change, and nobody keeps it.
      const inside = yield* Effect.flip(sql.withTransaction(Effect.gen(function*() {
        yield* p.change(key, "rolled-back")
        const read = yield* p.read(key)
        return yield* Effect.fail(read)
      })))
      expect(inside).toEqual(Option.some("rolled-back"))
      expect(yield* p.read(key)).toEqual(Option.some("v1"))
      yield* cached(p, key)

      // Committed: another fiber reads the row as it was while the transaction is open (and may
      // keep it: it was forgotten before that read began); the commit forgets it again.
      const written = yield* Deferred.make<void>()
      const committed = yield* Deferred.make<void>()
      const writer = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
        yield* p.change(key, "v2")
        yield* Deferred.succeed(written, undefined)
        yield* Deferred.await(committed)
      })))
      yield* Deferred.await(written)
      expect(yield* p.read(key)).toEqual(Option.some("v1"))
      yield* Deferred.succeed(committed, undefined)
      yield* Fiber.join(writer)
      expect(yield* p.read(key)).toEqual(Option.some("v2"))
    }))

  it.effect("an entry older than the maximum age is read again; the cache holds at most its capacity", () =>
    Effect.gen(function*() {
      const p = yield* probe({ channel: UNANNOUNCED, maxAgeMs: 300, capacity: 2 })
      const [a, b, c] = [newKey(), newKey(), newKey()]
      for (const key of [a, b, c]) yield* write(key, "v1")
      yield* cached(p, a)
      yield* write(a, "v2")
      expect(yield* p.read(a)).toEqual(Option.some("v1"))
      yield* Effect.sleep("350 millis")
      expect(yield* p.read(a)).toEqual(Option.some("v2"))

      yield* cached(p, a)
      yield* cached(p, b)
      yield* cached(p, c)
      // `a`, least recently used, made room for `c`.
      const loads = p.state.loads
      yield* p.read(a)
      expect(p.state.loads).toBe(loads + 1)
    }))
})
