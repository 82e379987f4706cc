/**
 * In-process locks: one single-permit semaphore per key, dropped when nobody holds or awaits it.
 * `ttlMs` has nothing to guard here: a holder cannot vanish without its finalizer releasing.
 */
import { Locks } from "@tender/domain"
import { Effect, Layer, Semaphore } from "effect"
import { busy, DEFAULT_WAIT_MS } from "./Locking.ts"

export const layer: Layer.Layer<Locks> = Layer.sync(Locks, () => {
  const held = new Map<string, { readonly semaphore: Semaphore.Semaphore; users: number }>()

  const checkout = (key: string) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        let entry = held.get(key)
        if (entry === undefined) held.set(key, entry = { semaphore: Semaphore.makeUnsafe(1), users: 0 })
        entry.users++
        return entry
      }),
      (entry) =>
        Effect.sync(() => {
          if (--entry.users === 0) held.delete(key)
        })
    )

  return Locks.of({
    withLock: (key, effect, options) => {
      const waitMs = options?.waitMs ?? DEFAULT_WAIT_MS
      return Effect.scoped(Effect.gen(function*() {
        const entry = yield* checkout(key)
        yield* entry.semaphore.takeScoped(1).pipe(
          Effect.timeoutOrElse({ duration: waitMs, orElse: () => Effect.fail(busy(key, waitMs)) })
        )
        return yield* effect
      }))
    }
  })
})
