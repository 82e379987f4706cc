/**
 * The handlers of `tender accounts channels …` (commands/Channels.ts declares them). This file reads
 * the credentials file and presents; the Channels use case checks the settings and the credentials
 * (Channel.ts). No output ever shows a credential: the credentials file is read, handed to the use
 * case and sealed, and no view of a channel has them.
 */
import { catalog } from "@tender/adapters/providers/Providers"
import { type Channel, Channels, Errors, ProviderCatalog } from "@tender/domain"
import { Effect, FileSystem, Option } from "effect"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const handler = Services.useCase(Channels)

interface Id {
  readonly id: string
}

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

type AddInput = Id & {
  readonly provider: string
  readonly mode: Channel.Channel["mode"]
  readonly credentialsFile: string
  readonly methods: ReadonlyArray<string> | null
  readonly currencies: ReadonlyArray<string> | null
  readonly countries: ReadonlyArray<string> | null
  readonly priority: Option.Option<number>
}

export const add = handler(
  (channels, input: AddInput) =>
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
)

export const list = handler((channels, { id }: Id) => channels.list(id), ({ id }) => ({
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
}))

export const disable = handler(
  (channels, { channel, id }: Id & { readonly channel: string }) => channels.disable(id, channel),
  () => ({
    json: view,
    text: (c) => `Disabled channel ${c.id} on ${c.account_id}: no new payment goes to it.\n\n${describe(c)}`
  })
)

export const pin = handler(
  (channels, { channels: ids, id, profile }: Id & { readonly profile: string; readonly channels: ReadonlyArray<string> }) =>
    channels.pin(id, profile, ids),
  ({ profile }) => ({
    json: (a) => ({ account_id: a.id, processing_profile: a.processing_profiles.find((p) => p.code === profile) }),
    text: (a) => {
      const pinned = a.processing_profiles.find((p) => p.code === profile)?.channels ?? []
      return pinned.length === 0
        ? `Processing profile ${profile} of ${a.id} routes over all of its channels.`
        : `Processing profile ${profile} of ${a.id} routes only over ${pinned.join(", ")}.`
    }
  })
)
