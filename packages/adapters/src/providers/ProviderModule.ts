/**
 * What a provider is to Tender: one folder under providers/ whose module (`<Name>Module.ts`) says
 * everything the rest of the system needs of it, registered in the one list (Providers.ts). The
 * domain reads its `descriptor` (name, methods, transfers, credential fields: pure data); the
 * channel registry builds a channel's client with its `load`ed adapter; the notification route
 * answers with its `acknowledgement`; the fakes' harness starts its `fake`. docs/providers.md.
 *
 * A module file stays light: the provider's SDK and its fake are imported only through `load` and
 * `fake.start`, so that the CLI and the HTTP routes reading the list never pay for them.
 */
import type { Channel, NotificationDelivery, NotificationUnverified, PaymentProvider, ProviderCatalog, VerifiedDelivery } from "@tender/domain"
import type { Effect } from "effect"
import type { ProviderJournal } from "./shared/ProviderJournal.ts"

/** Where a provider's calls go instead of its own hosts (a wire-level fake), and a certificate to trust there. */
export interface ProviderEndpoint {
  readonly apiUrl?: string | undefined
  /** A PEM certificate to trust besides the system's (a fake's self-signed one). */
  readonly caCertificate?: string | undefined
}

/** What a channel's client is built from. */
export interface BuildContext {
  readonly channel: Channel.Channel
  /** The channel's credentials, opened from the vault: the module reads its own fields from them. */
  readonly credentials: ProviderCatalog.ProviderCredentials
  /** Where the provider's 3-D Secure page sends the customer back to (the channel's return route). */
  readonly returnUrl: string
  /** How long one provider call may take before its answer is given up as unknown; unset: the module's default. */
  readonly timeoutMs: number | undefined
  /** Unset fields: the provider's own hosts. */
  readonly endpoint: ProviderEndpoint
  /** Shared by every process on this storage, for what a provider will not tell again. */
  readonly journal: ProviderJournal["Service"]
}

/** One channel's client: the port, and how a delivery to the channel's notification URL is read. */
export interface ChannelClient {
  readonly provider: PaymentProvider["Service"]
  /**
   * Verifies a delivery with the provider's scheme and the channel's own secret, and reads it into
   * what it says of Tender's transactions.
   */
  readonly notifications: (delivery: NotificationDelivery) => Effect.Effect<VerifiedDelivery, NotificationUnverified>
}

/** The heavy part of a module (its SDK), imported on a channel's first use. */
export type ChannelAdapter = (context: BuildContext) => ChannelClient

/** What the provider reads as "delivered, do not retry" (any other answer, it delivers again). */
export interface Acknowledgement {
  readonly contentType: "application/json" | "text/plain"
  readonly body: string
}

/** A running wire-level fake, as the harness (fake/Fakes.ts) drives every provider's. */
export interface RunningFake {
  /** Where channels of the provider are pointed to reach the fake. */
  readonly target: ProviderEndpoint & { readonly apiUrl: string }
  /** Credentials of a channel the fake accepts, as the operator's credentials file holds them. */
  readonly credentials: (mode: "test" | "live") => Readonly<Record<string, string>>
  /** Waits for the notifications the fake started sending so far. */
  readonly delivered: () => Promise<void>
  readonly refuse: () => Promise<void>
  readonly accept: () => Promise<void>
  readonly close: () => Promise<void>
}

/**
 * Options every fake takes (each may take more): where to POST its notifications, and the key it
 * accepts (unset: any test key of the provider's format).
 */
export interface FakeOptions {
  readonly notifyUrl?: string | undefined
  readonly apiKey?: string | undefined
}

export interface ProviderModule<Name extends string = string, Options extends FakeOptions = FakeOptions, Fake extends RunningFake = RunningFake> {
  readonly descriptor: ProviderCatalog.ProviderDescriptor & { readonly name: Name }
  readonly acknowledgement: Acknowledgement
  readonly load: () => Promise<ChannelAdapter>
  readonly fake: { readonly start: (options?: Options) => Promise<Fake> }
}

/** The environment settings of a provider's endpoint: `TENDER_<NAME>_API_URL`, `TENDER_<NAME>_CA_FILE`. */
export const endpointEnv = (name: string) => ({
  apiUrl: `TENDER_${name.toUpperCase()}_API_URL`,
  caFile: `TENDER_${name.toUpperCase()}_CA_FILE`
})
