/**
 * `tender vault purge --unused-for 400d [--dry-run]`: the vault's retention policy, declared;
 * handlers/Vault.ts runs it. docs/decisions.md, "Card data", has the policy's default.
 */
import { Command, Flag } from "effect/cli"
import { commandsOf } from "../Cli.ts"

const purge = commandsOf(() => import("../handlers/Vault.ts"))(
  "purge",
  {
    unusedFor: Flag.String("unused-for").pipe(
      Flag.withDescription("Delete cards not used for this long: days or hours, e.g. 400d (the policy's default) or 36h")
    ),
    dryRun: Flag.Boolean("dry-run").pipe(Flag.withDescription("Only count the cards that would be purged"), Flag.withDefault(false))
  },
  (h) => h.purge
).pipe(Command.withDescription("Delete vaulted card numbers unused for --unused-for (retention policy)"))

export const vault = Command.make("vault").pipe(
  Command.withDescription("The card vault: retention"),
  Command.withSubcommands([purge])
)
