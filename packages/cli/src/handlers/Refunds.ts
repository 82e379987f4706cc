/**
 * The handlers of `tender refunds …` and `tender payouts …` (commands/Refunds.ts declares them). The
 * Outflows use case decides exactly as for the API.
 */
import { Outflows, type OutflowViews } from "@tender/domain"
import { Option } from "effect"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const handler = Services.useCase(Outflows)

interface Id {
  readonly id: string
}

/** The rows refunds and payouts share, then each one's own. */
const rows = (v: OutflowViews.RefundView | OutflowViews.PayoutView, own: ReadonlyArray<readonly [string, string]>) =>
  Table.fields([
    ["id", v.id],
    ["status", v.status],
    ["amount", `${v.amount} ${v.currency}`],
    ["order", v.order_id],
    ["transaction", v.transaction_id],
    ["original", v.original_transaction_id],
    ...own,
    ...(v.decline_code !== undefined ? [["decline code", v.decline_code] as const] : []),
    ["created", v.created_at]
  ])

const refundPresentation: Output.Presentation<OutflowViews.RefundView> = {
  json: (r) => r,
  text: (r) => rows(r, [["reference", r.refund_reference ?? "—"], ["reason", r.reason ?? "—"]])
}

const payoutPresentation: Output.Presentation<OutflowViews.PayoutView> = {
  json: (p) => p,
  text: (p) =>
    rows(p, [
      ["reference", p.payout_reference ?? "—"],
      ["instrument", [p.payment_instrument.type, p.payment_instrument.card_brand, p.payment_instrument.last4_digits].filter(Boolean).join(" ")]
    ])
}

interface RefundInput {
  readonly orderId: string
  readonly transaction: Option.Option<string>
  readonly amount: Option.Option<string>
}

export const create = handler(
  (outflows, { amount, orderId, transaction }: RefundInput) =>
    outflows.operator.refund(orderId, { transaction_id: Option.getOrUndefined(transaction), amount: Option.getOrUndefined(amount) }),
  () => refundPresentation
)

export const getRefund = handler((outflows, { id }: Id) => outflows.operator.getRefund(id), () => refundPresentation)

export const getPayout = handler((outflows, { id }: Id) => outflows.operator.getPayout(id), () => payoutPresentation)
