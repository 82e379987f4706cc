/**
 * The token bucket both rate limiters implement: `burst` tokens at most, refilled at `perSecond`,
 * one taken per request. RateLimiterRedis runs the same arithmetic in Lua (see there); this is the
 * reference it mirrors.
 */
import type { RateLimitDecision } from "@tender/domain"

export interface Bucket {
  readonly tokens: number
  readonly updatedAt: number
}

export interface Limit {
  readonly perSecond: number
  readonly burst: number
}

export interface Take {
  readonly bucket: Bucket
  readonly allowed: boolean
  /** Until a whole token is there (0 when allowed). */
  readonly retryAfterMs: number
  /** Whole tokens left after this take. */
  readonly remaining: number
  /** Until the bucket is full again. */
  readonly resetMs: number
}

export const take = (bucket: Bucket | undefined, nowMs: number, limit: Limit): Take => {
  const elapsed = bucket === undefined ? 0 : Math.max(0, nowMs - bucket.updatedAt)
  const before = Math.min(limit.burst, (bucket?.tokens ?? limit.burst) + (elapsed * limit.perSecond) / 1000)
  const allowed = before >= 1
  const tokens = allowed ? before - 1 : before
  return {
    bucket: { tokens, updatedAt: nowMs },
    allowed,
    retryAfterMs: allowed ? 0 : ((1 - tokens) * 1000) / limit.perSecond,
    remaining: Math.floor(tokens),
    resetMs: ((limit.burst - tokens) * 1000) / limit.perSecond
  }
}

/**
 * The take in the headers' whole numbers: `Retry-After` at least 1 on a refusal, and the reset
 * rounded up, so a client that waits that long finds the bucket full.
 */
export const decision = (take: Pick<Take, "allowed" | "retryAfterMs" | "remaining" | "resetMs">): RateLimitDecision => ({
  allowed: take.allowed,
  retryAfterSeconds: take.allowed ? 0 : Math.max(1, Math.ceil(take.retryAfterMs / 1000)),
  remaining: Math.max(0, take.remaining),
  resetSeconds: Math.max(0, Math.ceil(take.resetMs / 1000))
})
