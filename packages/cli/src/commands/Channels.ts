/**
 * `tender accounts channels add|list|disable` (contract.md, Providers): an account's provider
 * channels. This file reads the credentials file and presents; the Channels use case checks the
 * settings and the credentials (Channel.ts). No output ever shows a credential: the credentials
 * file is read, handed to the use case and sealed, and no view of a channel has them.
 */
import { PROVIDERS } from "@tender/adapters/providers/Providers"
import { Channel, Channels, Errors, ProviderCatalog } from "@tender/domain"
import { Effect, FileSystem, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const accountId = Argument.String("id").pipe(Argument.withDescription("Account id (acct_…)"))
const channelsCommand = Services.useCaseCommand(Channels)

/** A comma-separated list flag: absent means "all". */
const list = (name: string, description: string) =>
  Flag.String(name).pipe(
    Flag.withDescription(description),
    Flag.optional,
    Flag.map(Option.match({ onNone: () => null, onSome: (text) => text.split(",") }))
  )

/**
 * The file's JSON. Neither error repeats what the file holds (JSON.parse's own message quotes the
 * text around the fault, which would be a secret).
 */
const readCredentials = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((error) => Errors.invalidField("credentials-file", `cannot be read (${error.reason._tag}): ${file}`))
    )
    try {
      return JSON.parse(text) as unknown
    } catch {
      return yield* Errors.invalidField("credentials-file", `is not valid JSON: ${file}`)
    }
  })

/** What operators see of a channel: its routing settings, never its credentials. */
const view = (c: Channel.Channel) => ({
  id: c.id,
  account_id: c.account_id,
  provider: c.provider,
  mode: c.mode,
  methods: c.methods,
  currencies: c.currencies,
  countries: c.countries,
  priority: c.priority,
  status: c.status,
  created_at: c.created_at,
  updated_at: c.updated_at
})

const catalog = PROVIDERS.map((p) => p.descriptor)

/** Each provider's credential fields, from its module: `stripe: {secret_key: the secret …; …}`. */
const credentialsHelp = catalog
  .map((p) => `${p.name}: {${p.credentials.map((f) => `${f.name}: ${f.about}`).join("; ")}}`)
  .join(" — ")

const listed = (codes: ReadonlyArray<string> | null, all: string) => codes === null ? all : codes.join(", ")

const describe = (c: Channel.Channel): string =>
  Table.fields([
    ["channel", c.id],
    ["account", c.account_id],
    ["provider", c.provider],
    ["mode", c.mode],
    ["status", c.status],
    ["priority", String(c.priority)],
    ["methods", listed(c.methods, `all ${c.provider} offers (${ProviderCatalog.offeredBy(catalog, c.provider).join(", ")})`)],
    ["currencies", listed(c.currencies, "any")],
    ["countries", listed(c.countries, "any")],
    ["created", c.created_at],
    ["updated", c.updated_at]
  ])

const add = channelsCommand(
  "add",
  {
    id: accountId,
    provider: Flag.Literals("provider", PROVIDERS.map((p) => p.descriptor.name)).pipe(Flag.withDescription("The provider of the account")),
    mode: Flag.Literals("mode", ["test", "live"]).pipe(
      Flag.withDescription("The provider account's mode; must be the Tender account's own")
    ),
    credentialsFile: Flag.String("credentials-file").pipe(
      Flag.withDescription(`JSON file with the provider's credentials. ${credentialsHelp}`)
    ),
    methods: list("methods", "Comma-separated payment methods this channel takes (default: all the provider offers)"),
    currencies: list("currencies", "Comma-separated ISO 4217 currencies this channel takes (default: any)"),
    countries: list("countries", "Comma-separated ISO 3166-1 countries this channel takes (default: any)"),
    priority: Flag.Int("priority").pipe(
      Flag.withDescription(`Routing priority, ${Channel.PRIORITY_MIN}–${Channel.PRIORITY_MAX}: higher is tried first (default ${Channel.DEFAULT_PRIORITY})`),
      Flag.optional
    )
  },
  (channels, input) =>
    Effect.flatMap(readCredentials(input.credentialsFile), (credentials) =>
      channels.add(input.id, {
        provider: input.provider,
        mode: input.mode,
        credentials,
        methods: input.methods,
        currencies: input.currencies,
        countries: input.countries,
        priority: Option.getOrNull(input.priority)
      })),
  (): Output.Presentation<Channel.Channel> => ({
    // Exactly the contract's document.
    json: (c) => ({ channel_id: c.id }),
    text: (c) => `Added ${c.mode}-mode ${c.provider} channel ${c.id} to ${c.account_id}.\n\n${describe(c)}`
  })
).pipe(Command.withDescription("Add a provider channel to an account (its credentials are stored encrypted)"))

const listCommand = channelsCommand("list", { id: accountId }, (channels, { id }) => channels.list(id), ({ id }) => ({
  json: (all) => ({ data: all.map(view) }),
  text: (all) =>
    all.length === 0
      ? `No channels on ${id}.`
      : Table.table(
        ["ID", "PROVIDER", "MODE", "STATUS", "PRIORITY", "METHODS", "CURRENCIES", "COUNTRIES", "CREATED"],
        all.map((c) => [
          c.id,
          c.provider,
          c.mode,
          c.status,
          String(c.priority),
          listed(c.methods, "all"),
          listed(c.currencies, "any"),
          listed(c.countries, "any"),
          c.created_at
        ])
      )
})).pipe(Command.withDescription("List an account's provider channels (never their credentials)"))

const disable = channelsCommand(
  "disable",
  { id: accountId, channel: Argument.String("channel").pipe(Argument.withDescription("Channel id (ch_…)")) },
  (channels, { channel, id }) => channels.disable(id, channel),
  () => ({
    json: view,
    text: (c) => `Disabled channel ${c.id} on ${c.account_id}: no new payment goes to it.\n\n${describe(c)}`
  })
).pipe(Command.withDescription("Disable a provider channel (it stays listed; new payments no longer route to it)"))

const pin = channelsCommand(
  "pin",
  {
    id: accountId,
    profile: Flag.String("profile").pipe(Flag.withDescription("Processing profile code")),
    channels: Argument.String("channel").pipe(
      Argument.withDescription("Channel ids (ch_…) the profile's payments and transfers route among; none unpins it"),
      Argument.atLeast(0)
    )
  },
  (channels, { channels: ids, id, profile }) => channels.pin(id, profile, ids),
  ({ profile }) => ({
    json: (a) => ({ account_id: a.id, processing_profile: a.processing_profiles.find((p) => p.code === profile) }),
    text: (a) => {
      const pinned = a.processing_profiles.find((p) => p.code === profile)?.channels ?? []
      return pinned.length === 0
        ? `Processing profile ${profile} of ${a.id} routes over all of its channels.`
        : `Processing profile ${profile} of ${a.id} routes only over ${pinned.join(", ")}.`
    }
  })
).pipe(Command.withDescription("Pin a processing profile to channels (routing picks among them only)"))

export const channels = Command.make("channels").pipe(
  Command.withDescription(`Manage the provider channels (${catalog.map((p) => p.name).join(", ")} accounts) of an account`),
  Command.withSubcommands([add, listCommand, disable, pin])
)
