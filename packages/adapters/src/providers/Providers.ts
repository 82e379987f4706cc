/**
 * The providers Tender carries: the one list. Everything that differs per provider reads it: the
 * domain's catalog (names, methods, transfers, credential fields), the channel registry's clients
 * (channels/ChannelProviders.ts), the notification route's acknowledgement, the CLI's `--provider`
 * and its credentials help, the endpoint settings (Config.ts) and the fakes' harness (fake/Fakes.ts).
 * Adding a provider is its folder, a line here and a row of the contract suite (docs/providers.md).
 */
import type { ProviderCatalog } from "@tender/domain"
import { module as adyen } from "./adyen/AdyenModule.ts"
import type { ProviderModule } from "./ProviderModule.ts"
import { module as stripe } from "./stripe/StripeModule.ts"
import { module as testpay } from "./testpay/TestpayModule.ts"

export const PROVIDERS = [stripe, adyen, testpay] as const

export type Provider = typeof PROVIDERS[number]
export type ProviderName = Provider["descriptor"]["name"]

export const NAMES: ReadonlyArray<ProviderName> = PROVIDERS.map((p) => p.descriptor.name)

/** What the domain knows of them (ChannelProviders.catalog). */
export const catalog: ProviderCatalog.ProviderCatalog = PROVIDERS.map((p) => p.descriptor)

/** The module of a provider name; `undefined` for a name the list lacks. */
export const moduleOf = (name: string): ProviderModule | undefined =>
  (PROVIDERS as ReadonlyArray<ProviderModule>).find((p) => p.descriptor.name === name)
