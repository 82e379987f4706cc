/**
 * `tender events list|get|resend`: the operator's view of the event log across accounts, and the
 * lever to send an event again (to one endpoint, or to every endpoint subscribed to it), acting on
 * the database through the Webhooks use case like `tender webhooks deliveries`; declared here,
 * run by handlers/Events.ts.
 */
import { Argument, Command, Flag } from "effect/cli"
import { commandsOf } from "../Cli.ts"
import { account, cursor, limit, since } from "./Webhooks.ts"

const eventsCommand = commandsOf(() => import("../handlers/Events.ts"))

const list = eventsCommand(
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

const eventId = Argument.String("id").pipe(Argument.withDescription("Event id (evt_…)"))

const get = eventsCommand("get", { id: eventId }, (h) => h.getEvent).pipe(
  Command.withDescription("Show an event's envelope and its deliveries")
)

const resend = eventsCommand(
  "resend",
  {
    id: eventId,
    endpoint: Flag.String("endpoint").pipe(
      Flag.withDescription("Only to this endpoint (we_…) of the event's account; default every enabled endpoint subscribed to the event's type"),
      Flag.optional
    )
  },
  (h) => h.resendEvent
).pipe(Command.withDescription("Deliver an event again: a new delivery, due now, attempted on the usual schedule"))

export const events = Command.make("events").pipe(
  Command.withDescription("Recorded events of any account: list, get, resend"),
  Command.withSubcommands([list, get, resend])
)
