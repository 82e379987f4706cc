/**
 * Money back out, the steps refunds and payouts share: what a provider's `PayoutResult` does to the
 * record, its transaction and the order (the record step of the call, of reconciliation and of the
 * settlement worker), in one unit of work with the events the record's table emits.
 *
 *   Paid     → transaction completed, record succeeded (`<kind>.succeeded`); a refund adds its
 *              amount to the order's `refunded_amount`.
 *   Pending  → the provider pays later: the transaction waits (pending, its provider id kept)
 *              for the settlement worker; the record stays pending.
 *   Refused / unreachable → transaction and record failed with the decline code (`<kind>.failed`).
 */
import { Effect, Option, type Result } from "effect"
import {
  invalidField,
  type InvalidTransactionStatus,
  PayoutInProgress,
  type ProviderUnavailable,
  RefundInProgress,
  type ValidationFailed
} from "../../kernel/Errors.ts"
import { Ids } from "../../kernel/Ids.ts"
import * as Money from "../../kernel/Money.ts"
import { born, type OutflowTrigger, type Payout, payoutTransition, type Refund, refundTransition } from "../MoneyOut.ts"
import { type OutflowStore, PayoutRepo, RefundRepo } from "../OutflowPorts.ts"
import { outflowEventData, payoutView, type PayoutView, refundView, type RefundView } from "../OutflowViews.ts"
import type { Order, Transaction } from "../../payments/Payment.ts"
import { TransactionRepo } from "../../payments/PaymentPorts.ts"
import { type PayoutResult, type Unknown } from "../../payments/ProviderPorts.ts"
import { type Changes, type Moved, revise } from "../../kernel/StateMachine.ts"
import * as Txn from "../../payments/Transaction.ts"
import { nowIso } from "../../kernel/Time.ts"
import { guarded, loadTxn, lockOrder } from "../../payments/operations/Load.ts"
import { newTransaction } from "../../payments/operations/NewTransaction.ts"
import { decided, recordEvents, saveOrder, saveTxn, unitOfWork } from "../../payments/operations/Persist.ts"
import { ANSWER_LOST, callAndRecord, idempotencyKey, queuedCall, refusedCall, reserve } from "../../payments/operations/ProviderStep.ts"
import { whenSettled } from "../../payments/operations/Settlement.ts"
import { sameProvider } from "../../payments/operations/Route.ts"

type Outflow = Refund | Payout

/** What differs between refunds and payouts. */
interface Flow<R extends Outflow> {
  /** The provider call, the transaction's kind and the id's kind alike. */
  readonly operation: "refund" | "payout"
  /** An answer in doubt (spec: "… already in progress"): reconciliation will learn the outcome. */
  readonly inDoubt: () => RefundInProgress | PayoutInProgress
  readonly unreachable: string
  readonly store: Effect.Effect<OutflowStore<R>, never, RefundRepo | PayoutRepo>
  readonly transition: (record: R, trigger: OutflowTrigger, at: string, changes?: Changes<R>) => Result.Result<Moved<R>, InvalidTransactionStatus>
  readonly view: (record: R) => RefundView | PayoutView
  /** What a paid record changes on its order. */
  readonly onPaid: (order: Order, record: R) => Changes<Order> | undefined
}

export const refunds: Flow<Refund> = {
  operation: "refund",
  inDoubt: () => new RefundInProgress({ message: `A refund is in progress: ${ANSWER_LOST}` }),
  unreachable: "The payment provider is unreachable; the refund was recorded as failed and nothing was refunded",
  store: Effect.service(RefundRepo),
  transition: refundTransition,
  view: refundView,
  // Order.refunded_amount: the sum of succeeded refunds.
  onPaid: (order, r) => ({ refunded_amount: order.refunded_amount + r.amount })
}

export const payouts: Flow<Payout> = {
  operation: "payout",
  inDoubt: () => new PayoutInProgress({ message: `A payout is in progress: ${ANSWER_LOST}` }),
  unreachable: "The payout service is unreachable; the payout was recorded as failed and nothing was paid",
  store: Effect.service(PayoutRepo),
  transition: payoutTransition,
  view: payoutView,
  onPaid: () => undefined
}

/** The record whose provider call is `txnId` (a defect when missing: they are inserted together). */
const recordOf = <R extends Outflow>(flow: Flow<R>, txnId: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* flow.store).findByTransaction(txnId)
    if (Option.isNone(found)) return yield* Effect.die(new Error(`No refund or payout for transaction ${txnId}`))
    return found.value
  })

/** The record's move, the order's change and the events, in the caller's unit of work. */
const finish = <R extends Outflow>(flow: Flow<R>, order: Order, record: R, trigger: OutflowTrigger, at: string, changes: Changes<R> = {}) =>
  Effect.gen(function*() {
    const moved = yield* decided(flow.transition(record, trigger, at, changes))
    yield* (yield* flow.store).update(moved.next)
    const orderChanges = trigger === "paid" ? flow.onPaid(order, record) : undefined
    if (orderChanges !== undefined) yield* saveOrder(revise(order, orderChanges, at))
    yield* recordEvents(moved.events, order, outflowEventData(order, flow.view(moved.next)))
    return moved.next
  })

const pay = <R extends Outflow>(flow: Flow<R>, order: Order, txn: Transaction, record: R, at: string, providerTransactionId: string | null) =>
  Effect.gen(function*() {
    const done = yield* decided(Txn.transition(txn, "succeeded", at, { provider_transaction_id: providerTransactionId, pending_call: null }))
    yield* saveTxn(done.next)
    return yield* finish(flow, order, record, "paid", at)
  })

