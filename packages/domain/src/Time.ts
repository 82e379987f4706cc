/** Timestamps as the API and storage write them: ISO 8601 UTC, read from Effect's Clock (tests move it). */
import { Clock, DateTime, Effect } from "effect"

export const isoOf = (ms: number): string => DateTime.formatIso(DateTime.makeUnsafe(ms))

export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, isoOf)
