/**
 * The checkout session operations (packages/domain/src/sessions/operations) called through the
 * Sessions use case, over the in-memory adapters and the sandbox under the TestClock: no HTTP. Their
 * pure decisions are tested in packages/domain/test/SessionOperations.test.ts; here, what the shells
 * do with them: a session's end persisted, or refused with nothing changed.
 */
import { describe, expect, it } from "@effect/vitest"
import { type Account, CheckoutSessionRepo, EventRepo, Order, OrderRepo, Sessions } from "@tender/domain"
import { Effect, Exit, Layer, Option, Result } from "effect"
import { TestClock } from "effect/testing"
import { sandbox, shop, world } from "./WorkerWorld.ts"

const START = Date.parse("2026-11-26T03:00:00.000Z")
const HOUR = 60 * 60 * 1000

const sessionsWorld = () => Sessions.layer.pipe(Layer.provideMerge(world(sandbox(), () => false)))

let seq = 0
const open = (account: Account.Account, expiresInMs = HOUR) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    return yield* sessions.create(account, {
      amount: "25.00",
      currency: "USD",
      merchant_reference: `cart-${++seq}`,
      success_url: "https://merchant.example/ok",
      cancel_url: "https://merchant.example/no",
      expires_at: new Date(START + expiresInMs).toISOString()
    })
  }).pipe(Effect.orDie)

/** What storage holds of a session: its row, its order's status, the events of its order. */
const stored = (sessionId: string) =>
  Effect.gen(function*() {
    const session = Option.getOrThrow(yield* (yield* CheckoutSessionRepo).findAny(sessionId))
    const order = Option.getOrThrow(yield* (yield* OrderRepo).findAny(session.order_id))
    const events = (yield* (yield* EventRepo).listByOrder(session.order_id)).map((e) => e.type)
    return { session: session.status, order: order.status, events }
  })

/**
 * The records disagree, as no flow of ours leaves them: the session live, its order already ended
 * (succeeded) behind its back. Written straight to storage, through the order's table.
 */
const endOrderBehindSession = (sessionId: string) =>
  Effect.gen(function*() {
    const orders = yield* OrderRepo
    const session = Option.getOrThrow(yield* (yield* CheckoutSessionRepo).findAny(sessionId))
    const order = Option.getOrThrow(yield* orders.findAny(session.order_id))
    yield* orders.update(Result.getOrThrow(Order.transition(order, ["attempt_sent", "payment_settled"], order.created_at)).next).pipe(Effect.orDie)
  })

describe("cancel (sessions/operations/Cancel.ts, Close.ts)", () => {
  it.effect("spec: cancel moves an open session to canceled (checkout.session.canceled) and releases its order (canceled, no payment event)", () =>
    Effect.gen(function*() {
      const { account } = yield* shop(START, "sessions", "4242424242424242")
      const created = yield* open(account)
      const canceled = yield* (yield* Sessions).cancel(account, created.id)
      expect(canceled.status).toBe("canceled")
      expect(yield* stored(created.id)).toEqual({ session: "canceled", order: "canceled", events: ["checkout.session.canceled"] })
    }).pipe(Effect.provide(sessionsWorld())))

  it.effect("a live session whose order already ended: the refused order move is a defect, and nothing changes (the session stays open, no event)", () =>
    Effect.gen(function*() {
      const { account } = yield* shop(START, "sessions", "4242424242424242")
      const created = yield* open(account)
      yield* endOrderBehindSession(created.id)
      const exit = yield* Effect.exit((yield* Sessions).cancel(account, created.id))
      expect(Exit.hasDies(exit)).toBe(true)
      expect(yield* stored(created.id)).toEqual({ session: "open", order: "succeeded", events: [] })
    }).pipe(Effect.provide(sessionsWorld())))
})

describe("checkout session expiry (sessions/operations/ExpireSessions.ts; not a payment window's)", () => {
  it.effect("spec: expired once expires_at passed, applied by the sweeper's round to a session nobody touched; one not yet due stays open", () =>
    Effect.gen(function*() {
      const { account } = yield* shop(START, "sessions", "4242424242424242")
      const due = yield* open(account, HOUR)
      const later = yield* open(account, 2 * HOUR)
      yield* TestClock.adjust(HOUR)
      expect(yield* (yield* Sessions).expireOverdue()).toBe(1)
      expect(yield* stored(due.id)).toEqual({ session: "expired", order: "canceled", events: ["checkout.session.expired"] })
      expect((yield* stored(later.id)).session).toBe("open")
    }).pipe(Effect.provide(sessionsWorld())))

  it.effect("a session whose records disagree fails alone: the round logs it, expires the others, and the bad one stays as it was", () =>
    Effect.gen(function*() {
      const { account } = yield* shop(START, "sessions", "4242424242424242")
      // The broken one first: the sweeper lists the oldest first, so it must not block the rest.
      const broken = yield* open(account, HOUR - 1000)
      const fine = yield* open(account, HOUR)
      yield* endOrderBehindSession(broken.id)
      yield* TestClock.adjust(HOUR)
      expect(yield* (yield* Sessions).expireOverdue()).toBe(1)
      expect(yield* stored(fine.id)).toEqual({ session: "expired", order: "canceled", events: ["checkout.session.expired"] })
      expect(yield* stored(broken.id)).toEqual({ session: "open", order: "succeeded", events: [] })
    }).pipe(Effect.provide(sessionsWorld())))
})
