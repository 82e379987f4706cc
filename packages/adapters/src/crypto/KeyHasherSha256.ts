/** API keys are 24+ random bytes, so one unsalted SHA-256 is enough and keeps lookups an index hit. */
import { createHash } from "node:crypto"
import { KeyHasher } from "@tender/domain"
import { Effect, Layer } from "effect"

export const sha256Hex = (input: string): string => createHash("sha256").update(input, "utf8").digest("hex")

export const layer: Layer.Layer<KeyHasher> = Layer.succeed(
  KeyHasher,
  KeyHasher.of({ hash: (key) => Effect.sync(() => sha256Hex(key)) })
)
