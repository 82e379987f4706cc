/**
 * The API's views of refunds and payouts (contract.md, "Other endpoints"), and their event payloads:
 * the view at emission time plus the order's merchant_reference. Amounts leave in major units.
 */
import type { Payout, Refund } from "./MoneyOut.ts"
import type * as Views from "@tender/api/Views"
import type { Order } from "../payments/Payment.ts"
import { major } from "../payments/PaymentViews.ts"

// The views are the API's (@tender/api/Views); what refunds and payouts share is built once here.
type OutflowViewBase = Omit<RefundView, "reason" | "refund_reference">

/** A refund as the API shows it (@tender/api/Views). */
export type RefundView = typeof Views.RefundView.Type

/** A payout as the API shows it (@tender/api/Views). */
export type PayoutView = typeof Views.PayoutView.Type

const base = (r: Refund | Payout): OutflowViewBase => ({
  id: r.id,
  transaction_id: r.transaction_id,
  order_id: r.order_id,
  original_transaction_id: r.original_transaction_id,
  amount: major(r.amount, r.currency),
  currency: r.currency,
  status: r.status,
  ...(r.decline_code !== null ? { decline_code: r.decline_code } : {}),
  ...(r.processing_profile !== null ? { processing_profile: r.processing_profile } : {}),
  created_at: r.created_at,
  updated_at: r.updated_at
})

/** A stored refund as the API shows it. */
export const refundView = (r: Refund): RefundView => ({
  ...base(r),
  ...(r.reason !== null ? { reason: r.reason } : {}),
  ...(r.refund_reference !== null ? { refund_reference: r.refund_reference } : {})
})

/** A stored payout as the API shows it. */
export const payoutView = (p: Payout): PayoutView => ({
  ...base(p),
  payment_instrument: p.payment_instrument,
  ...(p.payout_reference !== null ? { payout_reference: p.payout_reference } : {})
})

/** An event's `data`: the record's view and the reference of the order it belongs to. */
export const outflowEventData = (order: Order, view: RefundView | PayoutView): Record<string, unknown> => ({
  ...view,
  merchant_reference: order.merchant_reference
})
