/**
 * `tender refunds create|get` and `tender payouts get`: the operator's hold on money back out, for
 * any account (contract.md, Operator set-up). The Outflows use case decides exactly as for the API.
 */
import { Outflows, type OutflowViews } from "@tender/domain"
import { Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const outflowsCommand = Services.useCaseCommand(Outflows)

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

const create = outflowsCommand(
  "create",
  {
    orderId: Argument.String("order-id").pipe(Argument.withDescription("Order id (ord_…) whose settlement to refund")),
    transaction: Flag.String("transaction").pipe(
      Flag.withDescription("The settlement to refund (txn_…), when the order was captured in parts"),
      Flag.optional
    ),
    amount: Flag.String("amount").pipe(Flag.withDescription("Decimal amount; omitted refunds the remaining balance"), Flag.optional)
  },
  (outflows, { amount, orderId, transaction }) =>
    outflows.operator.refund(orderId, { transaction_id: Option.getOrUndefined(transaction), amount: Option.getOrUndefined(amount) }),
  () => refundPresentation
).pipe(Command.withDescription("Refund a payment's settlement, whatever its account"))

const getRefund = outflowsCommand(
  "get",
  { id: Argument.String("refund-id").pipe(Argument.withDescription("Refund id (re_…)")) },
  (outflows, { id }) => outflows.operator.getRefund(id),
  () => refundPresentation
).pipe(Command.withDescription("Show a refund, whatever its account"))

const getPayout = outflowsCommand(
  "get",
  { id: Argument.String("payout-id").pipe(Argument.withDescription("Payout id (po_…)")) },
  (outflows, { id }) => outflows.operator.getPayout(id),
  () => payoutPresentation
).pipe(Command.withDescription("Show a payout, whatever its account"))

export const refunds = Command.make("refunds").pipe(
  Command.withSubcommands([create, getRefund]),
  Command.withDescription("Operate on refunds of any account: create, get")
)

export const payouts = Command.make("payouts").pipe(
  Command.withSubcommands([getPayout]),
  Command.withDescription("Read payouts of any account: get")
)
