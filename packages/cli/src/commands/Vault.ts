/**
 * `tender vault purge --unused-for 400d [--dry-run]`: the vault's retention policy. Deletes the
 * sealed card numbers of every account's cards not used (stored, or charged, paid out to or
 * transferred to) for that long; orders and transactions keep the card's brand and last four,
 * and a payment naming a purged token is refused like any unknown one (404
 * `payment_method_not_found`). docs/decisions.md, "Card data", has the policy's default.
 */
import { CardVault, Errors } from "@tender/domain"
import { Clock, Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { command } from "../Cli.ts"
import * as Output from "../Output.ts"
import * as Services from "../Services.ts"

const UNITS: Readonly<Record<string, number>> = { d: 86_400_000, h: 3_600_000 }

/** `400d`, `36h`: whole days or hours (a retention period, never a fraction of one). */
export const parsePeriod = (text: string): number | undefined => {
  const match = /^([1-9][0-9]{0,5})([dh])$/.exec(text.trim())
  return match === null ? undefined : Number(match[1]) * UNITS[match[2]]
}

interface Purged {
  readonly dry_run: boolean
  readonly unused_since: string
  readonly cards: number
}

const purged: Output.Presentation<Purged> = {
  json: (result) => result,
  text: (r) =>
    r.dry_run
      ? `${r.cards} vaulted card${r.cards === 1 ? "" : "s"} unused since ${r.unused_since} would be purged (dry run: nothing deleted).`
      : `Purged ${r.cards} vaulted card${r.cards === 1 ? "" : "s"} unused since ${r.unused_since}.`
}

const purge = command(
  "purge",
  {
    unusedFor: Flag.String("unused-for").pipe(
      Flag.withDescription("Delete cards not used for this long: days or hours, e.g. 400d (the policy's default) or 36h")
    ),
    dryRun: Flag.Boolean("dry-run").pipe(Flag.withDescription("Only count the cards that would be purged"), Flag.withDefault(false))
  },
  ({ dryRun, unusedFor }, { config, json }) =>
    Effect.gen(function*() {
      const period = parsePeriod(unusedFor)
      if (period === undefined) {
        const message = "must be a whole number of days or hours, e.g. 400d"
        return yield* new Errors.ValidationFailed({ message: `--unused-for ${message} (got "${unusedFor}")`, errors: [{ field: "unused-for", message }] })
      }
      const cutoff = new Date((yield* Clock.currentTimeMillis) - period)
      const cards = yield* (yield* CardVault).purgeUnused(cutoff, { dryRun })
      yield* Output.print({ dry_run: dryRun, unused_since: cutoff.toISOString(), cards }, purged, json)
    }).pipe(Effect.provide(Services.layer(config)))
).pipe(Command.withDescription("Delete vaulted card numbers unused for --unused-for (retention policy)"))

export const vault = Command.make("vault").pipe(
  Command.withDescription("The card vault: retention"),
  Command.withSubcommands([purge])
)
