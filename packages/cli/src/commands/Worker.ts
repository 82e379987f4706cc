/**
 * `tender worker`: the background workers (settlement, reconciliation, window expiry, webhook
 * dispatcher, session sweeper) without the HTTP server, until SIGINT or SIGTERM, to scale delivery
 * apart from the API; handlers/Worker.ts runs them.
 */
import { Command } from "effect/cli"
import { commandsOf } from "../Cli.ts"

export const worker = commandsOf(() => import("../handlers/Worker.ts"))("worker", {}, (h) => h.worker)
  .pipe(Command.withDescription("Run the settlement and webhook workers without the API until SIGINT/SIGTERM"))
