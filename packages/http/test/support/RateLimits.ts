/**
 * The `RateLimit-*` headers (RateLimitHeaders.ts) of answers that spent one bucket in turn, read the
 * same way for the merchant API, the SDK's routes and the public ones.
 */
import { expect } from "vitest"

type HeadersLike = Headers | Record<string, string | Array<string> | undefined>

const header = (headers: HeadersLike, name: string): string | undefined => {
  const value = headers instanceof Headers ? headers.get(name) ?? undefined : headers[name]
  return Array.isArray(value) ? value.join(", ") : value
}

/** The four headers as numbers (NaN when absent). */
export const rateLimitOf = (headers: HeadersLike) => ({
  limit: Number(header(headers, "ratelimit-limit")),
  remaining: Number(header(headers, "ratelimit-remaining")),
  reset: Number(header(headers, "ratelimit-reset")),
  retryAfter: Number(header(headers, "retry-after"))
})

/**
 * `answers` spent a fresh bucket of size `burst` (refilling more slowly than they were sent), then
 * one more: each allowed answer says one token fewer left, and the refused one (429) carries all four
 * headers, none left, and whole seconds until a token and until the bucket is full.
 */
export const expectSpentBucket = (answers: ReadonlyArray<{ readonly status: number; readonly headers: HeadersLike }>, burst: number) => {
  const seen = answers.map((answer) => rateLimitOf(answer.headers))
  expect(seen.slice(0, burst).map((s) => [s.limit, s.remaining])).toEqual(
    Array.from({ length: burst }, (_, i) => [burst, burst - 1 - i])
  )
  const refused = answers[burst]!
  expect(refused.status).toBe(429)
  const last = seen[burst]!
  expect(last).toMatchObject({ limit: burst, remaining: 0 })
  expect(Number.isInteger(last.retryAfter) && last.retryAfter >= 1).toBe(true)
  expect(Number.isInteger(last.reset) && last.reset >= last.retryAfter).toBe(true)
}
