/**
 * The replay cache in process memory (memory storage: one process, nothing to share).
 *
 * Bounded: every response to an unverified request that named an account enters it, so a leaked key
 * used from an address off the allowlist (403s) or past its rate limit (429s) could otherwise grow it
 * for as long as the window lasts. At `maxEntries` it drops the entries recorded longest ago (a Map
 * keeps insertion order; what has expired goes at the sweep, once a second): dropping a live entry reopens that one payload
 * to a replay, which is the lesser harm than the process running out of memory.
 */
import { Clock, Effect, Layer, Option } from "effect"
import { ReplayCache, type ReplayEntry } from "./ReplayCache.ts"

interface Held extends ReplayEntry {
  readonly expiresAt: number
}

/** Room for a window (330 s) of ~3,000 entries a second, a few hundred MB at most. */
export const DEFAULT_MAX_ENTRIES = 1_000_000

export const layerWith = ({ maxEntries }: { readonly maxEntries: number }): Layer.Layer<ReplayCache> =>
  Layer.sync(ReplayCache, () => {
    const entries = new Map<string, Held>()
    let nextSweep = 0
    const key = (account: string, digest: string) => `${account}:${digest}`
    const live = (held: Held | undefined, now: number) => held !== undefined && held.expiresAt > now ? held : undefined
    /** At most once a second, drop what has expired, so the map stays as large as one window's traffic. */
    const sweep = (now: number) => {
      if (now < nextSweep) return
      nextSweep = now + 1
      for (const [k, held] of entries) if (held.expiresAt <= now) entries.delete(k)
    }
    /**
     * Room for one more entry, the oldest recorded going first (the sweep has dropped the expired:
     * scanning again at every claim of a full map would cost a window's worth of work per request).
     */
    const makeRoom = () => {
      for (const k of entries.keys()) {
        if (entries.size < maxEntries) break
        entries.delete(k)
      }
    }
    const nowSeconds = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))
    const view = ({ kind, requestId }: Held): ReplayEntry => ({ kind, requestId })
    return ReplayCache.of({
      claim: (account, digest, entry, expiresAt) =>
        Effect.map(nowSeconds, (now) => {
          sweep(now)
          const k = key(account, digest)
          const held = live(entries.get(k), now)
          if (held !== undefined) return Option.some(view(held))
          entries.delete(k)
          makeRoom()
          entries.set(k, { kind: entry.kind, requestId: entry.requestId, expiresAt })
          return Option.none()
        }),
      find: (account, digest) =>
        Effect.map(nowSeconds, (now) => Option.map(Option.fromNullishOr(live(entries.get(key(account, digest)), now)), view))
    })
  })

export const layer: Layer.Layer<ReplayCache> = layerWith({ maxEntries: DEFAULT_MAX_ENTRIES })
