/**
 * The API's view of a transfer (contract.md, Transfers), from its record and its order: amounts
 * leave as JSON numbers in major units; `next_action` only while the card awaits collection;
 * `decline_code` once it failed. The destination never carries a card token or expiry (the record
 * holds none).
 */
import type { Transfer } from "./MoneyOut.ts"
import type * as Views from "@tender/api/Views"
import type { Order } from "../payments/Payment.ts"
import { major } from "../payments/PaymentViews.ts"

/** The view is the API's (@tender/api/Views). */
export type TransferView = typeof Views.TransferView.Type

/** A stored transfer, with its order, as the API shows it. */
export const transferView = (transfer: Transfer, order: Order): TransferView => ({
  id: transfer.id,
  order_id: transfer.order_id,
  transaction_id: transfer.transaction_id,
  merchant_reference: order.merchant_reference,
  status: transfer.status,
  amount: major(transfer.amount, transfer.currency),
  currency: transfer.currency,
  country: order.country,
  payment_method: transfer.payment_method,
  payment_instrument: transfer.payment_instrument,
  next_action: transfer.status === "requires_action" ? transfer.next_action : null,
  ...(transfer.status === "failed" && transfer.decline_code !== null ? { decline_code: transfer.decline_code } : {}),
  ...(transfer.channel_id !== null ? { channel_id: transfer.channel_id } : {}),
  ...(transfer.processing_profile !== null ? { processing_profile: transfer.processing_profile } : {}),
  created_at: transfer.created_at,
  updated_at: transfer.updated_at
})

/** An event's `data`: the view, plus the mode and profile (contract.md, Webhook endpoints). */
export const transferEventData = (transfer: Transfer, order: Order): Record<string, unknown> => ({
  ...transferView(transfer, order),
  livemode: transfer.livemode,
  processing_profile: transfer.processing_profile
})
