/**
 * The settlement worker backs off (issue 21, item 5: "reconciliation retries it every second without
 * backing off ... make reconciliation back off on every record kind"): what the provider accepted
 * for later — a settling capture, a queued refund, payout or transfer — that a round did not settle
 * (the provider could not be asked, answered "not yet", or the record step failed) is asked again
 * later and later (half its age, 1 s to 10 min, as reconciliation's calls), the next time persisted
 * on the transaction (`settlement_check_at`), never every round; stuck ones never hold newer ones
 * back; once it can, it settles once, with its event once.
 *
 * Memory storage, in-process locks, the sandbox (card 0341 settles later; here every payout is
 * queued) behind switches, under the TestClock: no round sleeps, time moves only when the test moves it.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type Account,
  Accounts,
  CardTokens,
  Errors,
  EventRepo,
  OrderRepo,
  Outflows,
  type PaymentProvider,
  Payments,
  StateMachine,
  TransactionRepo,
  Transfers
} from "@tender/domain"
import { Clock, Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import * as PaymentProviderSandbox from "../src/providers/sandbox/PaymentProviderSandbox.ts"
import * as SandboxIds from "../src/providers/sandbox/SandboxIds.ts"
import * as WorkerWorld from "./WorkerWorld.ts"

const START = Date.parse("2026-11-27T03:00:00.000Z")
const SECOND = 1_000
const CAP = 10 * 60 * SECOND

type Failure = "the provider cannot be asked" | "the provider answers not yet" | "the record step fails"

interface Switches {
  /** How the provider's settlement lookup goes for the ids in `stuck` (every id when `stuck` is empty). */
  failure: Failure | undefined
  stuck: Set<string>
  /** How many times the settlement worker asked the provider, per provider id. */
  lookups: Map<string, number>
}

const asked = (s: Switches, id: string) => s.lookups.get(id) ?? 0

const world = (s: Switches) => {
  const sandbox = WorkerWorld.sandbox()
  const failing = (id: string) => s.failure !== undefined && (s.stuck.size === 0 || s.stuck.has(id))
  const provider: PaymentProvider["Service"] = {
    ...sandbox,
    // A provider that queues every payout (transfers included) and settles it later, as card 0341's.
    payout: (r) =>
      Effect.flatMap(sandbox.payout(r), (answer) =>
        answer._tag !== "Paid" ? Effect.succeed(answer) : Effect.map(Clock.currentTimeMillis, (since) => ({
          _tag: "Pending" as const,
          provider_transaction_id: SandboxIds.make("po", r.reference, { settlesLater: true, since })
        }))),
    settlement: (id) =>
      Effect.andThen(Effect.sync(() => s.lookups.set(id, asked(s, id) + 1)), () => {
        if (!failing(id)) return sandbox.settlement(id)
        if (s.failure === "the provider cannot be asked") return Effect.fail(new Errors.ProviderUnavailable({ message: "settlement lookup down (test)" }))
        return s.failure === "the provider answers not yet" ? Effect.succeed("pending" as const) : sandbox.settlement(id)
      })
  }
  // "The record step fails": where it stores its event, as a refused write would.
  return WorkerWorld.world(provider, () => s.failure === "the record step fails")
}

let seq = 0

// contract.md, Sandbox: card 0341's captures settle later, and its refunds and payouts are pending.
const shop = WorkerWorld.shop(START, "settle", "4000000000000341")

const charge = (account: Account.Account, card: string, manual = false) => WorkerWorld.charge(account, card, `settle-${++seq}`, manual)

const settlingCapture = (account: Account.Account, card: string) =>
  Effect.gen(function*() {
    const held = yield* charge(account, card, true)
    const capture = yield* Effect.orDie((yield* Payments).capture(account, { order_id: held.order_id }))
    expect(capture.status).toBe("settling")
    return { order: held.order_id, txn: capture.transaction_id }
  })

type Services = Payments | Outflows | Transfers | Accounts | CardTokens | OrderRepo

