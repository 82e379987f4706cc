/**
 * Accounts in memory, with the same guarantees as the PostgreSQL tables: secret-key hashes and
 * publishable keys are unique (secondary indexes as tables), and `update` is a version check.
 */
import { type Account, type AccountId, AccountRepo } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { staleWrite } from "../Conflicts.ts"
import { MemoryDatabase, table, type Writer } from "./MemoryDatabase.ts"
import { oldestFirst } from "./SearchMemory.ts"

export const accounts = table<AccountId, Account.Account>("accounts")
const bySecretKeyHash = table<string, AccountId>("accounts_by_secret_key_hash")
const byPublishableKey = table<string, AccountId>("accounts_by_publishable_key")

/** Keys are random, so a clash is a bug upstream: a defect, as the unique index makes it in PostgreSQL. */
const claim = (db: Writer, index: typeof byPublishableKey, key: string, id: AccountId) => {
  const holder = db.get(index).get(key)
  if (holder !== undefined && holder !== id) throw new Error(`AccountRepoMemory: duplicate key in ${index.name}`)
  db.mutable(index).set(key, id)
}

const index = (db: Writer, account: Account.Account) => {
  claim(db, byPublishableKey, account.publishable_key, account.id)
  for (const key of account.secret_keys) claim(db, bySecretKeyHash, key.hash, account.id)
}

const unindex = (db: Writer, account: Account.Account) => {
  db.mutable(byPublishableKey).delete(account.publishable_key)
  for (const key of account.secret_keys) db.mutable(bySecretKeyHash).delete(key.hash)
}

export const layer: Layer.Layer<AccountRepo, never, MemoryDatabase> = Layer.effect(
  AccountRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const findVia = (lookup: typeof byPublishableKey) => (key: string) =>
      db.read((r) => {
        const id = r.get(lookup).get(key)
        return Option.fromNullishOr(id === undefined ? undefined : r.get(accounts).get(id))
      })

    return AccountRepo.of({
      insert: (account) =>
        db.write((w) => {
          if (w.get(accounts).has(account.id)) throw new Error(`AccountRepoMemory: duplicate account id ${account.id}`)
          index(w, account)
          w.mutable(accounts).set(account.id, account)
          return Result.succeed(undefined)
        }),
      findById: (id) => db.read((r) => Option.fromNullishOr(r.get(accounts).get(id))),
      findBySecretKeyHash: findVia(bySecretKeyHash),
      findByPublishableKey: findVia(byPublishableKey),
      update: (next) =>
        db.write((w) => {
          const current = w.get(accounts).get(next.id)
          if (current === undefined || current.version !== next.version - 1) {
            return Result.fail(staleWrite("Account", next.id, next.version - 1))
          }
          unindex(w, current)
          index(w, next)
          w.mutable(accounts).set(next.id, next)
          return Result.succeed(undefined)
        }),
      list: () => db.read((r) => [...r.get(accounts).values()].sort(oldestFirst))
    })
  })
)
