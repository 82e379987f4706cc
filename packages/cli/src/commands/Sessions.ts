/**
 * `tender sessions get|list|cancel`: the operator's hold on hosted checkout sessions (support: "what
 * happened to this customer's checkout?"), declared; handlers/Sessions.ts runs them.
 */
import { Argument, Command, Flag } from "effect/cli"
import { commandsOf } from "../Cli.ts"

const sessionId = Argument.String("session-id").pipe(Argument.withDescription("Checkout session id (cs_…)"))
const sessionsCommand = commandsOf(() => import("../handlers/Sessions.ts"))

const get = sessionsCommand("get", { sessionId }, (h) => h.get).pipe(Command.withDescription("Show a checkout session, whatever its account"))

const list = sessionsCommand(
  "list",
  {
    account: Flag.String("account").pipe(Flag.withDescription("The account (acct_…) whose sessions to list")),
    status: Flag.Literals("status", ["open", "pending_action", "completed", "failed", "expired", "canceled"]).pipe(Flag.optional),
    limit: Flag.Int("limit").pipe(Flag.withDefault(20))
  },
  (h) => h.list
).pipe(Command.withDescription("List an account's checkout sessions, newest first"))

const cancel = sessionsCommand("cancel", { sessionId }, (h) => h.cancel)
  .pipe(Command.withDescription("Cancel an open or pending_action session (a final one is refused)"))

export const sessions = Command.make("sessions").pipe(
  Command.withSubcommands([get, list, cancel]),
  Command.withDescription("Operate on hosted checkout sessions of any account: get, list, cancel")
)
