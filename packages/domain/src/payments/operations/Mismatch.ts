/**
 * Operation: the merchant decides a crypto amount mismatch (POST /v1/orders/{id}/amount_mismatch_decision):
 * accept settles the order, decline sends the funds back (`returned`). The same decision again is
 * safe; the opposite one conflicts.
 */
import { Effect, Option } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { AmountMismatchDecisionConflict, AmountMismatchDecisionInvalid, OrderNotFound, PaymentUnexpectedState } from "../../kernel/Errors.ts"
import * as OrderAggregate from "../Order.ts"
import type { Order } from "../Payment.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"
import * as Txn from "../Transaction.ts"
import { nowIso } from "../../kernel/Time.ts"
import { latestAttempt } from "../Transaction.ts"
import { guarded, lockOrder } from "./Load.ts"
import { decided, emit, saveOrder, saveTxn, unitOfWork } from "./Persist.ts"
import { viewOrder } from "./Snapshot.ts"

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
