/**
 * Loading under lock, in the one lock order of the whole codebase: the order's `Locks` key, then the
 * order row (`OrderRepo.lock`), then its checkout session row (`CheckoutSessionRepo.lock`). Nothing
 * locks a session before its order, so a session's cancel and its attempt's record can never
 * deadlock. And the guard of the paths a customer drives: nothing is collected for an inactive account.
 */
import { Effect, Option } from "effect"
import { notCollecting } from "../../accounts/Account.ts"
import { type AccountId } from "../../kernel/Ids.ts"
import { AccountRepo } from "../../accounts/AccountPorts.ts"
import { Locks } from "../../kernel/Ports.ts"
import * as Session from "../../sessions/CheckoutSession.ts"
import { CheckoutSessionRepo } from "../../sessions/SessionPorts.ts"
import type { Order } from "../Order.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"

export const lockOrder = (orderId: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* OrderRepo).lock(orderId)
    if (Option.isNone(found)) return yield* Effect.die(new Error(`Order ${orderId} vanished`))
    return found.value
  })

export const loadTxn = (txnId: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* TransactionRepo).findAny(txnId)
    if (Option.isNone(found)) return yield* Effect.die(new Error(`Transaction ${txnId} vanished`))
    return found.value
  })

/** The checkout session behind an order, locked (after the order, per the lock order). */
export const lockSessionOf = (order: Order) =>
  order.subtype !== "checkout"
    ? Effect.succeed(Option.none<Session.CheckoutSession>())
    : Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const found = yield* sessions.findByOrder(order.id)
      return Option.isNone(found) ? found : yield* sessions.lock(found.value.id)
    })

/**
 * Serialises provider steps per order (Redis across processes when configured), and runs to the end
 * once started: a client hanging up must not cut a provider call from the record of its outcome.
 */
export const guarded = <A, E, R>(orderId: string, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const locks = yield* Locks
    return yield* Effect.uninterruptible(locks.withLock(`order:${orderId}`, effect, { waitMs: 30_000, ttlMs: 60_000 }))
  })

/**
 * The paths a customer drives (the hosted page, the sandbox's pages, a provider's 3-D Secure return)
 * collect nothing for an account that is not active (suspended), as the API and the SDK refuse it.
 */
export const refuseInactive = (accountId: string) =>
  Effect.gen(function*() {
    const account = Option.getOrUndefined(yield* (yield* AccountRepo).findById(accountId as AccountId))
    const refused = account === undefined ? undefined : notCollecting(account)
    if (refused !== undefined) return yield* refused
  })
