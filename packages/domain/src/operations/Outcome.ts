/**
 * Operations on an attempt's asynchronous outcome: the provider reports a redirect, QR, voucher or
 * bank-transfer payment paid, failed, canceled or expired (hosted sandbox pages, and later real
 * providers' notifications); the merchant decides a crypto amount mismatch.
 */
import { Effect, Option } from "effect"
import type { Account } from "../Account.ts"
import {
  AmountMismatchDecisionConflict,
  AmountMismatchDecisionInvalid,
  OrderNotFound,
  PaymentUnexpectedState,
  TransactionNotFound
} from "../Errors.ts"
import * as OrderAggregate from "../OrderStatus.ts"
import type { Order, Transaction } from "../Payment.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"
import * as Txn from "../TransactionStatus.ts"
import { decided, emit, guarded, latestAttempt, lockOrder, nowIso, saveOrder, saveTxn, unitOfWork, viewOrder } from "./Kit.ts"
import { type AttemptOutcome, record } from "./RecordAttempt.ts"

export type ProviderOutcome = "succeed" | "fail" | "cancel" | "expire"

const outcomeOf = (txn: Transaction, outcome: ProviderOutcome): AttemptOutcome => {
  switch (outcome) {
    case "succeed":
      return { _tag: "Approved", provider_transaction_id: txn.provider_transaction_id, multicapture: false }
    case "fail":
      return { _tag: "Declined", decline_code: "payment_declined", provider_transaction_id: txn.provider_transaction_id }
    case "cancel":
      return { _tag: "Closed", how: "canceled" }
    case "expire":
      return { _tag: "Closed", how: "expired" }
  }
}

/** An outcome (or an amount received) on a local-method attempt awaiting its provider. */
export const applyOutcome = (orderId: string, txnId: string, outcome: ProviderOutcome, received?: number) =>
  guarded(orderId, Effect.gen(function*() {
    const txn = yield* Effect.map((yield* TransactionRepo).findAny(txnId), Option.getOrThrow)
    if (!Txn.isInFlight(txn.status) || txn.payment_method === "card" || txn.pending_call !== null) {
      return yield* new PaymentUnexpectedState({ message: `Transaction ${txnId} is ${txn.status}; it awaits no provider outcome` })
    }
    const recorded = yield* record(orderId, txnId, received !== undefined ? { _tag: "Mismatch", received } : outcomeOf(txn, outcome))
    return recorded.order
  }))

/** The provider's page reports an outcome; returns where to send the customer. */
export const providerOutcome = Effect.fn("Payments.providerOutcome")(function*(transactionId: string, outcome: ProviderOutcome) {
  const found = yield* (yield* TransactionRepo).findAny(transactionId)
  if (Option.isNone(found)) return yield* new TransactionNotFound({ message: `No transaction ${transactionId}` })
  const done = yield* applyOutcome(found.value.order_id, transactionId, outcome)
  return { return_url: done.status === "succeeded" ? done.success_url : done.cancel_url }
})

export const decideAmountMismatch = Effect.fn("Payments.decideAmountMismatch")(function*(
  account: Account,
  orderId: string,
  input: { readonly decision: "accept" | "decline"; readonly refund_destination?: { readonly address?: string | undefined } | undefined }
) {
  const found = yield* (yield* OrderRepo).find(account.id, orderId)
  if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${orderId}` })
  if (input.decision === "decline" && !input.refund_destination?.address) {
    return yield* new AmountMismatchDecisionInvalid({ message: "A decline needs refund_destination.address to send the funds back to" })
  }
  const decidedOrder: Order = yield* guarded(orderId, unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(orderId)
    // A decision already taken: the same one again is safe, the opposite one conflicts.
    if (order.received_amount !== null && (order.status === "succeeded" || order.status === "returned")) {
      if ((order.status === "succeeded") === (input.decision === "accept")) return order
      return yield* new AmountMismatchDecisionConflict({ message: `The opposite decision was already taken: the order is ${order.status}` })
    }
    if (order.status !== "processing" || order.received_amount === null) {
      return yield* new PaymentUnexpectedState({ message: `Order ${order.id} has no amount mismatch awaiting a decision` })
    }
    const attempt = latestAttempt(yield* (yield* TransactionRepo).listByOrder(order.id))!
    const at = yield* nowIso
    const accept = input.decision === "accept"
    const txn = yield* decided(Txn.transition(attempt, Txn.viaSent(attempt, accept ? "succeeded" : "returned"), at))
    const next = yield* decided(OrderAggregate.transition(order, accept ? "mismatch_accepted" : "mismatch_returned", at))
    yield* saveOrder(next.next)
    yield* saveTxn(txn.next)
    yield* emit(next.events, next.next, txn.next, { received: order.received_amount })
    return next.next
  })))
  return yield* viewOrder(decidedOrder)
})
