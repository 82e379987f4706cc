import { describe, it } from "vitest"
import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { signaturesSuite } from "./SignaturesSuite.ts"

// PostgreSQL storage with REDIS_URL: the replay cache is Redis's (Infrastructure picks it), shared by processes.
const url = process.env.REDIS_URL || undefined
if (url === undefined) {
  console.warn("Signature suite on Redis SKIPPED: REDIS_URL is unset (CI sets it; locally: redis-server --port 6390)")
  describe("signature suite on Redis", () => {
    it.skip("SKIPPED: REDIS_URL is unset — set it (CI does) to run the signature suite over the Redis replay cache", () => {})
  })
} else {
  signaturesSuite({ ...(await fileStorage()), redisUrl: url })
}
