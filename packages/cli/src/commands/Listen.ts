/**
 * `tender listen --forward-to URL`: the account's events, live from the server's feed (GET
 * /v1/events), forwarded to a local URL signed as webhooks are, with no endpoint registered (issue
 * 25, after `stripe listen`), declared; handlers/Listen.ts runs it.
 */
import { Command, Flag } from "effect/cli"
import { flags } from "../ApiAccessFlags.ts"
import { commandsOf } from "../Cli.ts"

const listenCommand = commandsOf(() => import("../handlers/Listen.ts"))

export const listen = listenCommand(
  "listen",
  {
    forwardTo: Flag.String("forward-to").pipe(Flag.withDescription("Where to POST each event (http or https URL), e.g. http://localhost:3000/webhooks")),
    events: Flag.String("events").pipe(
      Flag.withDescription("Only these event types, comma-separated (payment.succeeded,refund.failed); default every type"),
      Flag.optional
    ),
    ...flags
  },
  (h) => h.listen
).pipe(Command.withDescription(
  [
    "Forward the account's events, live, to a local URL, signed with a listen secret printed at start (whsec_…):",
    "X-Signature: t=…, v1=… over t + the URL's path + the body (contract.md, Signatures), X-Event-Id, X-Event-Type.",
    "One line per event: time, type, id, the receiver's status (or error) and latency. A receiver's non-2xx answer or",
    "error is printed and not retried. The secret is kept per account and the position per account, URL and --events",
    "in <data-dir>/listen/, so a listener stopped and started again keeps its secret and resumes after the last event",
    "it forwarded (a first start begins at about now); while the server is away it retries and misses nothing. A",
    "temporary key (--account) is renewed when rolled or due. Ctrl-C ends it. With --json, one JSON object per line",
    "(type ready, event, disconnected or connected)."
  ].join("\n")
))
