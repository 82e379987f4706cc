/**
 * One home for comparing a presented secret with the expected one in constant time (a metrics
 * scrape token, the console's CSRF token and notice MAC): `===` would leak by its timing how much of
 * a guess was right.
 */
import { timingSafeEqual } from "node:crypto"

/** Equal, compared in constant time; never equal when either is missing or the expected one is empty. */
export const sameSecret = (presented: string | undefined, expected: string | undefined): boolean => {
  if (presented === undefined || expected === undefined || expected.length === 0) return false
  const a = Buffer.from(presented), b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}
