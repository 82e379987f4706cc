/**
 * Locks shared by every process on one Redis: `SET key token NX PX ttl`, retried until `waitMs`.
 * Only the holder's token can release or extend a lock (compare-and-delete in Lua), so a holder
 * whose lock expired never frees someone else's. While the effect runs the lock is extended every
 * third of its TTL, so the TTL bounds how long a crashed holder blocks others, not how long a
 * live one may work.
 */
import { randomBytes } from "node:crypto"
import { Locks } from "@tender/domain"
import { Effect, Layer, Schedule } from "effect"
import { Redis } from "../redis/Redis.ts"
import { busy, DEFAULT_TTL_MS, DEFAULT_WAIT_MS } from "./Locking.ts"

export const KEY_PREFIX = "tender:lock:"
const RETRY_EVERY = "25 millis"

const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`
const EXTEND =
  `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`

interface LockCommands {
  tenderLockRelease(key: string, token: string): Promise<number>
  tenderLockExtend(key: string, token: string, ttlMs: number): Promise<number>
}

export const layer: Layer.Layer<Locks, never, Redis> = Layer.effect(
  Locks,
  Effect.gen(function*() {
    const redis = yield* Redis
    redis.defineCommand("tenderLockRelease", { numberOfKeys: 1, lua: RELEASE })
    redis.defineCommand("tenderLockExtend", { numberOfKeys: 1, lua: EXTEND })
    const commands = redis as unknown as LockCommands

    return Locks.of({
      withLock: (key, effect, options) => {
        const waitMs = options?.waitMs ?? DEFAULT_WAIT_MS
        const ttlMs = options?.ttlMs ?? DEFAULT_TTL_MS
        const redisKey = `${KEY_PREFIX}${key}`
        const token = randomBytes(16).toString("hex")
        const tryAcquire = Effect.promise(() => redis.set(redisKey, token, "PX", ttlMs, "NX"))
        return Effect.scoped(Effect.gen(function*() {
          // Registered before the first SET: a SET that lands after we gave up is still undone.
          yield* Effect.addFinalizer(() => Effect.promise(() => commands.tenderLockRelease(redisKey, token)))
          yield* tryAcquire.pipe(
            Effect.repeat({ until: (reply) => reply === "OK", schedule: Schedule.spaced(RETRY_EVERY) }),
            Effect.timeoutOrElse({ duration: waitMs, orElse: () => Effect.fail(busy(key, waitMs)) })
          )
          yield* Effect.forkScoped(
            Effect.promise(() => commands.tenderLockExtend(redisKey, token, ttlMs)).pipe(
              Effect.delay(Math.max(1, Math.floor(ttlMs / 3))),
              Effect.forever
            )
          )
          return yield* effect
        }))
      }
    })
  })
)
