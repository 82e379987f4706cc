import { describe, expect, it, layer } from "@effect/vitest"
import { RateLimiter } from "@tender/domain"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as LocksMemory from "../src/locks/LocksMemory.ts"
import * as RateLimiterMemory from "../src/ratelimit/RateLimiterMemory.ts"
import * as TokenBucket from "../src/ratelimit/TokenBucket.ts"
import { locksContract, rateLimiterContract } from "./CoordinationContract.ts"

layer(LocksMemory.layer, { excludeTestServices: true })("LocksMemory", (it) => {
  locksContract(it)
})

layer(RateLimiterMemory.layer, { excludeTestServices: true })("RateLimiterMemory", (it) => {
  rateLimiterContract(it)
})

describe("token bucket", () => {
  it.effect("refills on the Effect clock, capped at the burst", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const limit = { perSecond: 2, burst: 2 }
      expect((yield* limiter.consume("k", limit)).allowed).toBe(true)
      expect((yield* limiter.consume("k", limit)).allowed).toBe(true)
      expect(yield* limiter.consume("k", limit)).toEqual({ allowed: false, retryAfterSeconds: 1, remaining: 0, resetSeconds: 1 })
      yield* TestClock.adjust("500 millis")
      expect((yield* limiter.consume("k", limit)).allowed).toBe(true)
      expect((yield* limiter.consume("k", limit)).allowed).toBe(false)
      // A long idle period refills to the burst, not beyond.
      yield* TestClock.adjust("1 hour")
      expect((yield* limiter.consume("k", limit)).allowed).toBe(true)
      expect((yield* limiter.consume("k", limit)).allowed).toBe(true)
      expect((yield* limiter.consume("k", limit)).allowed).toBe(false)
    }).pipe(Effect.provide(RateLimiterMemory.layer)))

  it("rounds Retry-After and the reset up to whole seconds, Retry-After at least one when refused", () => {
    const at = (allowed: boolean, retryAfterMs: number, resetMs: number) =>
      TokenBucket.decision({ allowed, retryAfterMs, remaining: 0, resetMs })
    expect(at(true, 0, 0)).toMatchObject({ retryAfterSeconds: 0, resetSeconds: 0 })
    expect(at(false, 1, 1)).toMatchObject({ retryAfterSeconds: 1, resetSeconds: 1 })
    expect(at(false, 1000, 1000)).toMatchObject({ retryAfterSeconds: 1, resetSeconds: 1 })
    expect(at(false, 1001, 2001)).toMatchObject({ retryAfterSeconds: 2, resetSeconds: 3 })
  })
})
