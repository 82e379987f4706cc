/** In-process token buckets, one per key, on the Effect clock (so tests can move time). */
import { RateLimiter } from "@tender/domain"
import { Clock, Effect, Layer } from "effect"
import * as TokenBucket from "./TokenBucket.ts"

export const layer: Layer.Layer<RateLimiter> = Layer.sync(RateLimiter, () => {
  const buckets = new Map<string, TokenBucket.Bucket>()
  return RateLimiter.of({
    consume: (key, limit) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const { allowed, bucket, retryAfterMs } = TokenBucket.take(buckets.get(key), now, limit)
        buckets.set(key, bucket)
        return { allowed, retryAfterSeconds: TokenBucket.retryAfterSeconds(allowed, retryAfterMs) }
      })
  })
})
