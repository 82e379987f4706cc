/**
 * Operations on an attempt's asynchronous outcome: the provider reports a redirect, QR, voucher or
 * bank-transfer payment paid, failed, canceled or expired (hosted sandbox pages, and later real
 * providers' notifications), or a crypto payment's amount received.
 */
import { Effect, Option } from "effect"
import { PaymentUnexpectedState, TransactionNotFound } from "../../kernel/Errors.ts"
import type { Transaction } from "../Payment.ts"
import { TransactionRepo } from "../PaymentPorts.ts"
import * as Txn from "../Transaction.ts"
import { guarded, refuseInactive } from "./Load.ts"
import { type AttemptOutcome, record } from "./RecordAttempt.ts"

/** What a local-method provider's page may report for an attempt. */
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
  // Paying collects money; failing, canceling or letting it expire does not.
  if (outcome === "succeed") yield* refuseInactive(found.value.account_id)
  const done = yield* applyOutcome(found.value.order_id, transactionId, outcome)
  return { return_url: done.status === "succeeded" ? done.success_url : done.cancel_url }
})
