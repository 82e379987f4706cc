/**
 * CVCs shared by every process on one Redis (`REDIS_URL`), so a card tokenized through one server
 * can be charged with its CVC through another. Each value is sealed with the vault key (AES-256-GCM,
 * bound to its Redis key) and lives under `tender:cvc:<HMAC(vault key, token)>`: neither a dump of
 * Redis nor a card token alone yields the code or even which key holds it. `SET … PX` gives the
 * 15-minute TTL on Redis's own clock; `GETDEL` makes taking it once atomic across processes.
 */
import { createHmac } from "node:crypto"
import { CvcStore } from "@tender/domain"
import { Effect, Layer, Option } from "effect"
import { IV_BYTES, TAG_BYTES, VaultCipher } from "../crypto/VaultCipher.ts"
import { Redis } from "../redis/Redis.ts"
import { CVC_TTL_MS } from "./memory/CvcStoreMemory.ts"

export const KEY_PREFIX = "tender:cvc:"
/** The sealed CVC's AAD names no account (a token is unique across accounts): this fixed label stands in. */
const SCOPE = "cvc"

/** `key` is the vault key: the Redis key is an HMAC of the token under a key derived from it. */
export const layer = (key: Uint8Array, options: { readonly ttlMs?: number } = {}): Layer.Layer<CvcStore, never, Redis | VaultCipher> =>
  Layer.effect(
    CvcStore,
    Effect.gen(function*() {
      const redis = yield* Redis
      const cipher = yield* VaultCipher
      const ttlMs = options.ttlMs ?? CVC_TTL_MS
      const naming = createHmac("sha256", key).update("tender cvc key names").digest()
      const redisKey = (token: string) => `${KEY_PREFIX}${createHmac("sha256", naming).update(token).digest("hex")}`
      return CvcStore.of({
        put: (token, cvc) =>
          Effect.gen(function*() {
            const name = redisKey(token)
            const sealed = yield* cipher.seal(SCOPE, name, cvc)
            const value = Buffer.concat([sealed.iv, sealed.tag, sealed.ciphertext]).toString("base64")
            yield* Effect.promise(() => redis.set(name, value, "PX", ttlMs))
          }),
        take: (token) =>
          Effect.gen(function*() {
            const name = redisKey(token)
            const value = yield* Effect.promise(() => redis.getdel(name))
            if (value === null) return Option.none()
            const bytes = Buffer.from(value, "base64")
            return Option.some(yield* cipher.open(SCOPE, name, {
              iv: bytes.subarray(0, IV_BYTES),
              tag: bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES),
              ciphertext: bytes.subarray(IV_BYTES + TAG_BYTES)
            }))
          })
      })
    })
  )
