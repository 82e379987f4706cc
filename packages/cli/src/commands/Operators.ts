/**
 * `tender operators …` and `tender audit list`: the operator console's people (issue 26) and the log
 * of what they did, declared; handlers/Operators.ts runs them. `add` and `reinvite` print a one-time
 * enrolment link; nothing prints a password hash, TOTP secret or token hash.
 */
import { Argument, Command, Flag } from "effect/cli"
import { commandsOf } from "../Cli.ts"
import { OPERATOR_ROLES } from "../Vocabulary.ts"
import { account, cursor, limit } from "./Webhooks.ts"

const operatorsCommand = commandsOf(() => import("../handlers/Operators.ts"))

const name = Argument.String("name").pipe(Argument.withDescription("Login name: 1–64 of a-z 0-9 . _ @ -"))
const role = Flag.Literals("role", OPERATOR_ROLES).pipe(
  Flag.withDescription("viewer (reads), operator (also capture, void, refund, redeliver) or admin (also endpoints and accounts)")
)
const accounts = Flag.String("accounts").pipe(
  Flag.withDescription("The accounts they see: all, or acct_1,acct_2 (each must exist)")
)

const add = operatorsCommand(
  "add",
  { name, role, accounts: accounts.pipe(Flag.withDescription("all (the default), or acct_1,acct_2 (each must exist)"), Flag.optional) },
  (h) => h.add
).pipe(Command.withDescription("Invite an operator: prints their one-time enrolment link (valid 24 h)"))

const list = operatorsCommand("list", {}, (h) => h.list).pipe(Command.withDescription("List operators"))

const grant = operatorsCommand("grant", { name, accounts }, (h) => h.grant)
  .pipe(Command.withDescription("Replace the accounts an operator sees"))

const setRole = operatorsCommand("role", { name, role }, (h) => h.setRole).pipe(Command.withDescription("Change an operator's role"))

const disable = operatorsCommand("disable", { name }, (h) => h.disable)
  .pipe(Command.withDescription("Disable an operator: no more logins, and their sessions end now"))

const reinvite = operatorsCommand("reinvite", { name }, (h) => h.reinvite).pipe(
  Command.withDescription("A new enrolment link (lost authenticator or password, or a disabled operator let back in); ends their sessions")
)

export const operators = Command.make("operators").pipe(
  Command.withSubcommands([add, list, grant, setRole, disable, reinvite]),
  Command.withDescription("Manage operator console users: add, list, grant, role, disable, reinvite")
)

const auditList = operatorsCommand(
  "list",
  {
    operator: Flag.String("operator").pipe(Flag.withDescription("Only this operator's actions"), Flag.optional),
    account,
    limit,
    cursor
  },
  (h) => h.auditList
).pipe(Command.withDescription("The console's audit log, newest first"))

export const audit = Command.make("audit").pipe(
  Command.withSubcommands([auditList]),
  Command.withDescription("Read the operator console's audit log: list")
)
