/**
 * The storage contract: what AccountRepo, UnitOfWork and CardVault promise, whatever holds the
 * data. Each storage test file calls `storageContract(it)` inside a `layer(…)` block built on its
 * adapter, so memory and PostgreSQL pass exactly the same assertions.
 */
import type { Vitest } from "@effect/vitest"
import { expect } from "@effect/vitest"
import {
  type Account,
  type AccountId,
  AccountRepo,
  Accounts,
  CardVault,
  Errors,
  Ids,
  KeyHasher,
  UnitOfWork
} from "@tender/domain"
import { Cause, Effect, Exit, Fiber, Option } from "effect"

export type StorageServices = AccountRepo | UnitOfWork | CardVault | Ids | KeyHasher

/** A distinct, fully populated account (every column non-default), with its plain secret key. */
export const newAccount = (overrides: Partial<Account.Account> = {}) =>
  Effect.gen(function*() {
    const ids = yield* Ids
    const hasher = yield* KeyHasher
    const secretKey = `sk_test_${yield* ids.randomHex(24)}`
    const revokedKey = `sk_test_${yield* ids.randomHex(24)}`
    const created = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678) + Math.floor(Math.random() * 1e9)).toISOString()
    const account: Account.Account = {
      id: (yield* ids.make("account")) as AccountId,
      name: "Acme Café ☕",
      mode: "test",
      status: "active",
      secret_keys: [
        { hash: yield* hasher.hash(revokedKey), hint: "sk_test_aaaa…", created_at: created, revoked_at: created },
        { hash: yield* hasher.hash(secretKey), hint: "sk_test_bbbb…", created_at: created, revoked_at: null }
      ],
      publishable_key: `pk_test_${yield* ids.randomHex(24)}`,
      signing_secret: `whsec_${yield* ids.randomHex(32)}`,
      ip_allowlist: ["10.0.0.0/8", "2001:db8::/32"],
      processing_profiles: [{ code: "eu", name: "Europe", status: "active", created_at: created }],
      vault_enabled: true,
      rate_limit: { per_second: 5, burst: 10 },
      created_at: created,
      updated_at: created,
      version: 1,
      ...overrides
    }
    return { account, secretKey, revokedKey }
  })

const later = (iso: string, ms = 1000) => new Date(Date.parse(iso) + ms).toISOString()

const CARD = {
  number: "4242424242424242",
  brand: "visa",
  last4: "4242",
  bin: "42424242",
  exp_month: 12,
  exp_year: 2030,
  funding: "credit",
  holder_name: "Ada Lovelace"
} as const

class Boom {
  readonly _tag = "Boom"
}