/** Each kind: makes one the provider accepted for later; answers its order and transaction, and the event its settlement emits. */
const KINDS: ReadonlyArray<readonly [string, string, Effect.Effect<{ readonly order: string; readonly txn: string }, never, Services>]> = [
  ["a settling capture", "payment.succeeded", Effect.flatMap(shop, ({ account, card }) => settlingCapture(account, card))],
  ["a queued refund", "refund.succeeded", Effect.gen(function*() {
    const { account, card } = yield* shop
    const paid = yield* charge(account, card)
    const refund = yield* Effect.orDie((yield* Outflows).refund(account, { order_id: paid.order_id, amount: "40.00" }))
    expect(refund.status).toBe("pending")
    return { order: paid.order_id, txn: refund.transaction_id }
  })],
  ["a queued payout", "payout.succeeded", Effect.gen(function*() {
    const { account, card } = yield* shop
    const paid = yield* charge(account, card)
    const payout = yield* Effect.orDie((yield* Outflows).payout(account, { order_id: paid.order_id, amount: "10.00" }))
    expect(payout.status).toBe("pending")
    return { order: paid.order_id, txn: payout.transaction_id }
  })],
  ["a queued transfer", "transfer.succeeded", Effect.gen(function*() {
    const { account } = yield* shop
    const transfer = yield* Effect.orDie((yield* Transfers).create(account, {
      amount: "25.00", currency: "USD", country: "US", merchant_reference: `settle-transfer-${++seq}`,
      payment_method: { code: "bank_transfer", details: { account_number: "000123456789", bank_code: "021000021", holder_name: "Ada Lovelace" } }
    }))
    return { order: transfer.order_id, txn: transfer.transaction_id }
  })]
]

const FAILURES: ReadonlyArray<Failure> = ["the provider cannot be asked", "the provider answers not yet", "the record step fails"]

const stored = (txnId: string) => Effect.map(Effect.flatMap(Effect.service(TransactionRepo), (t) => t.findAny(txnId)), Option.getOrThrow)
const eventsOf = (orderId: string) => Effect.map(Effect.flatMap(Effect.service(EventRepo), (e) => e.listByOrder(orderId)), (es) => es.map((e) => e.type))

