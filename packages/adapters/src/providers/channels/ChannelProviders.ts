/**
 * The domain's ChannelProviders port over the providers' list (Providers.ts): the catalog the domain
 * routes by, and each channel's client, built by its provider's module from the channel's
 * credentials (opened here, never handed to the domain). One client per channel for the life of the
 * process: credentials never change once added (a new key is a new channel), and an adapter may keep
 * per-channel state between calls (Adyen's).
 *
 * Where the providers live is configuration, not credentials: unset, the SDKs reach the providers
 * themselves; a provider's endpoint (`TENDER_<NAME>_API_URL`, Config.ts) points every channel of
 * that provider at another host (the repository's wire-level fakes, in tests and `tender` dev runs).
 */
import { type Channel, ChannelProviders } from "@tender/domain"
import { BoundedCache } from "@tender/domain/kernel/BoundedCache"
import { Effect, Layer, Option } from "effect"
import { ChannelCredentials } from "../../storage/ChannelCredentials.ts"
import type { ChannelAdapter, ChannelClient, ProviderEndpoint } from "../ProviderModule.ts"
import * as Providers from "../Providers.ts"
import { ProviderJournal } from "../shared/ProviderJournal.ts"

/** Built clients kept per process; a channel dropped from it is rebuilt from its credentials on next use. */
const MAX_BUILT = 1_000

const loading = new Map<string, Promise<ChannelAdapter>>()

/**
 * A provider's adapter and its SDK, imported on the first use of one of its channels: the Adyen
 * library alone takes about a second to import, which every CLI command and server start (most of
 * which never touch a channel) would otherwise pay.
 */
const adapterOf = (name: string): Effect.Effect<ChannelAdapter> =>
  Effect.promise(() => {
    const module = Providers.moduleOf(name)
    // Channels are added through the catalog of this same list: an unknown name is a defect.
    if (module === undefined) return Promise.reject(new Error(`No provider ${name} in the providers' list`))
    const pending = loading.get(name) ?? module.load().catch((error: unknown) => {
      // A failed import (a transient EMFILE, say) is tried again on the next call, not kept for ever.
      loading.delete(name)
      throw error
    })
    loading.set(name, pending)
    return pending
  })

export interface ChannelProvidersOptions {
  /** Tender's public URL: providers send the customer back to its 3-D Secure return route. */
  readonly publicUrl: string
  /** How long one provider call may take before its answer is given up as unknown. */
  readonly timeoutMs?: number | undefined
  /** Per provider name: where its channels' calls go instead of its own hosts. */
  readonly endpoints?: Readonly<Record<string, ProviderEndpoint>> | undefined
}

/** Where a provider's 3-D Secure page sends the customer back to (the HTTP server's provider return route). */
export const returnUrlOf = (publicUrl: string, channelId: string) =>
  `${publicUrl.replace(/\/+$/, "")}/providers/${encodeURIComponent(channelId)}/return`

export const make = (options: ChannelProvidersOptions) =>
  Effect.gen(function*() {
    const credentials = yield* ChannelCredentials
    const journal = yield* ProviderJournal
    // Bounded: channels are the operator's, but nothing else caps how many one process meets.
    const built = new BoundedCache<string, ChannelClient>(MAX_BUILT)
    const clientOf = (channel: Channel.Channel) =>
      Effect.gen(function*() {
        const cached = built.get(channel.id)
        if (cached !== undefined) return cached
        const found = yield* credentials.open(channel.account_id, channel.id)
        // Every channel is stored with its credentials in one insert.
        if (Option.isNone(found)) return yield* Effect.die(new Error(`Channel ${channel.id} has no credentials`))
        const build = yield* adapterOf(channel.provider)
        const endpoint = options.endpoints?.[channel.provider] ?? {}
        if (channel.mode === "live" && endpoint.apiUrl !== undefined && !built.has(channel.id)) {
          // Live keys and card numbers go wherever this points: say so loudly (tests and dev runs only).
          yield* Effect.logWarning(`live ${channel.provider} channel ${channel.id} is pointed at ${endpoint.apiUrl}, not at ${channel.provider}`)
        }
        // Two first calls at once both build; the first stored is the one every caller keeps.
        if (!built.has(channel.id)) {
          const client = build({
            channel,
            credentials: found.value,
            returnUrl: returnUrlOf(options.publicUrl, channel.id),
            timeoutMs: options.timeoutMs,
            endpoint,
            journal
          })
          // The adapter's own object, keeping its extra members (Adyen's return and notification hooks).
          built.set(channel.id, { ...client, provider: Object.assign(client.provider, { channel_id: channel.id }) })
        }
        return built.get(channel.id)!
      })
    return ChannelProviders.of({
      catalog: Providers.catalog,
      provider: (channel) => Effect.map(clientOf(channel), (client) => client.provider),
      notifications: (channel, delivery) => Effect.flatMap(clientOf(channel), (client) => client.notifications(delivery))
    })
  })

export const layer = (options: ChannelProvidersOptions): Layer.Layer<ChannelProviders, never, ChannelCredentials | ProviderJournal> =>
  Layer.effect(ChannelProviders, make(options))