export const storageContract = (it: Vitest.MethodsNonLive<StorageServices>) => {
  it.effect("inserts an account and finds it by id, secret-key hash and publishable key", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const hasher = yield* KeyHasher
      const { account, revokedKey, secretKey } = yield* newAccount()
      yield* repo.insert(account)

      expect(yield* repo.findById(account.id)).toEqual(Option.some(account))
      expect(yield* repo.findBySecretKeyHash(yield* hasher.hash(secretKey))).toEqual(Option.some(account))
      // Revoked keys still resolve: refusing them is the use case's decision, not storage's.
      expect(yield* repo.findBySecretKeyHash(yield* hasher.hash(revokedKey))).toEqual(Option.some(account))
      expect(yield* repo.findByPublishableKey(account.publishable_key)).toEqual(Option.some(account))

      expect(yield* repo.findById("acct_doesnotexist000000" as AccountId)).toEqual(Option.none())
      expect(yield* repo.findBySecretKeyHash(yield* hasher.hash("sk_test_unknown"))).toEqual(Option.none())
      expect(yield* repo.findByPublishableKey("pk_test_unknown")).toEqual(Option.none())
    }))

  it.effect("round-trips an account with no rate limit and empty lists", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const { account } = yield* newAccount({ rate_limit: null, ip_allowlist: [], processing_profiles: [] })
      yield* repo.insert(account)
      expect(yield* repo.findById(account.id)).toEqual(Option.some(account))
    }))

  it.effect("refuses a second account with the same publishable key (a defect: keys are random)", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const { account } = yield* newAccount()
      const { account: clash } = yield* newAccount({ publishable_key: account.publishable_key })
      yield* repo.insert(account)
      const exit = yield* Effect.exit(repo.insert(clash))
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
      expect(yield* repo.findById(clash.id)).toEqual(Option.none())
    }))

  it.effect("updates when the stored version is the one before, and refuses a stale version", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const { account } = yield* newAccount()
      yield* repo.insert(account)

      const v2: Account.Account = { ...account, status: "suspended", updated_at: later(account.updated_at), version: 2 }
      yield* repo.update(v2)
      expect(yield* repo.findById(account.id)).toEqual(Option.some(v2))

      // Written against version 1 again: someone else got there first.
      const stale: Account.Account = { ...account, name: "Lost update", version: 2 }
      const error = yield* Effect.flip(repo.update(stale))
      expect(error).toBeInstanceOf(Errors.Conflict)
      expect(error.code).toBe("conflict")
      expect(yield* repo.findById(account.id)).toEqual(Option.some(v2))

      const unknown = yield* Effect.flip(repo.update({ ...v2, id: "acct_doesnotexist000000" as AccountId, version: 3 }))
      expect(unknown).toBeInstanceOf(Errors.Conflict)
    }))

  it.effect("updates secret keys: a revoked key is kept, a new key resolves, a dropped key no longer does", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const ids = yield* Ids
      const hasher = yield* KeyHasher
      const { account, revokedKey, secretKey } = yield* newAccount()
      yield* repo.insert(account)

      const now = later(account.updated_at)
      const freshKey = `sk_test_${yield* ids.randomHex(24)}`
      const [dropped, live] = account.secret_keys
      const v2: Account.Account = {
        ...account,
        secret_keys: [
          { ...live, revoked_at: now },
          { hash: yield* hasher.hash(freshKey), hint: "sk_test_cccc…", created_at: now, revoked_at: null }
        ],
        updated_at: now,
        version: 2
      }
      expect(dropped.hash).toBe(yield* hasher.hash(revokedKey))
      yield* repo.update(v2)

      expect(yield* repo.findBySecretKeyHash(yield* hasher.hash(freshKey))).toEqual(Option.some(v2))
      expect(yield* repo.findBySecretKeyHash(yield* hasher.hash(secretKey))).toEqual(Option.some(v2))
      expect(yield* repo.findBySecretKeyHash(dropped.hash)).toEqual(Option.none())
    }))

  it.effect("lists accounts oldest first", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const { account: first } = yield* newAccount({ created_at: "2020-01-01T00:00:00.000Z" })
      const { account: second } = yield* newAccount({ created_at: "2020-01-01T00:00:00.001Z" })
      yield* repo.insert(second)
      yield* repo.insert(first)
      const listed = (yield* repo.list()).filter((a) => a.id === first.id || a.id === second.id)
      expect(listed).toEqual([first, second])
    }))

  it.effect("of 10 concurrent updates from the same version, exactly one wins", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const { account } = yield* newAccount()
      yield* repo.insert(account)
      const results = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, i) => i),
        (i) => Effect.result(repo.update({ ...account, name: `Writer ${i}`, version: 2 })),
        { concurrency: "unbounded" }
      )
      const winners = results.filter((r) => r._tag === "Success")
      const losers = results.filter((r) => r._tag === "Failure")
      expect(winners).toHaveLength(1)
      expect(losers).toHaveLength(9)
      for (const loser of losers) expect(loser._tag === "Failure" && loser.failure).toBeInstanceOf(Errors.Conflict)
      const stored = Option.getOrThrow(yield* repo.findById(account.id))
      expect(stored.version).toBe(2)
    }))

  it.effect("a unit of work that fails leaves nothing behind", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const uow = yield* UnitOfWork
      const { account } = yield* newAccount()
      const failed = yield* Effect.flip(uow.transaction(Effect.gen(function*() {
        yield* repo.insert(account)
        yield* repo.update({ ...account, name: "Renamed", version: 2 })
        // Inside, the transaction reads its own writes.
        expect(Option.map(yield* repo.findById(account.id), (a) => a.name)).toEqual(Option.some("Renamed"))
        return yield* Effect.fail(new Boom())
      })))
      expect(failed).toBeInstanceOf(Boom)
      expect(yield* repo.findById(account.id)).toEqual(Option.none())
      expect(yield* repo.findByPublishableKey(account.publishable_key)).toEqual(Option.none())
    }))

  it.effect("a unit of work that succeeds commits every write", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const uow = yield* UnitOfWork
      const { account } = yield* newAccount()
      const result = yield* uow.transaction(Effect.gen(function*() {
        yield* repo.insert(account)
        yield* repo.update({ ...account, name: "Renamed", version: 2 })
        return "done"
      }))
      expect(result).toBe("done")
      expect(Option.map(yield* repo.findById(account.id), (a) => [a.name, a.version])).toEqual(Option.some(["Renamed", 2]))
    }))

  it.effect("a nested unit of work joins the outer one: the outer failure undoes the inner writes", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const uow = yield* UnitOfWork
      const { account } = yield* newAccount()
      yield* Effect.flip(uow.transaction(Effect.gen(function*() {
        yield* uow.transaction(repo.insert(account))
        return yield* Effect.fail(new Boom())
      })))
      expect(yield* repo.findById(account.id)).toEqual(Option.none())
    }))

  it.effect("a nested unit of work has no rollback of its own: a caught inner failure keeps its writes", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const uow = yield* UnitOfWork
      const { account } = yield* newAccount()
      yield* uow.transaction(
        Effect.ignore(uow.transaction(Effect.andThen(repo.insert(account), Effect.fail(new Boom()))))
      )
      expect(Option.map(yield* repo.findById(account.id), (a) => a.id)).toEqual(Option.some(account.id))
    }))

  it.effect("a failed unit of work does not discard a write made beside it", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const uow = yield* UnitOfWork
      const { account: inside } = yield* newAccount()
      const { account: beside } = yield* newAccount()
      const transaction = yield* Effect.forkChild(uow.transaction(Effect.gen(function*() {
        yield* repo.insert(inside)
        yield* Effect.sleep("50 millis")
        return yield* Effect.fail(new Boom())
      })))
      yield* Effect.sleep("10 millis")
      yield* repo.insert(beside)
      yield* Effect.flip(Fiber.join(transaction))
      expect(yield* repo.findById(inside.id)).toEqual(Option.none())
      expect(yield* repo.findById(beside.id)).toEqual(Option.some(beside))
    }))

  it.effect("vaults a card: find returns the safe fields, reveal the number", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const vault = yield* CardVault
      const { account } = yield* newAccount()
      yield* repo.insert(account)
      const { number, ...details } = CARD
      const stored = yield* vault.store({ ...CARD, account_id: account.id })

      expect(stored.token).toMatch(/^tok_[A-Za-z0-9]{24}$/)
      expect(stored).toEqual({ ...details, account_id: account.id, token: stored.token, created_at: stored.created_at })
      expect(Object.values(stored)).not.toContain(number)
      expect(Number.isNaN(Date.parse(stored.created_at))).toBe(false)
      expect(yield* vault.find(account.id, stored.token)).toEqual(Option.some(stored))
      expect(yield* vault.reveal(account.id, stored.token)).toEqual(Option.some(number))
    }))

  it.effect("find and reveal are scoped by account", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const vault = yield* CardVault
      const { account: owner } = yield* newAccount()
      const { account: other } = yield* newAccount()
      yield* repo.insert(owner)
      yield* repo.insert(other)
      const stored = yield* vault.store({ ...CARD, holder_name: null, account_id: owner.id })

      expect(Option.map(yield* vault.find(owner.id, stored.token), (c) => c.holder_name)).toEqual(Option.some(null))
      expect(yield* vault.find(other.id, stored.token)).toEqual(Option.none())
      expect(yield* vault.reveal(other.id, stored.token)).toEqual(Option.none())
      expect(yield* vault.reveal(owner.id, "tok_doesnotexist00000000")).toEqual(Option.none())
    }))

  it.effect("a card vaulted inside a failed unit of work is gone", () =>
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const vault = yield* CardVault
      const uow = yield* UnitOfWork
      const { account } = yield* newAccount()
      yield* repo.insert(account)
      let token = ""
      yield* Effect.flip(uow.transaction(Effect.gen(function*() {
        token = (yield* vault.store({ ...CARD, account_id: account.id })).token
        return yield* Effect.fail(new Boom())
      })))
      expect(token).not.toBe("")
      expect(yield* vault.find(account.id, token)).toEqual(Option.none())
    }))

  it.effect("the Accounts use case on this storage: rolling keys retires the old secret key", () => {
    const scenario = Effect.gen(function*() {
      const accounts = yield* Accounts
      const created = yield* accounts.create({ name: "Rolling Ltd", mode: "live" })
      expect((yield* accounts.authenticate(created.secret_key)).id).toBe(created.account_id)

      const rolled = yield* accounts.rollKeys(created.account_id)
      expect(rolled.account.version).toBe(2)
      expect((yield* Effect.flip(accounts.authenticate(created.secret_key)))._tag).toBe("InvalidApiKey")
      expect((yield* accounts.authenticate(rolled.secret_key)).id).toBe(created.account_id)
      expect((yield* Effect.flip(accounts.authenticate(created.publishable_key)))._tag).toBe(
        "PublishableApiKeyNotAllowed"
      )
    })
    return scenario.pipe(Effect.provide(Accounts.layer))
  })
}
