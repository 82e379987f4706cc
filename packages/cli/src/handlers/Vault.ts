/**
 * The handler of `tender vault purge` (commands/Vault.ts declares it). Deletes the sealed card
 * numbers of every account's cards not used (stored, or charged, paid out to or transferred to) for
 * that long; orders and transactions keep the card's brand and last four, and a payment naming a
 * purged token is refused like any unknown one (404 `payment_method_not_found`).
 */
import { CardVault, Errors } from "@tender/domain"
import { Clock, Effect } from "effect"
import type { Invocation } from "../Cli.ts"
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

export const purge = (
  { dryRun, unusedFor }: { readonly unusedFor: string; readonly dryRun: boolean },
  { config, json }: Invocation
) =>
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
