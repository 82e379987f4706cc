import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { VaultAccess } from "@tender/domain"
import type { Account } from "@tender/domain/accounts/Account"
import type { AccountId } from "@tender/domain/kernel/Ids"
import { createHmac } from "node:crypto"
import * as AccessTokenSignerHmac from "../src/crypto/AccessTokenSignerHmac.ts"
import { randomKey } from "../src/crypto/VaultCipher.ts"

const account = (id: string, secret: string, vault = true): Account => ({
  id: id as AccountId,
  name: id,
  mode: "test",
  status: "active",
  secret_keys: [],
  publishable_key: `pk_test_${id}`,
  signing_secret: secret,
  ip_allowlist: [],
  processing_profiles: [],
  vault_enabled: vault,
  rate_limit: null,
  three_ds_display_mode: "inline",
  created_at: "",
  updated_at: "",
  version: 1
})

const serverKey = Buffer.alloc(32, 7)
const TestLayer = VaultAccess.layer.pipe(Layer.provide(AccessTokenSignerHmac.layer(Effect.succeed(serverKey))))

describe("VaultAccess", () => {
  it.effect("a token verifies for its account for 5 minutes, never for another", () =>
    Effect.gen(function*() {
      const vault = yield* VaultAccess
      const a = account("acct_aaaaaaaa", "whsec_a")
      const b = account("acct_bbbbbbbb", "whsec_b")
      const { token } = yield* vault.issue(a)
      expect(yield* vault.check(a, token)).toBe(true)
      expect(yield* vault.check(b, token)).toBe(false)
      expect(yield* vault.check(a, token.slice(0, -1) + (token.endsWith("0") ? "1" : "0"))).toBe(false)
      yield* TestClock.adjust("299 seconds")
      expect(yield* vault.check(a, token)).toBe(true)
      yield* TestClock.adjust("2 seconds")
      expect(yield* vault.check(a, token)).toBe(false)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("refuses accounts without the vault", () =>
    Effect.gen(function*() {
      const vault = yield* VaultAccess
      const error = yield* Effect.flip(vault.issue(account("acct_cccccccc", "whsec_c", false)))
      expect(error.code).toBe("vault_not_enabled")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("tokens are signed with the server's key: the account's signing secret neither makes nor breaks one", () =>
    Effect.gen(function*() {
      const vault = yield* VaultAccess
      const a = account("acct_dddddddd", "whsec_d")
      const { token } = yield* vault.issue(a)
      // A signing-secret roll leaves outstanding tokens valid: the secret is not their key.
      expect(yield* vault.check({ ...a, signing_secret: "whsec_rolled" }, token)).toBe(true)
      // Whoever holds the signing secret (the merchant, or whoever stole it) cannot mint one.
      const [, expiresAt, nonce] = token.split("_")
      const forged = `vat_${expiresAt}_${nonce}_${
        createHmac("sha256", a.signing_secret).update(`vault-access:${a.id}:${expiresAt}:${nonce}`).digest("hex")
      }`
      expect(yield* vault.check(a, forged)).toBe(false)
      // Another server key (another deployment, or a rotated vault key) refuses it.
      expect(yield* AccessTokenSignerHmac.make(yield* randomKey).verify(a, token)).toBeUndefined()
      expect(yield* AccessTokenSignerHmac.make(serverKey).verify(a, token)).toBeGreaterThan(0)
    }).pipe(Effect.provide(TestLayer)))
})
