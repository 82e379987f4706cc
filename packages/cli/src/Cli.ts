/**
 * The root command and what every subcommand shares: where the data lives, which storage to use,
 * and whether to answer in JSON. The flags are declared once on the root; the parser accepts
 * inherited flags before or after the subcommand name, so `tender --json accounts list` and
 * `tender accounts list --json` are the same, and every command takes them.
 */
import { configFromEnv, type TenderConfig } from "@tender/adapters/Config"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Output from "./Output.ts"

export const tender = Command.make("tender").pipe(
  Command.withSharedFlags({
    // Optional rather than defaulted, so that configFromEnv applies TENDER_DATA_DIR and its own default.
    dataDir: Flag.String("data-dir").pipe(
      Flag.withDescription("Data directory of the embedded PostgreSQL and the generated vault key (default .tender)"),
      Flag.optional
    ),
    storage: Flag.Literals("storage", ["postgres", "memory"]).pipe(
      Flag.withDescription("postgres (default; DATABASE_URL, or embedded when unset) or memory (no durability)"),
      Flag.optional
    ),
    json: Flag.Boolean("json").pipe(
      Flag.withDescription("Print one JSON document (errors: one {code, message, errors?} object on stderr)"),
      Flag.withDefault(false)
    )
  }),
  Command.withDescription("Tender operator CLI: run the server and workers, migrate the database, operate on accounts, payments and webhooks")
)

/** The shared flags as every command sees them: the runtime configuration and the output mode. */
export interface Invocation {
  readonly config: TenderConfig
  readonly json: boolean
}

/**
 * A command whose handler sees its parsed input and the shared flags. Any typed failure of `run` is
 * an expected one (bad input, unknown account, conflict, storage unavailable): it is rendered once,
 * here; defects are left to the runtime. `run` may need what the CLI runtime provides to every
 * command (`Command.Environment`: Stdio, Terminal, …), and nothing else.
 */
export const command = <
  const Name extends string,
  const Config extends Command.Command.Config,
  E,
  R extends Command.Environment = never
>(
  name: Name,
  config: Config,
  run: (input: Command.Command.Config.Infer<Config>, invocation: Invocation) => Effect.Effect<void, E, R>
) =>
  Command.make(name, config, (input) =>
    Effect.gen(function*() {
      const flags = yield* tender
      const tenderConfig = configFromEnv({
        dataDir: Option.getOrUndefined(flags.dataDir),
        storage: Option.getOrUndefined(flags.storage)
      })
      yield* run(input, { config: tenderConfig, json: flags.json }).pipe(Effect.catch(Output.report(flags.json)))
    }))
