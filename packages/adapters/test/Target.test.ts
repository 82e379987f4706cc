/**
 * resolveTarget (packages/domain/src/payments/operations/Target.ts) over the memory storage: which order a
 * capture or void names, and the spec's refusals. Here rather than in the domain package because
 * it needs real repositories, which live in the adapters.
 */
import { expect, layer } from "@effect/vitest"
import { type AccountId, AccountRepo, CheckoutSessionRepo, OrderRepo, TransactionRepo } from "@tender/domain"
import { resolveTarget } from "@tender/domain/payments/operations/Target"
import { Effect, Layer } from "effect"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { memoryStorage } from "../src/Infrastructure.ts"
import { newAccount, newOrder, newSession, newTransaction } from "../src/testing/StorageContract.ts"

const storage = memoryStorage.pipe(Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer)))

const storedAccount = Effect.gen(function*() {
  const { account } = yield* newAccount()
  yield* (yield* AccountRepo).insert(account)
  return account.id
})

/** A stored direct-payment order with its authorization. */
const authorized = (accountId: AccountId, reference?: string) =>
  Effect.gen(function*() {
    const order = yield* newOrder(accountId, reference !== undefined ? { merchant_reference: reference } : {})
    yield* (yield* OrderRepo).insert(order)
    const authorization = yield* newTransaction(order)
    yield* (yield* TransactionRepo).insert(authorization)
    return { order, authorization }
  })

const codeOf = <A, E extends { readonly code: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => error.code)

layer(storage, { excludeTestServices: true })("resolveTarget", (it) => {
  it.effect("exactly one of order_id, transaction_id, merchant_reference: validation_failed names the fields", () =>
    Effect.gen(function*() {
      const accountId = yield* storedAccount
      const { order, authorization } = yield* authorized(accountId)
      const none = yield* Effect.flip(resolveTarget(accountId, {}))
      expect([none.code, none.errors?.map((e) => e.field)]).toEqual([
        "validation_failed",
        ["order_id", "transaction_id", "merchant_reference"]
      ])
      const two = yield* Effect.flip(resolveTarget(accountId, { order_id: order.id, transaction_id: authorization.id }))
      expect([two.code, two.errors?.map((e) => e.field)]).toEqual(["validation_failed", ["order_id", "transaction_id"]])
    }))

  it.effect("order_id and an authorization's transaction_id name their order, in the account only", () =>
    Effect.gen(function*() {
      const accountId = yield* storedAccount
      const other = yield* storedAccount
      const { authorization, order } = yield* authorized(accountId)
      expect(yield* resolveTarget(accountId, { order_id: order.id })).toBe(order.id)
      expect(yield* resolveTarget(accountId, { transaction_id: authorization.id })).toBe(order.id)
      expect(yield* codeOf(resolveTarget(other, { order_id: order.id }))).toBe("order_not_found")
      expect(yield* codeOf(resolveTarget(other, { transaction_id: authorization.id }))).toBe("transaction_not_found")
    }))

  it.effect("a capture's transaction_id is invalid_transaction_status: name the authorization", () =>
    Effect.gen(function*() {
      const accountId = yield* storedAccount
      const { authorization, order } = yield* authorized(accountId)
      const capture = yield* newTransaction(order, { kind: "capture", parent_transaction_id: authorization.id })
      yield* (yield* TransactionRepo).insert(capture)
      expect(yield* codeOf(resolveTarget(accountId, { transaction_id: capture.id }))).toBe("invalid_transaction_status")
    }))

  it.effect("a merchant_reference held by one order names it; an unknown one is order_not_found", () =>
    Effect.gen(function*() {
      const accountId = yield* storedAccount
      const other = yield* storedAccount
      const { order } = yield* authorized(accountId)
      // Another account's order with the same reference does not make it ambiguous.
      yield* authorized(other, order.merchant_reference)
      expect(yield* resolveTarget(accountId, { merchant_reference: order.merchant_reference })).toBe(order.id)
      expect(yield* codeOf(resolveTarget(accountId, { merchant_reference: "ref-unknown" }))).toBe("order_not_found")
    }))

  it.effect("contract.md, Idempotency: a direct payment's reference is its own: no session's order takes it, so it names that payment", () =>
    Effect.gen(function*() {
      const accountId = yield* storedAccount
      const { order } = yield* authorized(accountId)
      const refused = yield* Effect.flip(newSession(accountId, { merchant_reference: order.merchant_reference, status: "expired" }))
      expect(refused.code).toBe("duplicate_merchant_reference_id")
      expect(yield* resolveTarget(accountId, { merchant_reference: order.merchant_reference })).toBe(order.id)
    }))

  it.effect("spec: merchant_reference_ambiguous (409) \"Reference matches more than one transaction\" when sessions reused the reference after the first expired", () =>
    Effect.gen(function*() {
      const accountId = yield* storedAccount
      const sessions = yield* CheckoutSessionRepo
      const expired = yield* newSession(accountId, { status: "expired" })
      yield* sessions.insert(expired)
      expect(yield* resolveTarget(accountId, { merchant_reference: expired.merchant_reference })).toBe(expired.order_id)
      const reused = yield* newSession(accountId, { merchant_reference: expired.merchant_reference })
      yield* sessions.insert(reused)
      const error = yield* Effect.flip(resolveTarget(accountId, { merchant_reference: expired.merchant_reference }))
      expect(error.code).toBe("merchant_reference_ambiguous")
      expect(error.message).toContain("order_id or transaction_id")
      // Named by id, each payment is still reachable.
      expect(yield* resolveTarget(accountId, { order_id: reused.order_id })).toBe(reused.order_id)
    }))
})
