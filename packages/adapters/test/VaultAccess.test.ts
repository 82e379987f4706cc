import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { VaultAccess } from "@tender/domain"
import type { Account } from "@tender/domain/Account"
import type { AccountId } from "@tender/domain/Ids"
import * as AccessTokenSignerHmac from "../src/crypto/AccessTokenSignerHmac.ts"

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

const TestLayer = VaultAccess.layer.pipe(Layer.provide(AccessTokenSignerHmac.layer))

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
})
