/**
 * `tender sessions get|list|cancel`: the operator's hold on hosted checkout sessions (support: "what
 * happened to this customer's checkout?"). The Sessions use case decides as for the API.
 */
import { Accounts, type CheckoutSession, Sessions } from "@tender/domain"
import { Effect } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const sessionId = Argument.String("session-id").pipe(Argument.withDescription("Checkout session id (cs_…)"))
const sessionsCommand = Services.useCaseCommand(Sessions)

const one: Output.Presentation<CheckoutSession.SessionView> = {
  json: (s) => s,
  text: (s) =>
    Table.fields([
      ["session", s.id],
      ["status", s.status],
      ["reference", s.merchant_reference],
      ["amount", `${s.amount} ${s.currency}`],
      ["order", s.order_id],
      ["attempts", `${s.attempts} of ${s.max_payment_attempts}`],
      ["transaction", s.transaction_id ?? "—"],
      ["expires", s.expires_at],
      ["url", s.url]
    ])
}

const get = sessionsCommand("get", { sessionId }, (sessions, { sessionId }) => sessions.operator.get(sessionId), () => one)
  .pipe(Command.withDescription("Show a checkout session, whatever its account"))

const list = sessionsCommand(
  "list",
  {
    account: Flag.String("account").pipe(Flag.withDescription("The account (acct_…) whose sessions to list")),
    status: Flag.Literals("status", ["open", "pending_action", "completed", "failed", "expired", "canceled"]).pipe(Flag.optional),
    limit: Flag.Int("limit").pipe(Flag.withDefault(20))
  },
  (sessions, input) =>
    Effect.flatMap(Accounts.use((accounts) => accounts.get(input.account)), (account) =>
      sessions.search(account, {
        limit: input.limit,
        ...(input.status._tag === "Some" ? { status: [input.status.value] } : {})
      })),
  () => ({
    json: (page) => page,
    text: (page) =>
      Table.table(
        ["session", "status", "reference", "amount", "attempts", "created"],
        page.data.map((s) => [s.id, s.status, s.merchant_reference, `${s.amount} ${s.currency}`, `${s.attempts}/${s.max_payment_attempts}`, s.created_at])
      )
  })
).pipe(Command.withDescription("List an account's checkout sessions, newest first"))

const cancel = sessionsCommand("cancel", { sessionId }, (sessions, { sessionId }) => sessions.operator.cancel(sessionId), () => one)
  .pipe(Command.withDescription("Cancel an open or pending_action session (a final one is refused)"))

export const sessions = Command.make("sessions").pipe(
  Command.withSubcommands([get, list, cancel]),
  Command.withDescription("Operate on hosted checkout sessions of any account: get, list, cancel")
)
