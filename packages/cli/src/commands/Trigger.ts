/**
 * `tender trigger EVENT`: makes one event happen on a test-mode account through the public API, as
 * a merchant's integration would (issue 25, after `stripe trigger`), declared; handlers/Trigger.ts
 * runs it with the recipes of trigger/Recipes.ts.
 */
import { Argument, Command } from "effect/cli"
import { flags } from "../ApiAccessFlags.ts"
import { commandsOf } from "../Cli.ts"
import { EVENTS, TRIGGERS } from "../trigger/Events.ts"

const triggerCommand = commandsOf(() => import("../handlers/Trigger.ts"))

export const trigger = triggerCommand(
  "trigger",
  {
    event: Argument.Literals("event", EVENTS).pipe(Argument.withDescription("The event type to make happen (listed above)")),
    ...flags
  },
  (h) => h.trigger
).pipe(Command.withDescription(
  [
    "Make an event happen on a test-mode account, through the public API (test cards and test helpers), and print what it made.",
    "",
    "Events, and what each makes:",
    ...EVENTS.map((event) => `  ${event.padEnd(28)} ${TRIGGERS[event]}`)
  ].join("\n")
))
