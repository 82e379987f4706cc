/**
 * Token buckets in Redis, shared by every process: refill and take happen in one Lua script, so
 * two processes can never both spend the last token. Time is Redis's own clock, the one all
 * processes agree on. Idle buckets expire once they would be full again. The one round trip also
 * answers what the `RateLimit-*` headers say (tokens left, time until full).
 */
import { RateLimiter } from "@tender/domain"
import { Effect, Layer } from "effect"
import { Redis } from "../redis/Redis.ts"
import * as TokenBucket from "./TokenBucket.ts"

export const KEY_PREFIX = "tender:ratelimit:"

// Mirrors TokenBucket.take. Fractional tokens are stored as strings: Lua numbers would be truncated.
const TAKE = `
local per_second = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call("HMGET", KEYS[1], "tokens", "updated_at")
local tokens = tonumber(state[1]) or burst
local updated_at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - updated_at) * per_second / 1000)
local allowed = 0
local retry_after_ms = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  retry_after_ms = math.ceil((1 - tokens) * 1000 / per_second)
end
redis.call("HSET", KEYS[1], "tokens", tostring(tokens), "updated_at", tostring(now))
redis.call("PEXPIRE", KEYS[1], math.ceil(burst * 1000 / per_second) + 1000)
-- Redis returns Lua numbers as integers (truncated): whole tokens left, and ms rounded up until full.
return { allowed, retry_after_ms, math.floor(tokens), math.ceil((burst - tokens) * 1000 / per_second) }
`

interface BucketCommands {
  tenderTakeToken(key: string, perSecond: number, burst: number): Promise<[number, number, number, number]>
}

export const layer: Layer.Layer<RateLimiter, never, Redis> = Layer.effect(
  RateLimiter,
  Effect.gen(function*() {
    const redis = yield* Redis
    redis.defineCommand("tenderTakeToken", { numberOfKeys: 1, lua: TAKE })
    const commands = redis as unknown as BucketCommands
    return RateLimiter.of({
      consume: (key, limit) =>
        Effect.map(
          Effect.promise(() => commands.tenderTakeToken(`${KEY_PREFIX}${key}`, limit.perSecond, limit.burst)),
          ([allowed, retryAfterMs, remaining, resetMs]) =>
            TokenBucket.decision({ allowed: allowed === 1, retryAfterMs, remaining, resetMs })
        )
    })
  })
)