/**
 * The record step of a refund's or payout's provider call; a no-op answering the record as it
 * stands when `key` is no longer the call in flight (reconciliation or the caller recorded it).
 */
const recordWith = <R extends Outflow>(flow: Flow<R>, orderId: string, txnId: string, answer: PayoutResult | "unavailable", key: string) =>
  unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(orderId)
    const txn = yield* loadTxn(txnId)
    const record = yield* recordOf(flow, txnId)
    if (txn.pending_call?.key !== key) return record
    const at = yield* nowIso
    if (answer === "unavailable" || answer._tag === "Refused") {
      const failed = yield* refusedCall(txn, answer, at)
      yield* saveTxn(failed)
      return yield* finish(flow, order, record, "refused", at, { decline_code: failed.decline_code } as Changes<R>)
    }
    if (answer._tag === "Pending") {
      yield* saveTxn(yield* queuedCall(txn, answer.provider_transaction_id, at))
      return record
    }
    return yield* pay(flow, order, txn, record, at, answer.provider_transaction_id)
  }))

export const recordRefund = (orderId: string, txnId: string, answer: PayoutResult | "unavailable", key: string) =>
  recordWith(refunds, orderId, txnId, answer, key)

export const recordPayout = (orderId: string, txnId: string, answer: PayoutResult | "unavailable", key: string) =>
  recordWith(payouts, orderId, txnId, answer, key)

/**
 * The settlement worker, for a pending refund or payout: paid once the provider says it settled.
 * `told`: the provider's word given by the caller (the test-mode simulation, Simulate.ts).
 */
export const settleOutflow = (candidate: Transaction, told?: "settled" | "failed") => {
  const settle = <R extends Outflow>(flow: Flow<R>) =>
    whenSettled(candidate, (order, current, at, outcome) =>
      Effect.gen(function*() {
        const record = yield* recordOf(flow, current.id)
        if (record.status !== "pending") return false
        if (outcome === "failed") {
          // Accepted, then not paid: nothing left the merchant's balance, the refundable amount stands.
          const failed = yield* refusedCall(current, { decline_code: `${flow.operation}_failed` }, at)
          yield* saveTxn(failed)
          yield* finish(flow, order, record, "refused", at, { decline_code: failed.decline_code } as Changes<R>)
          return true
        }
        yield* pay(flow, order, current, record, at, current.provider_transaction_id)
        return true
      }), told)
  switch (candidate.kind) {
    case "refund":
      return settle(refunds)
    case "payout":
      return settle(payouts)
    default:
      return Effect.succeed(false)
  }
}

/** The record's own fields, beside those every refund or payout has. */
type OwnFields<R extends Outflow> = Omit<R, keyof Refund & keyof Payout>

/**
 * Reserve → call → record for a new refund or payout of `original`. Under the order's lock and row
 * lock, `load` reads what the decision needs from the order as locked (in the same unit of work, so
 * it may lock more, after the order: the settlement's balance, Balance.ts, at least), and `decide`
 * answers the amount or a refusal from it; the transaction (with its call reserved) and the record
 * are inserted together, the record's reference refused when another holds it. Refunds and payouts
 * of an order take the same lock, so each decides with the other's reservations counted.
 */
export const send = <R extends Outflow, E, F, EL = never, RL = never>(flow: Flow<R>, plan: {
  readonly order: Order
  readonly original: Transaction
  readonly load: (locked: Order) => Effect.Effect<F, EL, RL>
  readonly decide: (facts: F) => number | E
  readonly fields: OwnFields<R>
  readonly call: (txn: Transaction, key: string) => Effect.Effect<PayoutResult | Unknown, ProviderUnavailable>
}) =>
  guarded(plan.order.id, Effect.gen(function*() {
    const reserved = yield* unitOfWork(Effect.gen(function*() {
      const order = yield* lockOrder(plan.order.id)
      const store = yield* flow.store
      const amount = plan.decide(yield* plan.load(order))
      if (typeof amount !== "number") return yield* Effect.fail(amount)
      const at = yield* nowIso
      const fresh = yield* newTransaction(order, flow.operation, amount, {
        ...sameProvider(plan.original),
        parent_transaction_id: plan.original.id,
        payment_instrument: plan.original.payment_instrument
      })
      const txn = yield* reserve(fresh, flow.operation, idempotencyKey(fresh, flow.operation), at)
      yield* (yield* TransactionRepo).insert(txn)
      yield* store.insert(born({
        id: yield* (yield* Ids).make(flow.operation),
        account_id: order.account_id,
        livemode: order.livemode,
        order_id: order.id,
        transaction_id: txn.id,
        original_transaction_id: plan.original.id,
        amount,
        currency: order.currency,
        processing_profile: order.processing_profile,
        decline_code: null,
        created_at: at,
        ...plan.fields
      }) as unknown as R)
      return txn
    }))
    const key = reserved.pending_call!.key
    return yield* callAndRecord(
      flow.operation,
      flow.operation,
      plan.call(reserved, key),
      (answer) => recordWith(flow, plan.order.id, reserved.id, answer, key),
      flow.unreachable
    ).pipe(Effect.catchTag("CardPaymentInProgress", () => Effect.fail(flow.inDoubt())))
  }))

/**
 * A request amount in the original's currency: malformed or with too many decimals is
 * `validation_failed` naming `amount`; zero or negative is the verb's own refusal.
 */
export const parseOutflowAmount = <E>(text: string, currency: string, notPositive: () => E): number | E | ValidationFailed => {
  const parsed = Money.parseAmount(text, currency)
  if ("minor" in parsed) return parsed.minor
  return parsed.error === "not_positive" ? notPositive() : invalidField("amount", Money.amountErrorMessage(parsed.error, currency))
}
