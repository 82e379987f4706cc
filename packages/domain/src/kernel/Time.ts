/** Timestamps as the API and storage write them: ISO 8601 UTC, read from Effect's Clock (tests move it). */
import { Clock, DateTime, Effect } from "effect"

export const isoOf = (ms: number): string => DateTime.formatIso(DateTime.makeUnsafe(ms))

export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, isoOf)

/**
 * When a worker asks again about something it could not finish this round (reconciliation's calls in
 * doubt, settlement's transactions awaiting the provider): after half its age (`since`: when it began),
 * from 1 s to 10 min — exponential in the number of tries, with a cap — never later than `until`. So
 * what stays stuck neither hammers the provider every round nor starves newer work.
 */
export const askAgainAt = (now: number, since: number, until = Infinity): number =>
  Math.min(now + Math.min(Math.max((now - since) / 2, 1_000), 10 * 60_000), until)
