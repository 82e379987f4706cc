/**
 * `tender webhooks deliveries list|retry`: the operator's view of the deliveries across accounts
 * (for support: "did my webhook go out?") and the lever to send failed deliveries again once a
 * merchant's endpoint is back, declared; handlers/Webhooks.ts runs them. The events: commands/Events.ts.
 */
import { Argument, Command, Flag } from "effect/cli"
import { commandsOf } from "../Cli.ts"
import { DELIVERY_STATUSES } from "../Vocabulary.ts"

const webhooksCommand = commandsOf(() => import("../handlers/Webhooks.ts"))

export const account = Flag.String("account").pipe(Flag.withDescription("Only this account (acct_…)"), Flag.optional)
export const since = Flag.String("since").pipe(Flag.withDescription("Only those created at or after this ISO 8601 time"), Flag.optional)
export const limit = Flag.Int("limit").pipe(Flag.withDescription("Page size, 1–100 (default 20)"), Flag.optional)
export const cursor = Flag.String("cursor").pipe(Flag.withDescription("Continue after a page: its next_cursor"), Flag.optional)

const listDeliveries = webhooksCommand(
  "list",
  {
    account,
    status: Flag.Literals("status", DELIVERY_STATUSES).pipe(Flag.withDescription("Only deliveries in this status"), Flag.optional),
    since,
    limit,
    cursor
  },
  (h) => h.listDeliveries
).pipe(Command.withDescription("List webhook deliveries of every account, newest first"))

const retry = webhooksCommand(
  "retry",
  {
    ids: Argument.String("id").pipe(Argument.withDescription("Delivery ids (wd_…)"), Argument.variadic()),
    allFailed: Flag.Boolean("all-failed").pipe(
      Flag.withDescription("Retry every failed and exhausted delivery (of --account, created since --since)"),
      Flag.withDefault(false)
    ),
    since,
    account
  },
  (h) => h.retry
).pipe(Command.withDescription("Send failed or exhausted deliveries again now (by id, or --all-failed)"))

const deliveries = Command.make("deliveries").pipe(
  Command.withDescription("Webhook deliveries of any account: list, retry"),
  Command.withSubcommands([listDeliveries, retry])
)

export const webhooks = Command.make("webhooks").pipe(
  Command.withDescription("Operate on webhook deliveries of any account (the events themselves: tender events)"),
  Command.withSubcommands([deliveries])
)
