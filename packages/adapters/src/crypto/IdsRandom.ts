/** The live `Ids`: the platform CSPRNG, base62 bodies behind the domain's prefixes. */
import { randomBytes, randomFillSync } from "node:crypto"
import { ID_PREFIXES, type IdKind, type IdOf, Ids } from "@tender/domain"
import { Effect, Layer } from "effect"

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const BODY_LENGTH = 24
/** The largest multiple of 62 below 256: bytes at or above it are dropped, so no character is favoured. */
const UNBIASED_LIMIT = 248

/**
 * Random bytes drawn from the CSPRNG a pool at a time: a request makes several ids, and one
 * `randomFillSync` call per id cost more than the bytes themselves. Each byte is handed out once.
 */
const POOL_BYTES = 4096
const pool = new Uint8Array(POOL_BYTES)
let next = POOL_BYTES

const randomByte = (): number => {
  if (next === POOL_BYTES) {
    randomFillSync(pool)
    next = 0
  }
  return pool[next++]!
}

export const base62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    const byte = randomByte()
    if (byte < UNBIASED_LIMIT) out += ALPHABET[byte % 62]
  }
  return out
}

export const layer: Layer.Layer<Ids> = Layer.succeed(
  Ids,
  Ids.of({
    // The kind's prefix is what makes it that kind's id (the brand's own check).
    make: <K extends IdKind>(kind: K) => Effect.sync(() => `${ID_PREFIXES[kind]}_${base62(BODY_LENGTH)}` as IdOf<K>),
    // Keys and secrets come straight from the CSPRNG, never from the shared pool (they are few).
    randomHex: (bytes) => Effect.sync(() => randomBytes(bytes).toString("hex"))
  })
)
