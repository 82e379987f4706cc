/**
 * In-process caches of rows that other processes change, kept right by PostgreSQL notifications
 * (issue 13 for accounts, issue 24 for channels and webhook endpoints). The operator's CLI, another
 * server, a hand-run SQL fix: whoever commits a change to a cached table fires that table's trigger,
 * which NOTIFYs the table's channel (PostgreSQL delivers it when the change commits, and not at all
 * when it rolls back), and every process forgets what it held as soon as the notice arrives,
 * milliseconds after the commit.
 *
 * What makes it safe, for every cache alike:
 * - The cache is trusted only while the process listens. Listening starts with the first read
 *   (a process that never reads, such as most CLI commands, opens no connection for it); the cache
 *   is emptied when listening starts (notices sent before were never heard) and bypassed while the
 *   listener is down, until it reconnects.
 * - A read that was under way when anything was forgotten is not kept: it may have read the row
 *   before the change (a generation count).
 * - Entries are read again after `maxAgeMs`, which bounds what a connection that dies without an
 *   error (a silent network partition) could leave stale.
 * - Changes made through this process's own repository are forgotten at once, and again when their
 *   unit of work or transaction commits (UnitOfWorkPg.afterCommit): a read by another fiber in
 *   between sees the row as it was before the change. A transaction that changed a cached table
 *   reads it from the database, and what it reads is never kept (it may roll back, and then no
 *   notice comes).
 * - Reads assume READ COMMITTED (Tender's only level): a statement sees what committed before it
 *   started, so a change is either seen or announced after the read began. That holds on the
 *   primary only: a replica may not have replayed a change whose notice came already, so a cache
 *   loads from the primary even in a read that prefers the replica (ReadRouting.ts).
 *
 * One connection per process listens for every cache (`Listener`), not one each.
 */
import { PgClient, PgConnection } from "@effect/sql-pg"
import { BoundedCache } from "@tender/domain/kernel/BoundedCache"
import { Clock, Context, Effect, Fiber, Layer, Option, Queue, Schedule, Semaphore } from "effect"
import { ReadSource } from "./ReadRouting.ts"
import { afterCommit } from "./UnitOfWorkPg.ts"

/** What a cache tells the listener: the channel it follows, and what to do as things happen. */
interface Subscriber {
  readonly channel: string
  /** A change committed somewhere; `payload` is what the trigger sent. */
  readonly notice: (payload: string) => void
  /** Listening started (`true`: notices are heard from now on) or stopped. */
  readonly listening: (up: boolean) => void
}

/** The process's one listening connection, shared by its notified caches. */
export class Listener extends Context.Service<Listener, {
  /** Follows a channel; a cache subscribing after listening began makes the listener start over. */
  subscribe(subscriber: Subscriber): Effect.Effect<void>
  /** Starts listening, the first time only. */
  readonly start: Effect.Effect<void>
}>()("@tender/adapters/NotifiedCache/Listener") {}

export interface ListenerOptions {
  /** Wait between attempts to listen again after the listener's connection is lost. */
  readonly retryMs: number
}

export const listenerLayerWith = (options: ListenerOptions): Layer.Layer<Listener, never, PgClient.PgClient> =>
  Layer.effect(
    Listener,
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const scope = yield* Effect.scope
      const subscribers: Array<Subscriber> = []
      let running: Fiber.Fiber<unknown> | undefined

      /** Listens for the subscribers of the moment until the connection fails. */
      const listenOnce = Effect.suspend(() => {
        const heard = [...subscribers]
        return Effect.scoped(Effect.gen(function*() {
          // Pinned once: every listen pins the connection, and a second pin would wait for the first's end.
          const connection = yield* Effect.flatMap(PgConnection.make(sql.config), (c) => c.pin)
          const queues = yield* Effect.forEach(heard, (s) => connection.listen(s.channel))
          for (const s of heard) s.listening(true)
          // A dead connection fails every queue, which ends them all.
          yield* Effect.forEach(heard, (s, i) =>
            Effect.forever(Effect.flatMap(Queue.takeAll(queues[i]!), (notices) =>
              Effect.sync(() => {
                for (const n of notices) s.notice(n.payload)
              }))), { concurrency: "unbounded", discard: true })
        })).pipe(Effect.ensuring(Effect.sync(() => {
          for (const s of heard) s.listening(false)
        })))
      })

      const listener = listenOnce.pipe(
        Effect.catchCause((cause) => Effect.logWarning("Notified caches: listening for changes failed; retrying", cause)),
        Effect.repeat(Schedule.spaced(options.retryMs))
      )
      // Starting and starting over one at a time: two first reads must not start two listeners.
      const permit = Semaphore.makeUnsafe(1)
      const fork = Effect.map(Effect.forkIn(listener, scope), (fiber) => {
        running = fiber
      })

      return Listener.of({
        subscribe: (subscriber) =>
          permit.withPermit(Effect.suspend(() => {
            subscribers.push(subscriber)
            if (running === undefined) return Effect.void
            // Rare (every cache subscribes as storage is built, before any read): start over with it.
            // Interrupting waits for the old listener's end, so its "stopped" comes before the new "started".
            return Effect.andThen(Fiber.interrupt(running), fork)
          })),
        start: Effect.suspend(() => running === undefined ? permit.withPermit(Effect.suspend(() => running === undefined ? fork : Effect.void)) : Effect.void)
      })
    })
  )

