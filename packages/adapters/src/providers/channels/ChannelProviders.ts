/**
 * The domain's ChannelProviders port: a channel's provider client, built from its credentials
 * (opened here, never handed to the domain) with the official SDK of its provider. One client per
 * channel for the life of the process: credentials never change once added (a new key is a new
 * channel), and the Adyen adapter keeps per-channel state between calls.
 *
 * Where the providers live is configuration, not credentials: unset, the SDKs reach Stripe and
 * Adyen themselves; `TENDER_STRIPE_API_URL` / `TENDER_ADYEN_API_URL` point every channel of that
 * provider at another host (the repository's wire-level fakes, in tests and `tender` dev runs).
 */
import { type Channel, ChannelProviders, NotificationUnverified, type PaymentProvider } from "@tender/domain"
import { BoundedCache } from "@tender/domain/kernel/BoundedCache"
import { Clock, Effect, Layer, Option } from "effect"
import { ChannelCredentials } from "../../storage/ChannelCredentials.ts"
import { ProviderJournal } from "../shared/ProviderJournal.ts"
import type { AdyenProvider } from "../adyen/AdyenProvider.ts"

type Port = PaymentProvider["Service"]

/** Built providers kept per process; a channel dropped from it is rebuilt from its credentials on next use. */
const MAX_BUILT = 1_000

const load = () =>
  Promise.all([
    import("../stripe/StripeProvider.ts"),
    import("../stripe/StripeNotifications.ts"),
    import("../adyen/AdyenProvider.ts"),
    import("../adyen/AdyenNotifications.ts")
  ]).then(([stripe, stripeNotifications, adyen, adyenNotifications]) => ({ stripe, stripeNotifications, adyen, adyenNotifications }))
type Sdks = Awaited<ReturnType<typeof load>>
let loading: Promise<Sdks> | undefined

/**
 * The provider adapters and their SDKs, imported on the first channel's first use: the Adyen library
 * alone takes about a second to import, which every CLI command and server start (most of which
 * never touch a channel) would otherwise pay.
 */
const sdks: Effect.Effect<Sdks> = Effect.promise(() =>
  loading ??= load().catch((error: unknown) => {
    // A failed import (a transient EMFILE, say) is tried again on the next call, not kept for ever.
    loading = undefined
    throw error
  }))

export interface ProviderEndpoints {
  /** Stripe's API origin (`http://127.0.0.1:12111`); unset → api.stripe.com. */
  readonly stripeApiUrl?: string | undefined
  /** Adyen's Checkout base URL (`https://127.0.0.1:8443/v71`); unset → Adyen's test or live endpoint. */
  readonly adyenApiUrl?: string | undefined
  /** A PEM certificate to trust for Adyen besides the system's (a fake's self-signed one). */
  readonly adyenCaCertificate?: string | undefined
}

export interface ChannelProvidersOptions extends ProviderEndpoints {
  /** Tender's public URL: providers send the customer back to its 3-D Secure return route. */
  readonly publicUrl: string
  /** How long one provider call may take before its answer is given up as unknown. */
  readonly timeoutMs?: number | undefined
}

/** Where a provider's 3-D Secure page sends the customer back to (the HTTP server's provider return route). */
export const returnUrlOf = (publicUrl: string, channelId: string) =>
  `${publicUrl.replace(/\/+$/, "")}/providers/${encodeURIComponent(channelId)}/return`

const stripeEndpoint = (url: string | undefined) => {
  if (url === undefined) return {}
  const parsed = new URL(url)
  const protocol = parsed.protocol === "http:" ? "http" as const : "https" as const
  return { host: parsed.hostname, port: Number(parsed.port || (protocol === "http" ? 80 : 443)), protocol }
}

