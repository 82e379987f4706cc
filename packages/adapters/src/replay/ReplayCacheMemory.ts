/** The replay cache in process memory (memory storage: one process, nothing to share). */
import { Clock, Effect, Layer, Option } from "effect"
import { ReplayCache, type ReplayEntry } from "./ReplayCache.ts"

interface Held extends ReplayEntry {
  readonly expiresAt: number
}

export const layer: Layer.Layer<ReplayCache> = Layer.sync(ReplayCache, () => {
  const entries = new Map<string, Held>()
  let nextSweep = 0
  const key = (account: string, signature: string) => `${account}:${signature}`
  const live = (held: Held | undefined, now: number) => held !== undefined && held.expiresAt > now ? held : undefined
  /** At most once a second, drop what has expired, so the map stays as large as one window's traffic. */
  const sweep = (now: number) => {
    if (now < nextSweep) return
    nextSweep = now + 1
    for (const [k, held] of entries) if (held.expiresAt <= now) entries.delete(k)
  }
  const nowSeconds = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))
  const view = ({ kind, requestId }: Held): ReplayEntry => ({ kind, requestId })
  return ReplayCache.of({
    claim: (account, signature, entry, expiresAt) =>
      Effect.map(nowSeconds, (now) => {
        sweep(now)
        const held = live(entries.get(key(account, signature)), now)
        if (held !== undefined) return Option.some(view(held))
        entries.set(key(account, signature), { kind: entry.kind, requestId: entry.requestId, expiresAt })
        return Option.none()
      }),
    find: (account, signature) =>
      Effect.map(nowSeconds, (now) => Option.map(Option.fromNullishOr(live(entries.get(key(account, signature)), now)), view))
  })
})
