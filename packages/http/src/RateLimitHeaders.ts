/**
 * The headers of a response subject to a token bucket (docs/decisions.md, "Rate-limit headers"):
 * `RateLimit-Limit` the burst (the bucket's size), `RateLimit-Remaining` the whole tokens left after
 * this request, `RateLimit-Reset` the whole seconds until the bucket is full again; a refusal (429)
 * adds `Retry-After`, the whole seconds until one token is there. They are not signed: the response
 * signature covers the body (contract.md, "Signatures").
 */
import type { RateLimitDecision } from "@tender/domain"
import { HttpServerResponse } from "effect/http"

export interface Limit {
  readonly perSecond: number
  readonly burst: number
}

export const of = (limit: Limit, decision: RateLimitDecision): Record<string, string> => ({
  "ratelimit-limit": String(limit.burst),
  "ratelimit-remaining": String(decision.remaining),
  "ratelimit-reset": String(decision.resetSeconds),
  ...(decision.allowed ? {} : { "retry-after": String(decision.retryAfterSeconds) })
})

/** Of several buckets a request spends from, the one nearest to refusing it (fewest tokens left). */
export const tightest = <A extends { readonly decision: RateLimitDecision }>(a: A, b: A): A =>
  b.decision.remaining < a.decision.remaining ? b : a

export const set = (response: HttpServerResponse.HttpServerResponse, headers: Record<string, string> | undefined) =>
  headers === undefined ? response : HttpServerResponse.setHeaders(response, headers)
