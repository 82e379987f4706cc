/** The handler of `tender migrate` (commands/Migrate.ts declares it). */
import * as Infrastructure from "@tender/adapters/Infrastructure"
import { Effect } from "effect"
import type { Invocation } from "../Cli.ts"
import * as Output from "../Output.ts"

const applied: Output.Presentation<ReadonlyArray<string>> = {
  json: (names) => ({ applied: names }),
  text: (names) =>
    names.length === 0
      ? "Database schema is up to date."
      : [`Applied ${names.length} migration${names.length === 1 ? "" : "s"}:`, ...names.map((n) => `  ${n}`)].join("\n")
}

export const migrate = (_: {}, { config, json }: Invocation) =>
  Effect.flatMap(Infrastructure.migrate(config), (names) => Output.print(names, applied, json))