describe("the settlement worker backs off per transaction, persisted, and settles once when it can", () => {
  for (const [kind, settledEvent, make] of KINDS) {
    for (const failure of FAILURES) {
      it.effect(`${kind}, ${failure}: asked again later and later (half its age, 1 s to 10 min, persisted as settlement_check_at), never every round; then settled once, its event once`, () => {
        const s: Switches = { failure: undefined, stuck: new Set(), lookups: new Map() }
        return Effect.gen(function*() {
          const { order, txn } = yield* make
          const payments = yield* Payments
          const first = yield* stored(txn)
          // Awaiting settlement: a capture `processing`, a refund, payout or transfer `pending` (contract.md).
          expect([first.status, first.pending_call, first.settlement_check_at]).toEqual([first.kind === "capture" ? "processing" : "pending", null, null])
          const id = first.provider_transaction_id!
          const before = yield* eventsOf(order)
          // Past the sandbox's settling time: only the failure keeps it from settling.
          yield* TestClock.adjust(PaymentProviderSandbox.SETTLE_AFTER_MS)
          s.failure = failure

          const gaps: Array<number> = []
          for (let round = 1; round <= 30; round++) {
            expect(yield* payments.settleDue()).toBe(0)
            expect(asked(s, id), `round ${round}: the provider asked once`).toBe(round)
            const checkAt = Date.parse((yield* stored(txn)).settlement_check_at!)
            gaps.push(checkAt - (yield* Clock.currentTimeMillis))
            // Not due before its time: rounds meanwhile leave it alone, and the provider unasked.
            yield* TestClock.setTime(checkAt - 1)
            expect(yield* payments.settleDue()).toBe(0)
            expect(asked(s, id)).toBe(round)
            yield* TestClock.setTime(checkAt)
          }
          // Half its age each time: growing by half again, from 1 s up to the 10-minute cap.
          expect(gaps[0]).toBe(SECOND)
          for (let i = 1; i < gaps.length; i++) expect(gaps[i]).toBeGreaterThanOrEqual(gaps[i - 1]!)
          expect(Math.max(...gaps)).toBe(CAP)
          expect(gaps.at(-1)).toBe(CAP)
          const beforeCap = gaps.filter((g) => g < CAP)
          for (let i = 3; i < beforeCap.length; i++) expect(beforeCap[i]! / beforeCap[i - 1]!).toBeGreaterThan(1.3)
          expect((yield* stored(txn)).status).toBe(first.status)
          expect(yield* eventsOf(order)).toEqual(before)

          // It can settle now: at its next time, once, with its event once.
          s.failure = undefined
          expect(yield* payments.settleDue()).toBe(1)
          expect((yield* stored(txn)).status).toBe("completed")
          expect(yield* eventsOf(order)).toEqual([...before, settledEvent])
          yield* TestClock.adjust("1 hour")
          expect(yield* payments.settleDue()).toBe(0)
          expect(asked(s, id)).toBe(31)
          expect(yield* eventsOf(order)).toEqual([...before, settledEvent])
        }).pipe(Effect.provide(world(s)))
      })
    }
  }

  it.effect("stuck ones never starve newer ones: 60 settling captures whose lookups fail hold back none of 60 newer ones (a round takes 50)", () => {
    const s: Switches = { failure: undefined, stuck: new Set(), lookups: new Map() }
    return Effect.gen(function*() {
      const { account, card } = yield* shop
      const payments = yield* Payments
      const stuck = []
      for (let i = 0; i < 60; i++) stuck.push(yield* settlingCapture(account, card))
      for (const { txn } of stuck) s.stuck.add((yield* stored(txn)).provider_transaction_id!)
      s.failure = "the provider cannot be asked"
      yield* TestClock.adjust("1 second")
      const newer = []
      for (let i = 0; i < 60; i++) newer.push(yield* settlingCapture(account, card))
      yield* TestClock.adjust(PaymentProviderSandbox.SETTLE_AFTER_MS)

      // The clock stands still: each round takes the 50 due soonest; a stuck one it could not settle
      // is put off, so the next round reaches what is behind it.
      const settled = []
      for (let round = 0; round < 3; round++) settled.push(yield* payments.settleDue())
      expect(settled).toEqual([0, 40, 20])
      for (const { order, txn } of newer) {
        expect((yield* stored(txn)).status).toBe("completed")
        expect(yield* eventsOf(order)).toEqual(["payment.authorized", "payment.succeeded"])
      }
      for (const { order, txn } of stuck) {
        expect((yield* stored(txn)).status).toBe("processing")
        expect(asked(s, (yield* stored(txn)).provider_transaction_id!)).toBe(1)
        expect(yield* eventsOf(order)).toEqual(["payment.authorized"])
      }
      expect(yield* payments.settleDue()).toBe(0)

      // Once the provider answers again, each stuck one settles at its next time, once.
      s.failure = undefined
      yield* TestClock.adjust("5 seconds")
      expect(yield* payments.settleDue()).toBe(50)
      expect(yield* payments.settleDue()).toBe(10)
      expect(yield* payments.settleDue()).toBe(0)
      for (const { order, txn } of stuck) {
        expect((yield* stored(txn)).status).toBe("completed")
        expect(yield* eventsOf(order)).toEqual(["payment.authorized", "payment.succeeded"])
      }
    }).pipe(Effect.provide(world(s)))
  })

  for (const [kind, settledEvent, make] of KINDS.filter(([kind]) => kind !== "a settling capture")) {
    it.effect(`${kind} that a process of the version before migration 0029 wrote \`processing\` (README, Upgrading): settled all the same, its event once`, () => {
      const s: Switches = { failure: undefined, stuck: new Set(), lookups: new Map() }
      return Effect.gen(function*() {
        const { order, txn } = yield* make
        const queued = yield* stored(txn)
        // As that version recorded a queued one: processing, the provider's id, no call in flight.
        // No request of this version writes it; only such a process, still running past 0029.
        yield* (yield* TransactionRepo).update(StateMachine.revise({ ...queued, status: "processing" }, {}, queued.updated_at))
        const before = yield* eventsOf(order)
        yield* TestClock.adjust(PaymentProviderSandbox.SETTLE_AFTER_MS)
        expect(yield* (yield* Payments).settleDue()).toBe(1)
        expect((yield* stored(txn)).status).toBe("completed")
        expect(yield* eventsOf(order)).toEqual([...before, settledEvent])
      }).pipe(Effect.provide(world(s)))
    })
  }
})
