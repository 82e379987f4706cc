/**
 * The handlers of `tender payments …` (commands/Payments.ts declares them). The Payments use case
 * decides exactly as for the API; `get` adds what support asks first of a routed payment: where each
 * of its tries went and why (each transaction's `routing`).
 */
import { type Payment, Payments, type PaymentViews, TransactionRepo } from "@tender/domain"
import { Effect, type Option } from "effect"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const handler = Services.useCase(Payments)

interface OrderId {
  readonly orderId: string
}

type Routed = { readonly transaction_id: string } & NonNullable<Payment.Transaction["routing"]>

/** The order, and the routing of each of its transactions that was routed (null on follow-ups and the sandbox), in order. */
type OrderRouting = PaymentViews.OrderView & { readonly routing: ReadonlyArray<Routed> }

/** One line per try: `ch_… (success_rate; rule eu v3; try 1 of candidates ch_a, ch_b)`. */
const routingText = (r: Routed) =>
  `${r.transaction_id}: ${r.channel} (${r.reason}; ${r.rule === null ? "no rule" : `rule ${r.rule}`} v${r.version}; try ${r.attempt}; candidates ${r.candidates.join(", ")})`

const orderPresentation: Output.Presentation<OrderRouting> = {
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
      ...o.routing.map((r) => ["routing", routingText(r)] as const),
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

export const get = handler(
  (payments, { orderId }: OrderId) =>
    Effect.gen(function*() {
      const order = yield* payments.operator.get(orderId)
      const transactions = yield* (yield* TransactionRepo).listByOrder(order.id)
      const routing = transactions.flatMap((t) => t.routing === null ? [] : [{ transaction_id: t.id, ...t.routing }])
      return { ...order, routing }
    }),
  () => orderPresentation
)

export const capture = handler(
  (payments, { amount, final, orderId }: OrderId & { readonly amount: Option.Option<string>; readonly final: boolean }) =>
    payments.operator.capture(orderId, amount._tag === "Some" ? amount.value : undefined, final),
  () => snapshotPresentation
)

export const voidPayment = handler((payments, { orderId }: OrderId) => payments.operator.void(orderId), () => snapshotPresentation)
