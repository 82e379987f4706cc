/**
 * The handlers of `tender accounts routing …` (commands/Routing.ts declares them). This file reads
 * the operator's files and presents; the Channels use case parses and checks the rules against the
 * account's channels (RoutingRules.ts), stores the next version, and plans the dry run's route with
 * the same code a payment's create uses (PlanRoute.ts).
 */
import { Channels } from "@tender/domain"
import { Effect, Option } from "effect"
import * as JsonFile from "../JsonFile.ts"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const handler = Services.useCase(Channels)

interface Scope {
  readonly id: string
  readonly profile: Option.Option<string>
}

/** Whose rules: the profile's, or the account's own. */
const whose = ({ id, profile }: Scope) => Option.match(profile, { onNone: () => `account ${id}`, onSome: (code) => `processing profile ${code} of ${id}` })

export const set = handler(
  (channels, input: Scope & { readonly file: string }) =>
    Effect.flatMap(JsonFile.read("file", input.file), (document) => channels.setRouting(input.id, Option.getOrNull(input.profile), document)),
  (input): Output.Presentation<{ readonly version: number }> => ({
    // Exactly the contract's document.
    json: ({ version }) => ({ version }),
    text: ({ version }) => `Set version ${version} of the routing rules of ${whose(input)}.`
  })
)

type Stored = Effect.Success<ReturnType<Channels["Service"]["showRouting"]>>

export const show = handler(
  (channels, input: Scope) => channels.showRouting(input.id, Option.getOrNull(input.profile)),
  (input): Output.Presentation<Stored> => ({
    json: (stored) =>
      stored === undefined
        ? { version: 0, rules: null }
        : { version: stored.version, profile: stored.profile, rules: stored.document, created_at: stored.created_at },
    text: (stored) =>
      stored === undefined
        ? `No routing rules for ${whose(input)} (version 0): payments go to its channels by priority.`
        : `${Table.fields([
          ["rules of", whose(input)],
          ["version", String(stored.version)],
          ["set", stored.created_at]
        ])}\n\n${JSON.stringify(stored.document, null, 2)}`
  })
)

type Decision = Effect.Success<ReturnType<Channels["Service"]["testRouting"]>>

export const test = handler(
  (channels, input: Scope & { readonly payment: string }) =>
    Effect.flatMap(JsonFile.read("payment", input.payment), (payment) => channels.testRouting(input.id, Option.getOrNull(input.profile), payment)),
  (): Output.Presentation<Decision> => ({
    json: (d) => ({ rule: d.rule, version: d.version, candidates: d.candidates, channel: d.channel, reason: d.reason }),
    text: (d) =>
      Table.fields([
        ["channel", d.channel],
        ["reason", d.reason],
        ["rule", d.rule ?? (d.version === 0 ? "— (no rules: by priority)" : "— (the default)")],
        ["version", String(d.version)],
        ["candidates", d.candidates.length === 0 ? "—" : d.candidates.join(", ")]
      ])
  })
)
