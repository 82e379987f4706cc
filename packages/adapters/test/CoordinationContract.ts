/**
 * The contract of Locks and RateLimiter, run against the in-process and the Redis adapters. Real
 * time throughout (waits are tens of milliseconds): Redis keeps its own clock anyway.
 */
import type { Vitest } from "@effect/vitest"
import { expect } from "@effect/vitest"
import { Errors, Locks, RateLimiter } from "@tender/domain"
import { Deferred, Effect, Fiber, Ref } from "effect"

/** Keys unique per run: a shared Redis outlives the test process. */
export const uniqueKey = (name: string) => `test:${name}:${Date.now()}:${Math.random().toString(36).slice(2)}`

export const locksContract = (it: Vitest.MethodsNonLive<Locks>) => {
  it.effect("runs the effect and returns its value", () =>
    Effect.gen(function*() {
      const locks = yield* Locks
      expect(yield* locks.withLock(uniqueKey("value"), Effect.succeed(42))).toBe(42)
    }))

  it.effect("lets one holder in at a time", () =>
    Effect.gen(function*() {
      const locks = yield* Locks
      const key = uniqueKey("exclusive")
      const inside = yield* Ref.make(0)
      const most = yield* Ref.make(0)
      const critical = Effect.gen(function*() {
        const now = yield* Ref.updateAndGet(inside, (n) => n + 1)
        yield* Ref.update(most, (m) => Math.max(m, now))
        yield* Effect.sleep("20 millis")
        yield* Ref.update(inside, (n) => n - 1)
      })
      yield* Effect.all(Array.from({ length: 5 }, () => locks.withLock(key, critical)), { concurrency: "unbounded" })
      expect(yield* Ref.get(most)).toBe(1)
    }))

  it.effect("different keys do not wait for each other", () =>
    Effect.gen(function*() {
      const locks = yield* Locks
      const held = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(
        locks.withLock(uniqueKey("a"), Effect.andThen(Deferred.succeed(held, undefined), Effect.sleep("500 millis")))
      )
      yield* Deferred.await(held)
      expect(yield* locks.withLock(uniqueKey("b"), Effect.succeed("free"), { waitMs: 50 })).toBe("free")
      yield* Fiber.interrupt(holder)
    }))

  it.effect("answers Conflict once waitMs has elapsed", () =>
    Effect.gen(function*() {
      const locks = yield* Locks
      const key = uniqueKey("busy")
      const held = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(
        locks.withLock(key, Effect.andThen(Deferred.succeed(held, undefined), Effect.never))
      )
      yield* Deferred.await(held)
      const started = Date.now()
      const error = yield* Effect.flip(locks.withLock(key, Effect.succeed("never"), { waitMs: 100 }))
      expect(error).toBeInstanceOf(Errors.Conflict)
      expect(Date.now() - started).toBeGreaterThanOrEqual(90)
      yield* Fiber.interrupt(holder)
      // And once the holder is gone the key is free again.
      expect(yield* locks.withLock(key, Effect.succeed("after"), { waitMs: 500 })).toBe("after")
    }))

  it.effect("releases the key when the effect fails", () =>
    Effect.gen(function*() {
      const locks = yield* Locks
      const key = uniqueKey("failure")
      expect(yield* Effect.flip(locks.withLock(key, Effect.fail("boom")))).toBe("boom")
      expect(yield* locks.withLock(key, Effect.succeed("next"), { waitMs: 50 })).toBe("next")
    }))

  it.effect("releases the key when the holder is interrupted", () =>
    Effect.gen(function*() {
      const locks = yield* Locks
      const key = uniqueKey("interrupt")
      const held = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(
        locks.withLock(key, Effect.andThen(Deferred.succeed(held, undefined), Effect.never))
      )
      yield* Deferred.await(held)
      yield* Fiber.interrupt(holder)
      expect(yield* locks.withLock(key, Effect.succeed("next"), { waitMs: 50 })).toBe("next")
    }))

  it.effect("a waiter that gave up does not hold the key afterwards", () =>
    Effect.gen(function*() {
      const locks = yield* Locks
      const key = uniqueKey("gave-up")
      const release = yield* Deferred.make<void>()
      const held = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(
        locks.withLock(key, Effect.andThen(Deferred.succeed(held, undefined), Deferred.await(release)))
      )
      yield* Deferred.await(held)
      yield* Effect.flip(locks.withLock(key, Effect.void, { waitMs: 30 }))
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      expect(yield* locks.withLock(key, Effect.succeed("free"), { waitMs: 50 })).toBe("free")
    }))
}

export const rateLimiterContract = (it: Vitest.MethodsNonLive<RateLimiter>) => {
  it.effect("allows a burst, saying what is left and when it is full again, then refuses with a whole-second Retry-After", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const key = uniqueKey("burst")
      const limit = { perSecond: 1, burst: 3 }
      // One token a second: after the i-th take, 2 - i whole tokens are left and i + 1 seconds refill them.
      for (let i = 0; i < 3; i++) {
        expect(yield* limiter.consume(key, limit)).toEqual({ allowed: true, retryAfterSeconds: 0, remaining: 2 - i, resetSeconds: i + 1 })
      }
      expect(yield* limiter.consume(key, limit)).toEqual({ allowed: false, retryAfterSeconds: 1, remaining: 0, resetSeconds: 3 })
    }))

  it.effect("Retry-After reflects the refill rate", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const key = uniqueKey("slow")
      const limit = { perSecond: 0.25, burst: 1 }
      expect((yield* limiter.consume(key, limit)).allowed).toBe(true)
      const refused = yield* limiter.consume(key, limit)
      expect(refused.allowed).toBe(false)
      expect(refused.retryAfterSeconds).toBe(4)
    }))

  it.effect("keys have their own buckets", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const limit = { perSecond: 1, burst: 1 }
      const a = uniqueKey("a")
      expect((yield* limiter.consume(a, limit)).allowed).toBe(true)
      expect((yield* limiter.consume(a, limit)).allowed).toBe(false)
      expect((yield* limiter.consume(uniqueKey("b"), limit)).allowed).toBe(true)
    }))

  it.effect("refills with time", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const key = uniqueKey("refill")
      const limit = { perSecond: 20, burst: 1 }
      expect((yield* limiter.consume(key, limit)).allowed).toBe(true)
      expect((yield* limiter.consume(key, limit)).allowed).toBe(false)
      yield* Effect.sleep("120 millis")
      expect((yield* limiter.consume(key, limit)).allowed).toBe(true)
    }))

  it.effect("never lets concurrent requests spend more than the bucket holds", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const key = uniqueKey("race")
      const results = yield* Effect.all(
        Array.from({ length: 20 }, () => limiter.consume(key, { perSecond: 1, burst: 5 })),
        { concurrency: "unbounded" }
      )
      expect(results.filter((r) => r.allowed)).toHaveLength(5)
    }))
}
