/**
 * CVCs in process memory only, whatever the storage kind: they must never reach a disk or a log.
 * Each expires 15 minutes after it was put, like the client secret that collected it; taking one
 * removes it.
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
          const entry = entries.get(token)
          entries.delete(token)
          return entry !== undefined && entry.expiresAt > now ? Option.some(entry.cvc) : Option.none()
        })
    })
  })
)
