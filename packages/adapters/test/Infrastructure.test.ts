/** The composed layer: every port from a config, and start-up failures as clear InfrastructureErrors. */
import { describe, expect, it } from "@effect/vitest"
import {
  AccountRepo,
  Accounts,
  CardTokens,
  CardVault,
  CheckoutSessionRepo,
  CvcStore,
  EventRepo,
  HostResolver,
  Ids,
  KeyHasher,
  Locks,
  OrderRepo,
  RateLimiter,
  TransactionRepo,
  UnitOfWork,
  WebhookDeliveryRepo,
  WebhookEndpointRepo,
  WebhookTransport
} from "@tender/domain"
import { Effect, Layer, Option } from "effect"
import type { TenderConfig } from "../src/Config.ts"
import * as Infrastructure from "../src/Infrastructure.ts"

const memory: TenderConfig = { storage: "memory", dataDir: ".tender-unused", databaseUrl: undefined, redisUrl: undefined }

const buildError = (config: TenderConfig) => Effect.flip(Effect.scoped(Layer.build(Infrastructure.layer(config))))

describe("Infrastructure", () => {
  it.live("with memory storage provides every port, and the use cases run on it", () =>
    Effect.gen(function*() {
      yield* AccountRepo
      yield* UnitOfWork
      yield* CardVault
      yield* CvcStore
      yield* Locks
      yield* RateLimiter
      yield* Ids
      yield* KeyHasher
      yield* OrderRepo
      yield* TransactionRepo
      yield* EventRepo
      yield* WebhookEndpointRepo
      yield* WebhookDeliveryRepo
      yield* CheckoutSessionRepo
      yield* WebhookTransport
      expect(yield* (yield* HostResolver).resolve("[::1]")).toEqual(["::1"])
      const accounts = yield* Accounts
      const created = yield* accounts.create({ name: "Memory Shop", mode: "test" })
      const account = yield* accounts.enableVault(created.account_id)
      const card = yield* (yield* CardTokens).tokenize(account, {
        number: "4242 4242 4242 4242",
        exp_month: 12,
        exp_year: new Date().getUTCFullYear() + 3,
        cvc: "123"
      })
      expect(Option.map(yield* (yield* CardVault).reveal(account.id, card.token), (r) => r.number)).toEqual(Option.some("4242424242424242"))
      expect(yield* (yield* CvcStore).take(card.token)).toEqual(Option.some("123"))
      expect(yield* Infrastructure.migrate(memory)).toEqual([])
    }).pipe(
      Effect.provide(Layer.mergeAll(Accounts.layer, CardTokens.layer).pipe(Layer.provideMerge(Infrastructure.layer(memory))))
    ))

  it.live("an external database without TENDER_VAULT_KEY is refused before connecting", () =>
    Effect.gen(function*() {
      const error = yield* buildError({ ...memory, storage: "postgres", databaseUrl: "postgres://u:p@127.0.0.1:1/tender" })
      expect(error._tag).toBe("InfrastructureError")
      expect(error.message).toContain("TENDER_VAULT_KEY is required")
    }))

  it.live("an unreachable DATABASE_URL is named in the error, without its password", () =>
    Effect.gen(function*() {
      const error = yield* buildError({
        ...memory,
        storage: "postgres",
        databaseUrl: "postgres://tender:s3cret@127.0.0.1:1/tender",
        vaultKey: "11".repeat(32)
      })
      expect(error.message).toBe("PostgreSQL at 127.0.0.1:1/tender refuses connections (is it running?): start it, or correct DATABASE_URL")
      expect(error.message).not.toContain("s3cret")
    }))

  it.live("an unreachable REDIS_URL is named in the error, without its password", () =>
    Effect.gen(function*() {
      const error = yield* buildError({ ...memory, redisUrl: "redis://:hunter2@127.0.0.1:1" })
      expect(error.message).toContain("could not connect to Redis at redis://:***@127.0.0.1:1")
      expect(error.message).not.toContain("hunter2")
    }))
})
