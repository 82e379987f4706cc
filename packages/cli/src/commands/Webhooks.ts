/**
 * `tender webhooks deliveries list|retry` and `tender webhooks events list|show`: the operator's
 * view of the outbox across accounts (for support: "did my webhook go out?") and the lever to send
 * failed deliveries again once a merchant's endpoint is back, declared; handlers/Webhooks.ts runs them.
 */
import { Argument, Command, Flag } from "effect/cli"
import { commandsOf } from "../Cli.ts"
import { DELIVERY_STATUSES } from "../Vocabulary.ts"

const webhooksCommand = commandsOf(() => import("../handlers/Webhooks.ts"))

const account = Flag.String("account").pipe(Flag.withDescription("Only this account (acct_…)"), Flag.optional)
const since = Flag.String("since").pipe(Flag.withDescription("Only those created at or after this ISO 8601 time"), Flag.optional)
const limit = Flag.Int("limit").pipe(Flag.withDescription("Page size, 1–100 (default 20)"), Flag.optional)
const cursor = Flag.String("cursor").pipe(Flag.withDescription("Continue after a page: its next_cursor"), Flag.optional)

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

const listEvents = webhooksCommand(
  "list",
  {
    account,
    type: Flag.String("type").pipe(Flag.withDescription("Only events of this type (payment.succeeded, …)"), Flag.optional),
    since,
    limit,
    cursor
  },
  (h) => h.listEvents
).pipe(Command.withDescription("List recorded events of every account, newest first"))

const showEvent = webhooksCommand(
  "show",
  { id: Argument.String("id").pipe(Argument.withDescription("Event id (evt_…)")) },
  (h) => h.showEvent
).pipe(Command.withDescription("Show an event's envelope and its deliveries"))

const events = Command.make("events").pipe(
  Command.withDescription("Recorded events of any account: list, show"),
  Command.withSubcommands([listEvents, showEvent])
)

export const webhooks = Command.make("webhooks").pipe(
  Command.withDescription("Operate on webhook events and deliveries of any account"),
  Command.withSubcommands([deliveries, events])
)
