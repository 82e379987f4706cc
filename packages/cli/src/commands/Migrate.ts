/**
 * `tender migrate`: applies pending schema migrations and names them. The server applies them on
 * start as well; this command lets an operator migrate ahead of a deploy and see what changed.
 */
import * as Infrastructure from "@tender/adapters/Infrastructure"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { command } from "../Cli.ts"
import * as Output from "../Output.ts"

const applied: Output.Presentation<ReadonlyArray<string>> = {
  json: (names) => ({ applied: names }),
  text: (names) =>
    names.length === 0
      ? "Database schema is up to date."
      : [`Applied ${names.length} migration${names.length === 1 ? "" : "s"}:`, ...names.map((n) => `  ${n}`)].join("\n")
}

export const migrate = command(
  "migrate",
  {},
  (_, { config, json }) => Effect.flatMap(Infrastructure.migrate(config), (names) => Output.print(names, applied, json))
).pipe(Command.withDescription("Apply pending database migrations and list them"))
