/**
 * Reconciliation backs off on every record kind (issue 21, item 5): a provider call whose answer was
 * lost — a payment attempt, a capture, a void, a refund, a payout, a transfer — and whose record
 * step then keeps failing (here: the outbox refuses to store its event, as a database check refused
 * the refund of an accepted overpayment) is asked about again later and later (half the call's age,
 * 1 s to 10 min: exponential in the tries, capped), the next time persisted on its pending call
 * (`retry_at`), never every round; once the record can be stored it is recorded once.
 *
 * Memory storage, in-process locks, the sandbox behind a tap that loses every answer, under the
 * TestClock: no round sleeps, and time moves only when the test moves it.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type Account,
  Accounts,
  CardTokens,
  EventRepo,
  OrderRepo,
  Outflows,
  type PaymentProvider,
  Payments,
  TransactionRepo,
  Transfers,
  type Unknown
} from "@tender/domain"
import { Clock, Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import * as WorkerWorld from "./WorkerWorld.ts"

const START = Date.parse("2026-11-26T03:00:00.000Z")
const SECOND = 1_000
const CAP = 10 * 60 * SECOND
/** Reconciliation as the worker runs it, with no grace: every call left in doubt is due at once. */
const ROUND = { graceMs: 0, horizonMs: 24 * 60 * 60 * SECOND }

const lost: Unknown = { _tag: "Unknown", reason: "test" }

interface Switches {
  /** The sandbox applies calls but their answers are lost on the way back. */
  losing: boolean
  /** Storing an event fails: every record step fails (each emits one), nothing else does. */
  broken: boolean
  /** How many times reconciliation asked the provider. */
  lookups: number
}

const world = (s: Switches) => {
  const sandbox = WorkerWorld.sandbox()
  const lose = <A, E>(call: Effect.Effect<A, E>): Effect.Effect<A | Unknown, E> => Effect.map(call, (answer) => (s.losing ? lost : answer))
  const provider: PaymentProvider["Service"] = {
    ...sandbox,
    authorizeCard: (r) => lose(sandbox.authorizeCard(r)),
    captureCard: (r) => lose(sandbox.captureCard(r)),
    voidCard: (r) => lose(sandbox.voidCard(r)),
    refund: (r) => lose(sandbox.refund(r)),
    payout: (r) => lose(sandbox.payout(r)),
    lookup: (key) => Effect.andThen(Effect.sync(() => s.lookups++), sandbox.lookup(key))
  }
  return WorkerWorld.world(provider, () => s.broken)
}

let seq = 0

const shop = WorkerWorld.shop(START, "backoff", "4242424242424242")

const charge = (account: Account.Account, card: string, manual = false) =>
  WorkerWorld.charge(account, card, `backoff-${++seq}`, manual).pipe(Effect.ensuring(TestClock.adjust("1 second")))

