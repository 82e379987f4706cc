/**
 * The record step of a transfer's provider call (a `payout` call on its kind `transfer`
 * transaction): what the provider answered, applied to the transaction, the order and the transfer
 * record in one unit of work under the order's row lock, with the transfer's events. Create,
 * execute, reconciliation and the settlement worker all record through here, and the window-expiry
 * worker fails a transfer whose retry after a 502 never came.
 */
import { Effect, Option } from "effect"
import * as OrderAggregate from "../../payments/Order.ts"
import { type Transfer, transferTransition } from "../MoneyOut.ts"
import type { Order, Transaction } from "../../payments/Payment.ts"
import type { PayoutResult } from "../../payments/ProviderPorts.ts"
import type { Moved } from "../../kernel/StateMachine.ts"
import { TransferRepo } from "../TransferPorts.ts"
import { transferEventData } from "../TransferViews.ts"
import * as Txn from "../../payments/Transaction.ts"
import { whenSettled } from "../../payments/operations/Settlement.ts"
import { nowIso } from "../../kernel/Time.ts"
import { loadTxn, lockOrder } from "../../payments/operations/Load.ts"
import { decided, recordEvents, saveOrder, saveTxn, unitOfWork } from "../../payments/operations/Persist.ts"
import { queuedCall, refusedCall } from "../../payments/operations/ProviderStep.ts"
import { retryUntil } from "../../payments/operations/Retry.ts"

export interface Recorded {
  readonly order: Order
  readonly transfer: Transfer
}

export const transferOf = (orderId: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* TransferRepo).findByOrder(orderId)
    if (Option.isNone(found)) return yield* Effect.die(new Error(`Order ${orderId} has no transfer`))
    return found.value
  })

/** Writes the transfer's move and its events (transfer.*, from its table), in the caller's unit of work. */
const saveTransfer = (moved: Moved<Transfer>, order: Order) =>
  Effect.gen(function*() {
    yield* (yield* TransferRepo).update(moved.next)
    yield* recordEvents(moved.events, order, transferEventData(moved.next, order))
  })

/** Paid (at once, or settled later): the transaction completes, the order succeeds with its instrument. */
const paid = (order: Order, txn: Transaction, transfer: Transfer, providerTransactionId: string, at: string) =>
  Effect.gen(function*() {
    const done = yield* decided(Txn.transition(txn, "succeeded", at, { provider_transaction_id: providerTransactionId, pending_call: null }))
    yield* saveTxn(done.next)
    const succeeded = yield* decided(OrderAggregate.transition(order, "transfer_paid", at, { payment_instrument: transfer.payment_instrument }))
    yield* saveOrder(succeeded.next)
    const moved = yield* decided(transferTransition(transfer, "paid", at))
    yield* saveTransfer(moved, succeeded.next)
    return { order: succeeded.next, transfer: moved.next }
  })

/** The order and the transfer fail with `decline_code` (`transfer.failed`); the caller saved the transaction. */
const fail = (order: Order, transfer: Transfer, trigger: "refused" | "retry_lapsed", decline_code: string | null, at: string) =>
  Effect.gen(function*() {
    const orderFailed = yield* decided(OrderAggregate.transition(order, "transfer_refused", at, { retry_until: null }))
    yield* saveOrder(orderFailed.next)
    const moved = yield* decided(transferTransition(transfer, trigger, at, { decline_code, next_action: null }))
    yield* saveTransfer(moved, orderFailed.next)
    return { order: orderFailed.next, transfer: moved.next }
  })

/** Refused, or never received (reconciliation): nothing moved; the transaction, the order and the transfer fail. */
const refused = (order: Order, txn: Transaction, transfer: Transfer, answer: { readonly decline_code: string } | "unavailable", at: string) =>
  Effect.gen(function*() {
    const failed = yield* refusedCall(txn, answer, at)
    yield* saveTxn(failed)
    return yield* fail(order, transfer, "refused", failed.decline_code, at)
  })

/**
 * The caller's own call found no provider reachable (nothing applied anywhere): its transaction
 * fails `provider_unavailable`, and the transfer awaits the same request again, with no
 * `transfer.failed` (contract.md, Idempotency) — a create's on its order's retry window, an
 * execute's as before it (requires_action: execute may be called again).
 */
const unreachable = (order: Order, txn: Transaction, transfer: Transfer, by: "create" | "execute", at: string) =>
  Effect.gen(function*() {
    yield* saveTxn(yield* refusedCall(txn, "unavailable", at))
    const waiting = yield* decided(by === "create"
      ? OrderAggregate.transition(order, "attempt_unreachable", at, { retry_until: retryUntil(at) })
      : OrderAggregate.transition(order, "merchant_action_required", at))
    yield* saveOrder(waiting.next)
    const moved = yield* decided(transferTransition(transfer, by === "create" ? "create_unreachable" : "execute_unreachable", at))
    yield* saveTransfer(moved, waiting.next)
    return { order: waiting.next, transfer: moved.next }
  })

/**
 * Records the answer to the call with `key`; a no-op answering the current rows when that call was
 * recorded meanwhile (reconciliation raced the caller). `by`: the create or execute whose own call
 * this is, so that "unavailable" (no provider reachable) leaves the transfer awaiting a retry;
 * without it (reconciliation: never received) the transfer fails.
 */
export const recordTransfer = (orderId: string, txnId: string, answer: PayoutResult | "unavailable", key: string, by?: "create" | "execute") =>
  unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(orderId)
    const txn = yield* loadTxn(txnId)
    const transfer = yield* transferOf(orderId)
    if (txn.pending_call?.key !== key) return { order, transfer } satisfies Recorded
    const at = yield* nowIso
    if (answer === "unavailable" && by !== undefined) return yield* unreachable(order, txn, transfer, by, at)
    if (answer === "unavailable" || answer._tag === "Refused") return yield* refused(order, txn, transfer, answer, at)
    if (answer._tag === "Paid") return yield* paid(order, txn, transfer, answer.provider_transaction_id, at)
    // Pending: accepted, paid later (the settlement worker asks the provider by this id).
    yield* saveTxn(yield* queuedCall(txn, answer.provider_transaction_id, at))
    return { order, transfer }
  }))

/** The settlement worker: a transfer the provider accepted for later is paid once it says it settled. */
export const settleTransfer = (candidate: Transaction) =>
  whenSettled(candidate, (order, txn, at, outcome) =>
    Effect.gen(function*() {
      if (txn.provider_transaction_id === null) return false
      const transfer = yield* transferOf(order.id)
      if (outcome === "failed") yield* refused(order, txn, transfer, { decline_code: "transfer_failed" }, at)
      else yield* paid(order, txn, transfer, txn.provider_transaction_id, at)
      return true
    }))

/**
 * The window-expiry worker, in its unit of work under the order's row lock: a transfer whose create
 * answered 502 and that nobody retried within the window fails (`transfer.failed`, with its last
 * attempt's `provider_unavailable`).
 */
export const lapseTransfer = (order: Order, at: string) =>
  Effect.gen(function*() {
    const transfer = yield* transferOf(order.id)
    const last = yield* loadTxn(transfer.transaction_id)
    yield* fail(order, transfer, "retry_lapsed", last.decline_code, at)
  })
