/**
 * The replay cache in Redis, shared by every process: `SET NX` with an absolute expiry claims a
 * payload digest in one command, so of two processes receiving the same request one wins.
 */
import { Effect, Layer, Option } from "effect"
import { Redis } from "../redis/Redis.ts"
import { ReplayCache, type ReplayEntry } from "./ReplayCache.ts"

export const KEY_PREFIX = "tender:replay:"

const decode = (value: string | null): Option.Option<ReplayEntry> => {
  if (value === null) return Option.none()
  const separator = value.indexOf(":")
  const kind = value.slice(0, separator)
  return Option.some({ kind: kind === "response" ? "response" : "request", requestId: value.slice(separator + 1) })
}

export const layer: Layer.Layer<ReplayCache, never, Redis> = Layer.effect(
  ReplayCache,
  Effect.gen(function*() {
    const redis = yield* Redis
    const key = (account: string, digest: string) => `${KEY_PREFIX}${account}:${digest}`
    return ReplayCache.of({
      claim: (account, digest, entry, expiresAt) =>
        Effect.promise(async () => {
          const k = key(account, digest)
          // EXAT: Redis forgets the entry when the timestamp leaves the window, on Redis's own clock.
          const set = await redis.set(k, `${entry.kind}:${entry.requestId}`, "EXAT", expiresAt, "NX")
          return set === "OK" ? Option.none() : decode(await redis.get(k))
        }),
      find: (account, digest) => Effect.promise(() => redis.get(key(account, digest))).pipe(Effect.map(decode))
    })
  })
)
