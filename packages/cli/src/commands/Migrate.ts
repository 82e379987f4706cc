/**
 * `tender migrate`: applies pending schema migrations and names them (handlers/Migrate.ts). The
 * server applies them on start as well; this command lets an operator migrate ahead of a deploy and
 * see what changed.
 */
import { Command } from "effect/cli"
import { commandsOf } from "../Cli.ts"

export const migrate = commandsOf(() => import("../handlers/Migrate.ts"))("migrate", {}, (h) => h.migrate)
  .pipe(Command.withDescription("Apply pending database migrations and list them"))
