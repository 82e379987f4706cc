/**
 * The accounts keys resolve to, cached in process (issue 13): every keyed request looked its
 * account up by key hash, one statement each. This layer wraps AccountRepoPg and answers
 * `findBySecretKeyHash` from a bounded in-process cache (BoundedCache: an attacker's keys are not
 * cached — unknown keys miss — but the cache stays bounded whatever is looked up).
 *
 * Correct across processes: the operator's CLI changes accounts from another process (`keys roll`,
 * `suspend`/`activate`, `signing-secret roll`, `allowlist`, `rate-limit`). A trigger (migration
 * 0026) NOTIFYs `tender_account_changed` when a change to an account or its keys commits; each
 * server LISTENs on a connection of its own and empties its cache on every notice, so a change
 * takes effect on every server as soon as the notice arrives (milliseconds after the commit).
 * The cache is used only while the listener is connected: it is emptied when listening starts
 * (notices sent before were never heard) and bypassed while it is down, until it reconnects.
 * A read that was under way when a notice arrived is not cached (it may have read the row before
 * the change). Entries are also dropped after `maxAgeMs`, which bounds what a connection that dies
 * without an error (a silent network partition) could leave stale.
 *
 * The listener starts with the first lookup, so a process that never authenticates a key (the CLI)
 * opens no connection for it. Changes made through this process's own repository empty the cache
 * at once too, without waiting for the notice.
 */
import { PgClient, PgConnection } from "@effect/sql-pg"
import { type Account, AccountRepo } from "@tender/domain"
import { BoundedCache } from "@tender/domain/kernel/BoundedCache"
import { Clock, Effect, Layer, Option, Queue, Schedule } from "effect"

export const CHANNEL = "tender_account_changed"

export interface AccountCacheOptions {
  /** Accounts held at most (least recently used dropped first). */
  readonly capacity: number
  /** An entry older than this is read again, whatever was heard. */
  readonly maxAgeMs: number
  /** Wait between attempts to listen again after the listener's connection is lost. */
  readonly retryMs: number
}

export const DEFAULT_OPTIONS: AccountCacheOptions = { capacity: 10_000, maxAgeMs: 30_000, retryMs: 1_000 }

interface Entry {
  readonly account: Account.Account
  readonly at: number
}

/** Wraps the AccountRepo it is provided with. */
export const layerWith = (options: AccountCacheOptions): Layer.Layer<AccountRepo, never, AccountRepo | PgClient.PgClient> =>
  Layer.effect(
    AccountRepo,
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const sql = yield* PgClient.PgClient
      const scope = yield* Effect.scope

      let cache = new BoundedCache<string, Entry>(options.capacity)
      /** Bumped by every invalidation: a read that started under an older generation is not kept. */
      let generation = 0
      let listening = false
      let started = false

      const invalidate = () => {
        generation++
        cache = new BoundedCache(options.capacity)
      }

      /** Listens until the connection fails; the cache is trusted only in between. */
      const listenOnce = Effect.scoped(Effect.gen(function*() {
        const connection = yield* PgConnection.make(sql.config)
        const notices = yield* connection.listen(CHANNEL)
        invalidate()
        listening = true
        // One notice or several, the answer is the same: forget everything (changes are rare).
        yield* Effect.forever(Effect.andThen(Queue.takeAll(notices), Effect.sync(invalidate)))
      })).pipe(
        Effect.ensuring(Effect.sync(() => {
          listening = false
          invalidate()
        }))
      )

      const listener = listenOnce.pipe(
        Effect.catchCause((cause) => Effect.logWarning("Account cache: listening for account changes failed; retrying", cause)),
        Effect.repeat(Schedule.spaced(options.retryMs))
      )

      const start = Effect.suspend(() => {
        if (started) return Effect.void
        started = true
        return Effect.asVoid(Effect.forkIn(listener, scope))
      })

      const findBySecretKeyHash = (hash: string) =>
        Effect.gen(function*() {
          yield* start
          const now = yield* Clock.currentTimeMillis
          if (listening) {
            const hit = cache.get(hash)
            if (hit !== undefined && now - hit.at < options.maxAgeMs) return Option.some(hit.account)
          }
          const before = generation
          const found = yield* repo.findBySecretKeyHash(hash)
          if (listening && generation === before && Option.isSome(found)) cache.set(hash, { account: found.value, at: now })
          return found
        })

      return AccountRepo.of({
        ...repo,
        findBySecretKeyHash,
        update: (next) => Effect.ensuring(repo.update(next), Effect.sync(invalidate))
      })
    })
  )

export const layer = layerWith(DEFAULT_OPTIONS)
