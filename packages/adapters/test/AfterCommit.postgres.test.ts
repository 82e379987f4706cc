/**
 * Review S5: tender_authorizations_total counted inside the unit of work, so a unit rolled back (or
 * run again) still counted. The payments' units of work (Persist.ts `unitOfWork`) now run what
 * `afterCommit` left only once the outermost one has committed; RecordAttempt counts through it.
 * On both storages' real units of work: PostgreSQL's rollback is a real one.
 */
import { describe, expect, it } from "@effect/vitest"
import { AccountRepo } from "@tender/domain"
import * as OperationalMetrics from "@tender/domain/kernel/OperationalMetrics"
import { afterCommit, unitOfWork } from "@tender/domain/payments/operations/Persist"
import { Effect, Exit, Layer, Metric, Option } from "effect"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { memoryStorage, postgresStorage } from "../src/Infrastructure.ts"
import { newAccount } from "../src/testing/StorageContract.ts"
import { sharedConfig } from "./PgTestDatabase.ts"

const crypto = Layer.merge(IdsRandom.layer, KeyHasherSha256.layer)
const storages = {
  memory: memoryStorage.pipe(Layer.provideMerge(crypto)),
  PostgreSQL: Layer.unwrap(Effect.map(sharedConfig, postgresStorage)).pipe(Layer.provideMerge(crypto))
}

/** A label of its own per test run, so other counts in the process do not disturb ours. */
const counter = (channel: string) =>
  Metric.withAttributes(OperationalMetrics.authorizationsTotal, { channel, method: "card", outcome: "approved" })
const counted = (channel: string) => Effect.map(Metric.value(counter(channel)), (state) => state.count)
const count = (channel: string) => OperationalMetrics.observeAuthorization(channel, "card", "approved")

for (const [name, storage] of Object.entries(storages)) {
  describe(`${name}: what a unit of work counts is counted once it commits`, () => {
    it.effect("a unit rolled back counts nothing (and stores nothing); a committed one counts once, after its commit", () =>
      Effect.gen(function*() {
        const channel = `test_${name}_${Date.now()}`
        const accounts = yield* AccountRepo
        const { account } = yield* newAccount()
        const failed = yield* Effect.exit(unitOfWork(Effect.gen(function*() {
          yield* accounts.insert(account)
          yield* afterCommit(count(channel))
          return yield* Effect.fail("refused")
        })))
        expect(Exit.isFailure(failed)).toBe(true)
        expect(Option.isNone(yield* accounts.findById(account.id))).toBe(true)
        expect(yield* counted(channel)).toBe(0)

        // Inside the unit nothing is counted yet; after it, once.
        const inside = yield* unitOfWork(Effect.gen(function*() {
          yield* accounts.insert(account)
          yield* afterCommit(count(channel))
          return yield* counted(channel)
        }))
        expect(inside).toBe(0)
        expect(Option.isSome(yield* accounts.findById(account.id))).toBe(true)
        expect(yield* counted(channel)).toBe(1)
      }).pipe(Effect.provide(storage)), 60_000)

    it.effect("a unit inside another leaves its count to the outer one: the outer rolled back, nothing counts", () =>
      Effect.gen(function*() {
        const channel = `nested_${name}_${Date.now()}`
        const outer = yield* Effect.exit(unitOfWork(Effect.gen(function*() {
          yield* unitOfWork(afterCommit(count(channel)))
          expect(yield* counted(channel)).toBe(0)
          return yield* Effect.fail("refused")
        })))
        expect(Exit.isFailure(outer)).toBe(true)
        expect(yield* counted(channel)).toBe(0)
        yield* unitOfWork(unitOfWork(afterCommit(count(channel))))
        expect(yield* counted(channel)).toBe(1)
      }).pipe(Effect.provide(storage)), 60_000)
  })
}
