/**
 * `tender refunds create|get` and `tender payouts get`: the operator's hold on money back out, for
 * any account (contract.md, Operator set-up), declared; handlers/Refunds.ts runs them.
 */
import { Argument, Command, Flag } from "effect/cli"
import { commandsOf } from "../Cli.ts"

const outflowsCommand = commandsOf(() => import("../handlers/Refunds.ts"))

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
  (h) => h.create
).pipe(Command.withDescription("Refund a payment's settlement, whatever its account"))

const getRefund = outflowsCommand(
  "get",
  { id: Argument.String("refund-id").pipe(Argument.withDescription("Refund id (re_…)")) },
  (h) => h.getRefund
).pipe(Command.withDescription("Show a refund, whatever its account"))

const getPayout = outflowsCommand(
  "get",
  { id: Argument.String("payout-id").pipe(Argument.withDescription("Payout id (po_…)")) },
  (h) => h.getPayout
).pipe(Command.withDescription("Show a payout, whatever its account"))

export const refunds = Command.make("refunds").pipe(
  Command.withSubcommands([create, getRefund]),
  Command.withDescription("Operate on refunds of any account: create, get")
)

export const payouts = Command.make("payouts").pipe(
  Command.withSubcommands([getPayout]),
  Command.withDescription("Read payouts of any account: get")
)
