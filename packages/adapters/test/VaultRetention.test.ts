/**
 * The vault's retention clock (memory storage, test clock; PostgreSQL is exercised through
 * `tender vault purge` in the CLI's VaultPurge.test.ts): a card's last use is when it was stored
 * or last revealed for a call; `purgeUnused` counts (dry run) or deletes the cards last used
 * before the cutoff, and nothing else.
 */
import { describe, expect, it } from "@effect/vitest"
import { type AccountId, CardVault } from "@tender/domain"
import { Clock, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import { memoryStorage } from "../src/Infrastructure.ts"

const storage = memoryStorage.pipe(Layer.provideMerge(IdsRandom.layer))
const DAY = 86_400_000
const account = "acct_retention" as AccountId
const card = { account_id: account, number: "4242424242424242", brand: "visa", last4: "4242", bin: "42424242", exp_month: 12, exp_year: 2035, funding: "credit", holder_name: null } as const

describe("CardVault retention (memory)", () => {
  it.effect("a card stored 401 days ago and never used is purged; one revealed since is kept", () =>
    Effect.gen(function*() {
      const vault = yield* CardVault
      const idle = yield* vault.store(card)
      const used = yield* vault.store(card)
      yield* TestClock.adjust(300 * DAY)
      expect(Option.isSome(yield* vault.reveal(account, used.token))).toBe(true)
      yield* TestClock.adjust(101 * DAY)
      const cutoff = new Date((yield* Clock.currentTimeMillis) - 400 * DAY)
      expect(yield* vault.purgeUnused(cutoff, { dryRun: true })).toBe(1)
      expect(Option.isSome(yield* vault.find(account, idle.token))).toBe(true)
      expect(yield* vault.purgeUnused(cutoff)).toBe(1)
      expect(yield* vault.find(account, idle.token)).toEqual(Option.none())
      expect(yield* vault.reveal(account, idle.token)).toEqual(Option.none())
      expect(Option.isSome(yield* vault.find(account, used.token))).toBe(true)
      expect(yield* vault.purgeUnused(cutoff)).toBe(0)
    }).pipe(Effect.provide(storage)))
})
