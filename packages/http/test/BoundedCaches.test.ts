/**
 * In-process caches whose keys a caller chooses stay bounded: the cache itself and the in-process
 * rate limiter's buckets (keyed by client IPs among others). The hosted page's country names:
 * CheckoutPage.test.ts.
 */
import { describe, expect, it } from "vitest"
import { RateLimiter } from "@tender/domain"
import { BoundedCache } from "@tender/domain/kernel/BoundedCache"
import * as RateLimiterMemory from "@tender/adapters/ratelimit/RateLimiterMemory"
import { Effect } from "effect"

describe("BoundedCache", () => {
  it("keeps at most its capacity, evicting the least recently used", () => {
    const cache = new BoundedCache<string, number>(2)
    cache.set("a", 1).set("b", 2)
    expect(cache.get("a")).toBe(1) // a is now the most recent
    cache.set("c", 3)
    expect([cache.has("a"), cache.has("b"), cache.has("c"), cache.size]).toEqual([true, false, true, 2])
  })
})

describe("the in-process rate limiter", () => {
  it("keeps at most its capacity of buckets: the least recently used is dropped (and starts full again)", async () => {
    const limiter = RateLimiterMemory.layerWith(1_000)
    // One layer, built once: the buckets live as long as it does.
    const run = await Effect.runPromise(Effect.map(Effect.context<RateLimiter>().pipe(Effect.provide(limiter)), (context) =>
      (key: string) =>
        Effect.runPromise(Effect.gen(function*() {
          return (yield* (yield* RateLimiter).consume(key, { perSecond: 0.001, burst: 1 })).allowed
        }).pipe(Effect.provideContext(context)))
    ))
    expect(await run("ip:203.0.113.1")).toBe(true)
    expect(await run("ip:203.0.113.1")).toBe(false)
    for (let i = 0; i < 1_000; i++) await run(`ip:10.0.${Math.floor(i / 256)}.${i % 256}`)
    // 1,000 other keys later the first bucket is gone: memory holds 1,000 buckets, not 1,001
    expect(await run("ip:203.0.113.1")).toBe(true)
  })
})
