/** The live `Ids`: the platform CSPRNG, base62 bodies behind the domain's prefixes. */
import { randomBytes } from "node:crypto"
import { ID_PREFIXES, type IdKind, type IdOf, Ids } from "@tender/domain"
import { Effect, Layer } from "effect"

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const BODY_LENGTH = 24
/** The largest multiple of 62 below 256: bytes at or above it are dropped, so no character is favoured. */
const UNBIASED_LIMIT = 248

export const base62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    for (const byte of randomBytes(length)) {
      if (byte < UNBIASED_LIMIT) out += ALPHABET[byte % 62]
      if (out.length === length) break
    }
  }
  return out
}

export const layer: Layer.Layer<Ids> = Layer.succeed(
  Ids,
  Ids.of({
    // The kind's prefix is what makes it that kind's id (the brand's own check).
    make: <K extends IdKind>(kind: K) => Effect.sync(() => `${ID_PREFIXES[kind]}_${base62(BODY_LENGTH)}` as IdOf<K>),
    randomHex: (bytes) => Effect.sync(() => randomBytes(bytes).toString("hex"))
  })
)
