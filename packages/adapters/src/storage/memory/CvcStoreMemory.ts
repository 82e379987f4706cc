/**
 * CVCs in process memory (no `REDIS_URL`): they never reach a disk or a log. Each expires 15 minutes
 * after it was put, like the client secret that collected it; taking one removes it. Every put and
 * take sweeps the expired ones first, so an expired code is never given back. (No sweeper fiber:
 * on a test clock moved across years, a schedule would replay every missed minute.)
 * Without Redis they are per process: a CVC put through one server cannot be taken through another
 * (docs/decisions.md, "Card data").
 */
import { CvcStore } from "@tender/domain"
import { Clock, Effect, Layer, Option } from "effect"

export const CVC_TTL_MS = 15 * 60 * 1000

export const layer: Layer.Layer<CvcStore> = Layer.effect(
  CvcStore,
  Effect.sync(() => {
    // Insertion order is expiry order (one TTL, re-puts move to the end), so sweeping stops early.
    const entries = new Map<string, { readonly cvc: string; readonly expiresAt: number }>()
    const sweep = (now: number) => {
      for (const [token, entry] of entries) {
        if (entry.expiresAt > now) break
        entries.delete(token)
      }
    }
    return CvcStore.of({
      put: (token, cvc) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          sweep(now)
          entries.delete(token)
          entries.set(token, { cvc, expiresAt: now + CVC_TTL_MS })
        }),
      take: (token) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          sweep(now)
          const entry = entries.get(token)
          entries.delete(token)
          return entry !== undefined ? Option.some(entry.cvc) : Option.none()
        })
    })
  })
)
