/**
 * The record step of a transfer's provider call (a `payout` call on its kind `transfer`
 * transaction): what the provider answered, applied to the transaction, the order and the transfer
 * record in one unit of work under the order's row lock, with the transfer's events. Create,
 * execute, reconciliation and the settlement worker all record through here.
 */
import { Effect, Option } from "effect"
import * as OrderAggregate from "../OrderStatus.ts"
import { type Transfer, transferTransition } from "../MoneyOut.ts"
import type { Order, Transaction } from "../Payment.ts"
import type { PayoutResult } from "../PaymentPorts.ts"
import type { Moved } from "../StateMachine.ts"
import { TransferRepo } from "../TransferPorts.ts"
import { transferEventData } from "../TransferViews.ts"
import * as Txn from "../TransactionStatus.ts"
import { whenSettled } from "./Settlement.ts"
import { decided, loadTxn, lockOrder, nowIso, recordEvents, saveOrder, saveTxn, unitOfWork } from "./Kit.ts"
import { queuedCall, refusedCall } from "./ProviderStep.ts"

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

/** Refused or unreachable: nothing moved; the transaction, the order and the transfer fail. */
const refused = (order: Order, txn: Transaction, transfer: Transfer, answer: { readonly decline_code: string } | "unavailable", at: string) =>
  Effect.gen(function*() {
    const failed = yield* refusedCall(txn, answer, at)
    yield* saveTxn(failed)
    const orderFailed = yield* decided(OrderAggregate.transition(order, "transfer_refused", at))
    yield* saveOrder(orderFailed.next)
    const moved = yield* decided(transferTransition(transfer, "refused", at, { decline_code: failed.decline_code, next_action: null }))
    yield* saveTransfer(moved, orderFailed.next)
    return { order: orderFailed.next, transfer: moved.next }
  })

/**
 * Records the answer to the call with `key`; a no-op answering the current rows when that call was
 * recorded meanwhile (reconciliation raced the caller).
 */
export const recordTransfer = (orderId: string, txnId: string, answer: PayoutResult | "unavailable", key: string) =>
  unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(orderId)
    const txn = yield* loadTxn(txnId)
    const transfer = yield* transferOf(orderId)
    if (txn.pending_call?.key !== key) return { order, transfer } satisfies Recorded
    const at = yield* nowIso
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
