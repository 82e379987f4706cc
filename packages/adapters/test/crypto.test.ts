import * as fs from "node:fs/promises"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { AccountId, ID_PREFIXES, type IdKind, Ids, KeyHasher } from "@tender/domain"
import { Cause, Effect, Exit, Schema } from "effect"
import { VaultCipher } from "../src/crypto/VaultCipher.ts"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import * as Credentials from "../src/crypto/OperatorCredentialsNode.ts"
import * as VaultKey from "../src/crypto/VaultKey.ts"
import { tempDir } from "./PgTestDatabase.ts"

const KEY = Buffer.alloc(32, 7)
const NUMBER = "4000056655665556"

describe("VaultCipher", () => {
  const cipher = VaultCipher.make(KEY)

  it.effect("opens what it sealed, for the same account and token", () =>
    Effect.gen(function*() {
      const sealed = yield* cipher.seal("acct_1", "tok_1", NUMBER)
      expect(sealed.iv).toHaveLength(12)
      expect(sealed.tag).toHaveLength(16)
      expect(Buffer.from(sealed.ciphertext).toString("latin1")).not.toContain(NUMBER)
      expect(yield* cipher.open("acct_1", "tok_1", sealed)).toBe(NUMBER)
    }))

  it.effect("seals the same number differently every time (random IV)", () =>
    Effect.gen(function*() {
      const a = yield* cipher.seal("acct_1", "tok_1", NUMBER)
      const b = yield* cipher.seal("acct_1", "tok_1", NUMBER)
      expect(Buffer.from(a.iv).equals(Buffer.from(b.iv))).toBe(false)
      expect(Buffer.from(a.ciphertext).equals(Buffer.from(b.ciphertext))).toBe(false)
    }))

  it.effect("refuses a ciphertext moved to another token or account, tampered with, or under another key", () =>
    Effect.gen(function*() {
      const sealed = yield* cipher.seal("acct_1", "tok_1", NUMBER)
      const tampered = { ...sealed, ciphertext: Buffer.from(sealed.ciphertext).map((b, i) => (i === 0 ? b ^ 1 : b)) }
      const attempts = [
        cipher.open("acct_1", "tok_2", sealed),
        cipher.open("acct_2", "tok_1", sealed),
        cipher.open("acct_1", "tok_1", tampered),
        VaultCipher.make(Buffer.alloc(32, 8)).open("acct_1", "tok_1", sealed)
      ]
      for (const attempt of attempts) {
        const exit = yield* Effect.exit(attempt)
        expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
      }
    }))

  it.effect("contract.md, Secrets at rest: \"Vault ciphertexts carry full-length authentication tags (16 bytes); a shorter tag does not decrypt\"", () =>
    Effect.gen(function*() {
      const sealed = yield* cipher.seal("acct_1", "tok_1", NUMBER)
      // GCM checks a cut tag against the first bytes of the right one: these would open without the length check.
      for (const bytes of [4, 8, 12, 15]) {
        const exit = yield* Effect.exit(cipher.open("acct_1", "tok_1", { ...sealed, tag: sealed.tag.slice(0, bytes) }))
        expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause), `a ${bytes}-byte tag`).toBe(true)
      }
      expect(yield* cipher.open("acct_1", "tok_1", sealed)).toBe(NUMBER)
    }))

  it("only takes a 32-byte key", () => {
    expect(() => VaultCipher.make(Buffer.alloc(16))).toThrow(RangeError)
  })
})

describe("VaultKey", () => {
  const base = { storage: "postgres", dataDir: ".", databaseUrl: undefined, redisUrl: undefined, vaultKey: undefined } as const

  it.effect("takes TENDER_VAULT_KEY when set and refuses a malformed one", () =>
    Effect.gen(function*() {
      const hex = "ab".repeat(32)
      expect(Buffer.from(yield* VaultKey.resolve({ ...base, vaultKey: hex })).toString("hex")).toBe(hex)
      const error = yield* Effect.flip(VaultKey.resolve({ ...base, vaultKey: "not-hex" }))
      expect(error.message).toContain("TENDER_VAULT_KEY must be 64 hexadecimal characters")
    }))

  it.effect("requires a key with an external database", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(VaultKey.resolve({ ...base, databaseUrl: "postgres://db/tender" }))
      expect(error._tag).toBe("InfrastructureError")
      expect(error.message).toContain("TENDER_VAULT_KEY is required with DATABASE_URL")
    }))

  it.effect("in embedded mode, generates <dataDir>/vault.key once (mode 0600) and reuses it", () =>
    Effect.gen(function*() {
      const dataDir = path.join(yield* tempDir(), "nested", ".tender")
      const first = yield* VaultKey.resolve({ ...base, dataDir })
      const second = yield* VaultKey.resolve({ ...base, dataDir })
      expect(first).toHaveLength(32)
      expect(Buffer.from(second).equals(Buffer.from(first))).toBe(true)
      const stat = yield* Effect.promise(() => fs.stat(path.join(dataDir, "vault.key")))
      expect(stat.mode & 0o777).toBe(0o600)
    }))

  it.effect("gives memory storage a fresh random key", () =>
    Effect.gen(function*() {
      const a = yield* VaultKey.resolve({ ...base, storage: "memory" })
      const b = yield* VaultKey.resolve({ ...base, storage: "memory" })
      expect(a).toHaveLength(32)
      expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false)
    }))
})

