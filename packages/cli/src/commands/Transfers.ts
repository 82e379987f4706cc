/** `tender transfers get ID`: the operator's read of a transfer of any account; handlers/Transfers.ts runs it. */
import { Argument, Command } from "effect/cli"
import { commandsOf } from "../Cli.ts"

const transferId = Argument.String("transfer-id").pipe(Argument.withDescription("Transfer id (tr_…)"))

const get = commandsOf(() => import("../handlers/Transfers.ts"))("get", { transferId }, (h) => h.get)
  .pipe(Command.withDescription("Show a transfer, whatever its account"))

export const transfers = Command.make("transfers").pipe(
  Command.withSubcommands([get]),
  Command.withDescription("Operate on transfers of any account: get")
)
