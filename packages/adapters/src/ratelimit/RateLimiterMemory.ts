/**
 * In-process token buckets, one per key, on the Effect clock (so tests can move time). Keys include
 * client IP addresses, which anyone can vary, so at most `capacity` buckets are kept, the least
 * recently used dropped first: a dropped bucket starts full again, which is where an idle one would
 * be anyway.
 */
import { RateLimiter } from "@tender/domain"
import { BoundedCache } from "@tender/domain/kernel/BoundedCache"
import { Clock, Effect, Layer } from "effect"
import * as TokenBucket from "./TokenBucket.ts"

export const DEFAULT_CAPACITY = 100_000

export const layerWith = (capacity: number): Layer.Layer<RateLimiter> =>
  Layer.sync(RateLimiter, () => {
    const buckets = new BoundedCache<string, TokenBucket.Bucket>(capacity)
    return RateLimiter.of({
      consume: (key, limit) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const taken = TokenBucket.take(buckets.get(key), now, limit)
          buckets.set(key, taken.bucket)
          return TokenBucket.decision(taken)
        })
    })
  })

export const layer: Layer.Layer<RateLimiter> = layerWith(DEFAULT_CAPACITY)