describe("IdsRandom", () => {
  it.effect("makes prefixed 24-character base62 ids that the domain schemas accept", () =>
    Effect.gen(function*() {
      const ids = yield* Ids
      for (const kind of Object.keys(ID_PREFIXES) as Array<IdKind>) {
        expect(yield* ids.make(kind)).toMatch(new RegExp(`^${ID_PREFIXES[kind]}_[0-9A-Za-z]{24}$`))
      }
      expect(Schema.is(AccountId)(yield* ids.make("account"))).toBe(true)
      const many = yield* Effect.forEach(Array.from({ length: 2000 }), () => ids.make("order"))
      expect(new Set(many).size).toBe(many.length)
      expect(yield* ids.randomHex(24)).toMatch(/^[0-9a-f]{48}$/)
    }).pipe(Effect.provide(IdsRandom.layer)))

  it("spreads characters over the whole alphabet", () => {
    const counts = new Map<string, number>()
    for (const c of IdsRandom.base62(62_000)) counts.set(c, (counts.get(c) ?? 0) + 1)
    expect(counts.size).toBe(62)
    for (const n of counts.values()) expect(n).toBeGreaterThan(700)
  })
})

describe("KeyHasherSha256", () => {
  it.effect("is hex SHA-256", () =>
    Effect.gen(function*() {
      const hasher = yield* KeyHasher
      expect(yield* hasher.hash("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }).pipe(Effect.provide(KeyHasherSha256.layer)))
})

describe("OperatorCredentialsNode", () => {
  // RFC 4226 appendix D: the secret "12345678901234567890" (ASCII), HOTP values for counters 0–9.
  const RFC4226_KEY = Buffer.from("12345678901234567890", "ascii")
  const RFC4226 = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]

  it("HOTP matches RFC 4226 appendix D", () => {
    expect(RFC4226.map((_, counter) => Credentials.hotp(RFC4226_KEY, counter))).toEqual(RFC4226)
  })

  // RFC 6238 appendix B, SHA-1 (8-digit values): the 6-digit code is the same truncation's last six digits.
  const RFC6238: ReadonlyArray<readonly [number, string]> = [
    [59, "94287082"],
    [1111111109, "07081804"],
    [1111111111, "14050471"],
    [1234567890, "89005924"],
    [2000000000, "69279037"],
    [20000000000, "65353130"]
  ]

  it("TOTP matches RFC 6238 appendix B (SHA-1), 8 and 6 digits, ±1 step and no further", () => {
    const secret = Credentials.base32Encode(RFC4226_KEY)
    expect(secret).toBe("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
    for (const [seconds, code] of RFC6238) {
      const step = Credentials.totpStepOf(seconds * 1000)
      expect(Credentials.hotp(RFC4226_KEY, step, 8)).toBe(code)
      const six = code.slice(2)
      expect(Credentials.totpStep(secret, six, seconds * 1000)).toBe(step)
      expect(Credentials.totpStep(secret, six, (seconds + 30) * 1000)).toBe(step)
      expect(Credentials.totpStep(secret, six, (seconds - 30) * 1000)).toBe(step)
      expect(Credentials.totpStep(secret, six, (seconds + 60) * 1000)).toBeUndefined()
    }
    expect(Credentials.totpStep(secret, "94287", 59_000)).toBeUndefined()
    expect(Credentials.totpStep(secret, "２８７０８２", 59_000)).toBeUndefined()
    expect(Credentials.totpStep("not base32!", "287082", 59_000)).toBeUndefined()
  })

  it("base32 round-trips every length (RFC 4648 test vectors, unpadded)", () => {
    const vectors = ["", "MY", "MZXQ", "MZXW6", "MZXW6YQ", "MZXW6YTB", "MZXW6YTBOI"]
    vectors.forEach((encoded, i) => {
      const bytes = Buffer.from("foobar".slice(0, i), "ascii")
      expect(Credentials.base32Encode(bytes)).toBe(encoded)
      expect(Buffer.from(Credentials.base32Decode(encoded)!).toString("ascii")).toBe("foobar".slice(0, i))
    })
    expect(Credentials.base32Decode("mzxw6===")).toEqual(Credentials.base32Decode("MZXW6"))
  })

  it.effect("passwords: scrypt in the stored format, verifying only the right password", () =>
    Effect.gen(function*() {
      const hash = yield* Credentials.hashPassword("correct horse battery")
      expect(hash).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/)
      expect(yield* Credentials.hashPassword("correct horse battery")).not.toBe(hash)
      expect(yield* Credentials.verifyPassword("correct horse battery", hash)).toBe(true)
      expect(yield* Credentials.verifyPassword("correct horse batterz", hash)).toBe(false)
      // Not our format, or absurd parameters: false, never a defect.
      for (const stored of ["", "bcrypt$x", hash.replace("$15$", "$40$"), hash.replace(/\$[^$]+$/, "$")]) {
        expect(yield* Credentials.verifyPassword("correct horse battery", stored)).toBe(false)
      }
    }))
})
