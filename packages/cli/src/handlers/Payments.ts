/**
 * The handlers of `tender payments …` (commands/Payments.ts declares them). The Payments use case
 * decides exactly as for the API.
 */
import { Payments, type PaymentViews } from "@tender/domain"
import type { Option } from "effect"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const handler = Services.useCase(Payments)

interface OrderId {
  readonly orderId: string
}

const orderPresentation: Output.Presentation<PaymentViews.OrderView> = {
  json: (o) => o,
  text: (o) =>
    Table.fields([
      ["order", o.id],
      ["reference", o.merchant_reference],
      ["status", o.status],
      ["amount", `${o.amount} ${o.currency}`],
      ["method", `${o.payment_method} (${o.capture_method} capture)`],
      ...(o.captured_amount !== undefined ? [["captured", `${o.captured_amount} ${o.currency}`] as const] : []),
      ...(o.refunded_amount !== undefined ? [["refunded", `${o.refunded_amount} ${o.currency}`] as const] : []),
      ["profile", o.processing_profile ?? "—"],
      ["mode", o.livemode ? "live" : "test"],
      ["transactions", o.transactions.join(", ")],
      ["created", o.created_at]
    ])
}

const snapshotPresentation: Output.Presentation<PaymentViews.PaymentSnapshot> = {
  json: (p) => p,
  text: (p) =>
    Table.fields([
      ["order", p.order_id],
      ["transaction", p.transaction_id],
      ["status", p.status],
      ["amount", `${p.amount} ${p.currency}`],
      ...(p.captured_amount !== undefined ? [["captured", `${p.captured_amount} ${p.currency}`] as const] : []),
      ...(p.voided_amount !== undefined ? [["voided", `${p.voided_amount} ${p.currency}`] as const] : []),
      ["provider id", p.provider_transaction_id ?? "—"]
    ])
}

export const get = handler((payments, { orderId }: OrderId) => payments.operator.get(orderId), () => orderPresentation)

export const capture = handler(
  (payments, { amount, final, orderId }: OrderId & { readonly amount: Option.Option<string>; readonly final: boolean }) =>
    payments.operator.capture(orderId, amount._tag === "Some" ? amount.value : undefined, final),
  () => snapshotPresentation
)

export const voidPayment = handler((payments, { orderId }: OrderId) => payments.operator.void(orderId), () => snapshotPresentation)
