/**
 * The domain's words that command declarations show in their help (`--mode`'s choices, the channel
 * priorities, the providers' names): written here rather than imported, because the modules holding them load the domain,
 * (the providers' modules too), which `--help` should not pay for. Each is checked against the domain's own by the compiler, order
 * included, so the two cannot drift apart.
 */
import type { PROVIDERS } from "@tender/adapters/providers/Providers"
import type { Account, Channel, Operator, Webhook } from "@tender/domain"

/** `true` exactly when A and B are the same type. */
type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false

/** The names of a list of providers, in its order. */
type NamesOf<List extends ReadonlyArray<unknown>> = { readonly [K in keyof List]: List[K] extends { readonly descriptor: { readonly name: infer N } } ? N : never }

export const ACCOUNT_MODES = ["test", "live"] as const
true satisfies Same<typeof ACCOUNT_MODES, typeof Account.AccountMode.literals>

export const THREE_DS_DISPLAY_MODES = ["inline", "popup", "redirect"] as const
true satisfies Same<typeof THREE_DS_DISPLAY_MODES, typeof Account.ThreeDsDisplayMode.literals>

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "exhausted"] as const
true satisfies Same<typeof DELIVERY_STATUSES, typeof Webhook.DELIVERY_STATUSES>

export const CHANNEL_PRIORITY = { min: 0, max: 1000, default: 0 } as const
true satisfies Same<typeof CHANNEL_PRIORITY, { readonly min: typeof Channel.PRIORITY_MIN; readonly max: typeof Channel.PRIORITY_MAX; readonly default: typeof Channel.DEFAULT_PRIORITY }>

/** The providers' names, in the providers' list's order (`--provider`'s choices). */
export const PROVIDER_NAMES = ["stripe", "adyen", "testpay"] as const
true satisfies Same<typeof PROVIDER_NAMES, NamesOf<typeof PROVIDERS>>

export const OPERATOR_ROLES = ["viewer", "operator", "admin"] as const
true satisfies Same<typeof OPERATOR_ROLES, typeof Operator.OPERATOR_ROLES>
