/**
 * The money-out reads: a refund, a payout or a transfer by id, in the account (or any account's, for
 * the operator: undefined), as its view; 404 with the record's own code when there is none.
 */
import { Effect, Option } from "effect"
import { NotFound, PayoutNotFound, TransferNotFound } from "../../kernel/Errors.ts"
import { OrderRepo } from "../../payments/PaymentPorts.ts"
import { PayoutRepo, RefundRepo } from "../OutflowPorts.ts"
import { payoutView, refundView } from "../OutflowViews.ts"
import { TransferRepo } from "../TransferPorts.ts"
import { transferView } from "../TransferViews.ts"

export const getRefund = (accountId: string | undefined, id: string) =>
  Effect.gen(function*() {
    const refunds = yield* RefundRepo
    const found = yield* (accountId === undefined ? refunds.findAny(id) : refunds.find(accountId, id))
    if (Option.isNone(found)) return yield* new NotFound({ message: `No refund ${id}` })
    return refundView(found.value)
  })

export const getPayout = (accountId: string | undefined, id: string) =>
  Effect.gen(function*() {
    const payouts = yield* PayoutRepo
    const found = yield* (accountId === undefined ? payouts.findAny(id) : payouts.find(accountId, id))
    if (Option.isNone(found)) return yield* new PayoutNotFound({ message: `No payout ${id}` })
    return payoutView(found.value)
  })

/** A transfer is shown with its order (amounts, status). */
export const getTransfer = (accountId: string | undefined, id: string) =>
  Effect.gen(function*() {
    const transfers = yield* TransferRepo
    const found = yield* (accountId === undefined ? transfers.findAny(id) : transfers.find(accountId, id))
    if (Option.isNone(found)) return yield* new TransferNotFound({ message: `No transfer ${id}` })
    const order = Option.getOrThrow(yield* (yield* OrderRepo).findAny(found.value.order_id))
    return transferView(found.value, order)
  })