/** A call whose answer was lost: the verb answers its "in progress" code (card_payment_…, refund_…, payout_…, transfer_in_progress). */
const lostCall = <A, E extends { readonly code: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flip(effect).pipe(Effect.orDie, Effect.map((e) => expect(e.code).toMatch(/_in_progress$/)))

const orderOf = (account: Account.Account, reference: string) =>
  Effect.map(Effect.flatMap(Effect.service(OrderRepo), (orders) => orders.findByReference(account.id, reference)), (o) => Option.getOrThrow(o).id)

/** Each kind: makes a call whose answer is lost, and answers its order. */
const KINDS: ReadonlyArray<readonly [string, (s: Switches) => Effect.Effect<string, never, Payments | Outflows | Transfers | Accounts | CardTokens | OrderRepo>]> = [
  ["a payment attempt", (s) =>
    Effect.gen(function*() {
      const { account, card } = yield* shop
      s.losing = true
      const reference = `backoff-${++seq}`
      yield* lostCall((yield* Payments).create(account, {
        amount: "100.00", currency: "USD", country: "US", merchant_reference: reference,
        payment_method: { code: "card", details: { card_token: card, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
      }))
      return yield* orderOf(account, reference)
    })],
  ["a capture", (s) =>
    Effect.gen(function*() {
      const { account, card } = yield* shop
      const held = yield* charge(account, card, true)
      s.losing = true
      yield* lostCall((yield* Payments).capture(account, { order_id: held.order_id }))
      return held.order_id
    })],
  ["a void", (s) =>
    Effect.gen(function*() {
      const { account, card } = yield* shop
      const held = yield* charge(account, card, true)
      s.losing = true
      yield* lostCall((yield* Payments).void(account, { order_id: held.order_id }))
      return held.order_id
    })],
  ["a refund", (s) =>
    Effect.gen(function*() {
      const { account, card } = yield* shop
      const paid = yield* charge(account, card)
      s.losing = true
      yield* lostCall((yield* Outflows).refund(account, { order_id: paid.order_id, amount: "40.00" }))
      return paid.order_id
    })],
  ["a payout", (s) =>
    Effect.gen(function*() {
      const { account, card } = yield* shop
      const paid = yield* charge(account, card)
      s.losing = true
      yield* lostCall((yield* Outflows).payout(account, { order_id: paid.order_id, amount: "10.00" }))
      return paid.order_id
    })],
  ["a transfer", (s) =>
    Effect.gen(function*() {
      const { account } = yield* shop
      s.losing = true
      const reference = `backoff-transfer-${++seq}`
      yield* lostCall((yield* Transfers).create(account, {
        amount: "25.00", currency: "USD", country: "US", merchant_reference: reference,
        payment_method: { code: "bank_transfer", details: { account_number: "000123456789", bank_code: "021000021", holder_name: "Ada Lovelace" } }
      }))
      return yield* orderOf(account, reference)
    })]
]

/** The order's transaction with a call in doubt. */
const inDoubt = (orderId: string) =>
  Effect.gen(function*() {
    const txns = yield* (yield* TransactionRepo).listByOrder(orderId)
    return txns.find((t) => t.pending_call !== null)
  })

describe("reconciliation backs off on every record kind whose record step keeps failing", () => {
  for (const [kind, make] of KINDS) {
    it.effect(`${kind}: asked again later and later (exponential, capped at 10 min, persisted as retry_at), never every round; recorded once it can be`, () => {
      const s: Switches = { losing: false, broken: false, lookups: 0 }
      return Effect.gen(function*() {
        const orderId = yield* make(s)
        s.losing = false
        s.broken = true
        const payments = yield* Payments
        const first = (yield* inDoubt(orderId))!
        expect(first.pending_call).not.toBeNull()
        yield* TestClock.adjust("1 second")

        const gaps: Array<number> = []
        let asked = 0
        for (let round = 0; round < 30; round++) {
          expect(yield* payments.reconcileDue(ROUND)).toBe(0)
          asked++
          expect(s.lookups, `round ${round}: the provider asked once`).toBe(asked)
          const call = (yield* inDoubt(orderId))!.pending_call!
          const now = yield* Clock.currentTimeMillis
          const retryAt = Date.parse(call.retry_at!)
          gaps.push(retryAt - now)
          // Not due before its time: rounds meanwhile leave it alone (and the provider unasked).
          yield* TestClock.setTime(retryAt - 1)
          expect(yield* payments.reconcileDue(ROUND)).toBe(0)
          expect(s.lookups).toBe(asked)
          yield* TestClock.setTime(retryAt)
        }
        // Half the call's age each time: growing, by half again, from 1 s up to the 10-minute cap.
        expect(gaps[0]).toBe(SECOND)
        for (let i = 1; i < gaps.length; i++) expect(gaps[i]).toBeGreaterThanOrEqual(gaps[i - 1]!)
        expect(gaps.filter((g) => g === CAP).length).toBeGreaterThan(0)
        expect(Math.max(...gaps)).toBe(CAP)
        const beforeCap = gaps.filter((g) => g < CAP)
        for (let i = 3; i < beforeCap.length; i++) expect(beforeCap[i]! / beforeCap[i - 1]!).toBeGreaterThan(1.3)

        // The record can be stored again: recorded at its next time, once.
        s.broken = false
        expect(yield* payments.reconcileDue(ROUND)).toBe(1)
        expect(yield* inDoubt(orderId)).toBeUndefined()
        expect(yield* payments.reconcileDue(ROUND)).toBe(0)
        const events = yield* (yield* EventRepo).listByOrder(orderId)
        expect(events.length).toBeGreaterThan(0)
        expect(Option.isSome(yield* (yield* OrderRepo).findAny(orderId))).toBe(true)
      }).pipe(Effect.provide(world(s)))
    })
  }
})
