import { describe, expect, it, layer } from "@effect/vitest"
import { CvcStore } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { TestClock } from "effect/testing"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { memoryStorage } from "../src/Infrastructure.ts"
import * as CvcStoreMemory from "../src/storage/memory/CvcStoreMemory.ts"
import * as AccountRepoMemory from "../src/storage/memory/AccountRepoMemory.ts"
import { MemoryDatabase } from "../src/storage/memory/MemoryDatabase.ts"
import * as OrderRepoMemory from "../src/storage/memory/OrderRepoMemory.ts"
import { pastBoundContract, storageContract } from "../src/testing/StorageContract.ts"

const storage = memoryStorage.pipe(Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer)))

// The contract a team's own storage adapter passes too (@tender/adapters/testing).
storageContract("memory storage", storage)

// The orders over a database the test can write into directly, as the data of an earlier version is.
const ordersOverTheirDatabase = Layer.merge(OrderRepoMemory.layer, AccountRepoMemory.layer).pipe(
  Layer.provideMerge(MemoryDatabase.layer),
  Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer))
)

layer(ordersOverTheirDatabase, { excludeTestServices: true })("memory orders", (it) => {
  pastBoundContract<MemoryDatabase>(it, (order) =>
    Effect.flatMap(MemoryDatabase, (db) =>
      db.write((w) => Result.succeed(void w.mutable(OrderRepoMemory.orders).set(order.id, order)))))
})

describe("CvcStoreMemory", () => {
  it.effect("gives a CVC back once", () =>
    Effect.gen(function*() {
      const cvcs = yield* CvcStore
      yield* cvcs.put("tok_a", "123")
      expect(yield* cvcs.take("tok_a")).toEqual(Option.some("123"))
      expect(yield* cvcs.take("tok_a")).toEqual(Option.none())
      expect(yield* cvcs.take("tok_unknown")).toEqual(Option.none())
    }).pipe(Effect.provide(CvcStoreMemory.layer)))

  it.effect("forgets a CVC 15 minutes after it was put", () =>
    Effect.gen(function*() {
      const cvcs = yield* CvcStore
      yield* cvcs.put("tok_kept", "111")
      yield* cvcs.put("tok_expired", "222")
      yield* TestClock.adjust("14 minutes")
      expect(yield* cvcs.take("tok_kept")).toEqual(Option.some("111"))
      yield* TestClock.adjust("1 minute")
      expect(yield* cvcs.take("tok_expired")).toEqual(Option.none())
    }).pipe(Effect.provide(CvcStoreMemory.layer)))

  it.effect("putting again restarts the 15 minutes", () =>
    Effect.gen(function*() {
      const cvcs = yield* CvcStore
      yield* cvcs.put("tok_a", "111")
      yield* TestClock.adjust("10 minutes")
      yield* cvcs.put("tok_a", "999")
      yield* TestClock.adjust("10 minutes")
      expect(yield* cvcs.take("tok_a")).toEqual(Option.some("999"))
    }).pipe(Effect.provide(CvcStoreMemory.layer)))
})