export const listenerLayer = listenerLayerWith({ retryMs: 1_000 })

export interface CacheOptions {
  /** Entries held at most (least recently used dropped first). */
  readonly capacity: number
  /** An entry older than this is read again, whatever was heard. */
  readonly maxAgeMs: number
}

export interface NotifiedCache<K, V> {
  /**
   * The value under `key`: from the cache when it may be trusted, else `load`ed (and kept, when
   * `keep` says so and nothing was forgotten meanwhile).
   */
  read<E, R>(key: K, load: Effect.Effect<V, E, R>, keep?: (value: V) => boolean): Effect.Effect<V, E, R>
  /** Runs a change of what `key` (`undefined`: anything) holds through this process's repository. */
  change<A, E, R>(key: K | undefined, write: Effect.Effect<A, E, R>): Effect.Effect<A, E, R>
}

/**
 * A cache following `channel`. `keyOf` reads a notice's payload as the key it changes; without it
 * (or when it answers `undefined`) a notice forgets everything.
 */
export const make = <K, V>(
  options: CacheOptions & { readonly channel: string; readonly keyOf?: (payload: string) => K | undefined }
): Effect.Effect<NotifiedCache<K, V>, never, Listener | PgClient.PgClient> =>
  Effect.gen(function*() {
    const listener = yield* Listener
    const sql = yield* PgClient.PgClient
    let entries = new BoundedCache<K, { readonly value: V; readonly at: number }>(options.capacity)
    /** Bumped by everything forgotten: a read that started under an older generation is not kept. */
    let generation = 0
    let listening = false
    /** The transactions that changed what this cache holds, by their connection (a savepoint's too). */
    const changedIn = new WeakSet<object>()

    const forget = (key: K | undefined) => {
      generation++
      if (key === undefined) entries = new BoundedCache(options.capacity)
      else entries.delete(key)
    }
    yield* listener.subscribe({
      channel: options.channel,
      notice: (payload) => forget(options.keyOf?.(payload)),
      listening: (up) => {
        listening = up
        forget(undefined)
      }
    })
    const transaction = Effect.map(Effect.serviceOption(sql.transactionService), (open) => Option.getOrUndefined(open)?.[0])

    return {
      read: (key, load, keep) =>
        Effect.gen(function*() {
          yield* listener.start
          const open = yield* transaction
          const trusted = listening && (open === undefined || !changedIn.has(open))
          const now = yield* Clock.currentTimeMillis
          if (trusted) {
            const hit = entries.get(key)
            if (hit !== undefined && now - hit.at < options.maxAgeMs) return hit.value
          }
          const before = generation
          const value = yield* Effect.provideService(load, ReadSource, undefined)
          if (trusted && listening && generation === before && (keep?.(value) ?? true)) entries.set(key, { value, at: now })
          return value
        }),
      change: (key, write) =>
        Effect.flatMap(transaction, (open) => {
          if (open !== undefined) changedIn.add(open)
          const forgotten = Effect.sync(() => forget(key))
          return Effect.ensuring(write, Effect.andThen(forgotten, afterCommit(sql)(forgotten)))
        })
    }
  })

