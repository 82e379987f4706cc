/**
 * The token bucket both rate limiters implement: `burst` tokens at most, refilled at `perSecond`,
 * one taken per request. RateLimiterRedis runs the same arithmetic in Lua (see there); this is the
 * reference it mirrors.
 */

export interface Bucket {
  readonly tokens: number
  readonly updatedAt: number
}

export interface Limit {
  readonly perSecond: number
  readonly burst: number
}

export const take = (
  bucket: Bucket | undefined,
  nowMs: number,
  limit: Limit
): { readonly bucket: Bucket; readonly allowed: boolean; readonly retryAfterMs: number } => {
  const elapsed = bucket === undefined ? 0 : Math.max(0, nowMs - bucket.updatedAt)
  const tokens = Math.min(limit.burst, (bucket?.tokens ?? limit.burst) + (elapsed * limit.perSecond) / 1000)
  return tokens >= 1
    ? { bucket: { tokens: tokens - 1, updatedAt: nowMs }, allowed: true, retryAfterMs: 0 }
    : { bucket: { tokens, updatedAt: nowMs }, allowed: false, retryAfterMs: ((1 - tokens) * 1000) / limit.perSecond }
}

/** `Retry-After` is whole seconds; a refusal always says at least 1. */
export const retryAfterSeconds = (allowed: boolean, retryAfterMs: number): number =>
  allowed ? 0 : Math.max(1, Math.ceil(retryAfterMs / 1000))
