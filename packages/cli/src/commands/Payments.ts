/**
 * `tender payments get|capture|void ORDER_ID`: the operator's hold on payments of any account (for
 * support and back-office captures), declared; handlers/Payments.ts runs them.
 */
import { Argument, Command, Flag } from "effect/cli"
import { commandsOf } from "../Cli.ts"

const orderId = Argument.String("order-id").pipe(Argument.withDescription("Order id (ord_…)"))
const paymentsCommand = commandsOf(() => import("../handlers/Payments.ts"))

const get = paymentsCommand("get", { orderId }, (h) => h.get).pipe(Command.withDescription("Show a payment's order, whatever its account"))

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
  (h) => h.capture
).pipe(Command.withDescription("Capture a manual-capture authorization"))

const voidPayment = paymentsCommand("void", { orderId }, (h) => h.voidPayment)
  .pipe(Command.withDescription("Release what remains of an authorization"))

export const payments = Command.make("payments").pipe(
  Command.withSubcommands([get, capture, voidPayment]),
  Command.withDescription("Operate on payments of any account: get, capture, void")
)
