/**
 * The handlers of `tender accounts channels …` (commands/Channels.ts declares them). This file reads
 * the credentials file (JsonFile.ts) and presents; the Channels use case checks the settings and the
 * credentials (Channel.ts). No output ever shows a credential: the credentials file is read, handed
 * to the use case and sealed, and no view of a channel has them. `list` adds each channel's breaker
 * (ChannelHealth, shared by every server process).
 */
import { catalog } from "@tender/adapters/providers/Providers"
import { Breaker, type Channel, ChannelHealth, Channels, ProviderCatalog, type RoutingModel } from "@tender/domain"
import { Clock, Effect, Option } from "effect"
import * as JsonFile from "../JsonFile.ts"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const handler = Services.useCase(Channels)

interface Id {
  readonly id: string
}

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
    Effect.flatMap(JsonFile.read("credentials-file", input.credentialsFile), (credentials) =>
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

/** A channel's breaker as operators see it (design: `health: {breaker, failures, open_until}`); never observed = closed. */
const healthOf = (state: RoutingModel.BreakerState | undefined, now: number) => {
  if (state === undefined) return { breaker: "closed" as const, failures: 0, open_until: null }
  const breaker = Breaker.position(state, now)
  return {
    breaker,
    failures: state.failures,
    open_until: breaker === "closed" || state.open_until === null ? null : new Date(state.open_until).toISOString()
  }
}

type Health = ReturnType<typeof healthOf>

/** The health column: the position, and until when an open breaker skips the channel. */
const healthText = (h: Health) => h.breaker === "open" && h.open_until !== null ? `open until ${h.open_until}` : h.breaker

/**
 * The account's channels with their breakers, as every server process shares them (ChannelHealth:
 * over PostgreSQL a fresh CLI process reads what the servers observed).
 */
export const list = handler(
  (channels, { id }: Id) =>
    Effect.gen(function*() {
      const all = yield* channels.list(id)
      const now = yield* Clock.currentTimeMillis
      const breakers = new Map((yield* (yield* ChannelHealth).breakers(now)).map((b) => [b.channel_id, b.state]))
      return all.map((channel) => ({ channel, health: healthOf(breakers.get(channel.id), now) }))
    }),
  ({ id }) => ({
    json: (all) => ({ data: all.map(({ channel, health }) => ({ ...view(channel), health })) }),
    text: (all) =>
      all.length === 0
        ? `No channels on ${id}.`
        : Table.table(
          ["ID", "PROVIDER", "MODE", "STATUS", "PRIORITY", "METHODS", "CURRENCIES", "COUNTRIES", "CREATED", "HEALTH"],
          all.map(({ channel: c, health }) => [
            c.id,
            c.provider,
            c.mode,
            c.status,
            String(c.priority),
            listed(c.methods, "all"),
            listed(c.currencies, "any"),
            listed(c.countries, "any"),
            c.created_at,
            healthText(health)
          ])
        )
  })
)

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
