/** `tender transfers get ID`: the operator's read of a transfer of any account. */
import { Transfers, type TransferView } from "@tender/domain"
import { Argument, Command } from "effect/cli"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const transferId = Argument.String("transfer-id").pipe(Argument.withDescription("Transfer id (tr_…)"))

const presentation: Output.Presentation<TransferView> = {
  json: (t) => t,
  text: (t) =>
    Table.fields([
      ["transfer", t.id],
      ["order", t.order_id],
      ["reference", t.merchant_reference],
      ["status", t.status],
      ["amount", `${t.amount} ${t.currency}`],
      ["destination", `${t.payment_method} (${t.payment_instrument.type}, ${t.payment_instrument.country_code ?? "—"})`],
      ...(t.decline_code !== undefined ? [["decline code", t.decline_code] as const] : []),
      ["profile", t.processing_profile ?? "—"],
      ["created", t.created_at]
    ])
}

const get = Services.useCaseCommand(Transfers)(
  "get",
  { transferId },
  (transfers, { transferId }) => transfers.operator.get(transferId),
  () => presentation
).pipe(Command.withDescription("Show a transfer, whatever its account"))

export const transfers = Command.make("transfers").pipe(
  Command.withSubcommands([get]),
  Command.withDescription("Operate on transfers of any account: get")
)
