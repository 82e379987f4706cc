/**
 * The root command and what every subcommand shares: where the data lives, which storage to use,
 * and whether to answer in JSON. The flags are declared once on the root; the parser accepts
 * inherited flags before or after the subcommand name, so `tender --json accounts list` and
 * `tender accounts list --json` are the same, and every command takes them.
 *
 * A command is declared here (name, flags, descriptions: effect/cli only) apart from its handler,
 * which sits in a module of handlers/ imported when the command runs: the domain, the adapters and
 * the HTTP server take most of a second to load, which `--help` and a mistyped flag need not pay.
 */
import type { TenderConfig } from "@tender/adapters/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Command, Flag } from "effect/cli"

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
 * What a command does with its parsed input and the shared flags. Any typed failure is an expected
 * one (bad input, unknown account, conflict, storage unavailable): it is rendered once, by
 * `commandsOf`; defects are left to the runtime. A handler may need what the CLI runtime provides
 * to every command (`Command.Environment`: Stdio, Terminal, …), and nothing else.
 */
export type Handler<Input> = (input: Input, invocation: Invocation) => Effect.Effect<void, unknown, Command.Environment>

/**
 * Declares commands whose handlers live in the module `load` imports, the first time one of them
 * runs: `handler` picks the command's own from it, and the compiler checks that it takes the input
 * the flags and arguments parse to.
 */
export const commandsOf = <M>(load: () => Promise<M>) =>
<const Name extends string, const Config extends Command.Command.Config>(
  name: Name,
  config: Config,
  handler: (module: M) => Handler<Command.Command.Config.Infer<Config>>
) =>
  Command.make(name, config, (input) =>
    Effect.gen(function*() {
      const flags = yield* tender
      const [{ configFromEnv }, { report }, module] = yield* Effect.promise(() =>
        Promise.all([import("@tender/adapters/Config"), import("./Report.ts"), load()])
      )
      const tenderConfig = configFromEnv({
        dataDir: Option.getOrUndefined(flags.dataDir),
        storage: Option.getOrUndefined(flags.storage)
      })
      yield* handler(module)(input, { config: tenderConfig, json: flags.json }).pipe(Effect.catch(report(flags.json)))
    }))