/** The provider client of one channel, as the port's PaymentProvider with the channel's id. */
const build = (
  { adyen, stripe }: Sdks,
  channel: Channel.Channel,
  credentials: Channel.ProviderCredentials,
  options: ChannelProvidersOptions,
  journal: ProviderJournal["Service"]
): Port => {
  const returnUrl = returnUrlOf(options.publicUrl, channel.id)
  const provider: Port = credentials.provider === "stripe"
    ? stripe.makeStripeProvider({
      secretKey: credentials.secret_key,
      mode: channel.mode,
      returnUrl,
      timeoutMs: options.timeoutMs,
      ...stripeEndpoint(options.stripeApiUrl)
    })
    : adyen.makeAdyenProvider({
      apiKey: credentials.api_key,
      merchantAccount: credentials.merchant_account,
      environment: channel.mode,
      liveEndpointUrlPrefix: credentials.live_url_prefix ?? undefined,
      endpoint: options.adyenApiUrl,
      caCertificate: options.adyenCaCertificate,
      mode: channel.mode,
      returnUrl,
      timeoutMs: options.timeoutMs,
      // Shared by every process on this storage: a lookup after a crash knows what was sent.
      journal,
      journalScope: `${credentials.merchant_account}/${channel.id}`
    })
  // The adapter's own object, keeping its extra members (Adyen's return and notification hooks).
  return Object.assign(provider, { channel_id: channel.id })
}

export const make = (options: ChannelProvidersOptions) =>
  Effect.gen(function*() {
    const credentials = yield* ChannelCredentials
    const journal = yield* ProviderJournal
    // Bounded: channels are the operator's, but nothing else caps how many one process meets.
    const built = new BoundedCache<string, Port>(MAX_BUILT)
    const opened = (channel: Channel.Channel) =>
      Effect.flatMap(credentials.open(channel.account_id, channel.id), (found) =>
        // Every channel is stored with its credentials in one insert.
        Option.isSome(found) ? Effect.succeed(found.value) : Effect.die(new Error(`Channel ${channel.id} has no credentials`)))
    const provider = (channel: Channel.Channel) =>
      Effect.gen(function*() {
        const cached = built.get(channel.id)
        if (cached !== undefined) return cached
        const secrets = yield* opened(channel)
        const modules = yield* sdks
        const override = secrets.provider === "stripe" ? options.stripeApiUrl : options.adyenApiUrl
        if (channel.mode === "live" && override !== undefined && !built.has(channel.id)) {
          // Live keys and card numbers go wherever this points: say so loudly (tests and dev runs only).
          yield* Effect.logWarning(`live ${secrets.provider} channel ${channel.id} is pointed at ${override}, not at ${secrets.provider}`)
        }
        // Two first calls at once both build; the first stored is the one every caller keeps.
        if (!built.has(channel.id)) built.set(channel.id, build(modules, channel, secrets, options, journal))
        return built.get(channel.id)!
      })
    const unverified = (error: { readonly message: string }) => new NotificationUnverified({ message: error.message })
    return ChannelProviders.of({
      provider,
      notifications: (channel, delivery) =>
        Effect.gen(function*() {
          const secrets = yield* opened(channel)
          const { adyenNotifications: AdyenNotifications, stripeNotifications: StripeNotifications } = yield* sdks
          if (secrets.provider === "stripe") {
            const event = yield* StripeNotifications.verify(
              Buffer.from(delivery.rawBody),
              delivery.headers["stripe-signature"],
              secrets.webhook_secret,
              yield* Clock.currentTimeMillis
            ).pipe(Effect.mapError(unverified))
            return { notices: StripeNotifications.noticesOf(event), accept: Effect.void }
          }
          const items = yield* AdyenNotifications.verify(Buffer.from(delivery.rawBody).toString("utf8"), secrets.hmac_key).pipe(
            Effect.mapError(unverified)
          )
          // A company-level webhook may carry other merchant accounts' payments: not this channel's.
          const ours = items.filter((item) => item.merchant_account === secrets.merchant_account)
          // The adapter keeps capture and refund outcomes for `settlement` (Adyen has no API to ask).
          const adyen = (yield* provider(channel)) as unknown as AdyenProvider
          return { notices: ours.flatMap(AdyenNotifications.noticesOf), accept: Effect.forEach(ours, (item) => adyen.observe(item), { discard: true }) }
        })
    })
  })

export const layer = (options: ChannelProvidersOptions): Layer.Layer<ChannelProviders, never, ChannelCredentials | ProviderJournal> =>
  Layer.effect(ChannelProviders, make(options))
