/**
 * `tender payments get|capture|void ORDER_ID`: the operator's hold on payments of any account (for
 * support and back-office captures). The Payments use case decides exactly as for the API.
 */
import { Payments, type PaymentViews } from "@tender/domain"
import { Argument, Command, Flag } from "effect/cli"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const orderId = Argument.String("order-id").pipe(Argument.withDescription("Order id (ord_…)"))
const paymentsCommand = Services.useCaseCommand(Payments)

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

const get = paymentsCommand(
  "get",
  { orderId },
  (payments, { orderId }) => payments.operator.get(orderId),
  () => orderPresentation
).pipe(Command.withDescription("Show a payment's order, whatever its account"))

const capture = paymentsCommand(
  "capture",
  {
    orderId,
    amount: Flag.String("amount").pipe(Flag.withDescription("Decimal amount; omitted captures the whole remainder"), Flag.optional),
    final: Flag.Boolean("final").pipe(
      Flag.withDescription("true (default) closes the authorization; false keeps the remainder capturable"),
      Flag.withDefault(true)
    )
  },
  (payments, { amount, final, orderId }) =>
    payments.operator.capture(orderId, amount._tag === "Some" ? amount.value : undefined, final),
  () => snapshotPresentation
).pipe(Command.withDescription("Capture a manual-capture authorization"))

const voidPayment = paymentsCommand(
  "void",
  { orderId },
  (payments, { orderId }) => payments.operator.void(orderId),
  () => snapshotPresentation
).pipe(Command.withDescription("Release what remains of an authorization"))

export const payments = Command.make("payments").pipe(
  Command.withSubcommands([get, capture, voidPayment]),
  Command.withDescription("Operate on payments of any account: get, capture, void")
)
