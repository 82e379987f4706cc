/** Session expiry under a test clock: applied on touch, and by the sweeper for sessions nobody touches. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Accounts, EventRepo, Sessions, UseCases } from "@tender/domain"
import { Infrastructure } from "@tender/adapters"

const TestLayer = UseCases.layer.pipe(Layer.provideMerge(Infrastructure.layer({ storage: "memory", dataDir: ".tender-test" })))

const setup = Effect.gen(function*() {
  const accounts = yield* Accounts
  const created = yield* accounts.create({ name: "clock", mode: "test" })
  return yield* accounts.get(created.account_id)
})

const input = (reference: string) => ({
  amount: "10.00", currency: "USD", merchant_reference: reference, success_url: "https://s.example/ok", cancel_url: "https://s.example/no"
})

describe("session expiry", () => {
  it.effect("an hour later a touch expires it (a moment before, it is still open)", () =>
    Effect.gen(function*() {
      const account = yield* setup
      const sessions = yield* Sessions
      const s = yield* sessions.create(account, input("clock-1"))
      yield* TestClock.adjust("59 minutes")
      expect((yield* sessions.get(account, s.id)).status).toBe("open")
      yield* TestClock.adjust("1 minute")
      expect((yield* sessions.get(account, s.id)).status).toBe("expired")
      const events = yield* (yield* EventRepo).listByOrder(s.order_id)
      expect(events.map((e) => e.type)).toEqual(["checkout.session.expired"])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("the sweeper expires the sessions nobody touched, once", () =>
    Effect.gen(function*() {
      const account = yield* setup
      const sessions = yield* Sessions
      const a = yield* sessions.create(account, input("sweep-a"))
      const b = yield* sessions.create(account, { ...input("sweep-b"), expires_at: new Date(3 * 3_600_000).toISOString() })
      expect(yield* sessions.expireOverdue()).toBe(0)
      yield* TestClock.adjust("61 minutes")
      expect(yield* sessions.expireOverdue()).toBe(1)
      expect(yield* sessions.expireOverdue()).toBe(0)
      expect((yield* sessions.get(account, a.id)).status).toBe("expired")
      expect((yield* sessions.get(account, b.id)).status).toBe("open")
      yield* TestClock.adjust("2 hours")
      expect(yield* sessions.expireOverdue()).toBe(1)
      const events = yield* (yield* EventRepo).listByOrder(b.order_id)
      expect(events.map((e) => e.type)).toEqual(["checkout.session.expired"])
    }).pipe(Effect.provide(TestLayer)))
})
