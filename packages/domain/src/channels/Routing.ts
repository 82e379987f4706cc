/**
 * Which provider may carry an account's money. A provider serves one mode: a live account's payment,
 * session or transfer must never reach a test provider (the sandbox would "pay" it with no money
 * moved), nor a test account's a live one. contract.md, Providers: a live account with no live
 * channel gets `payment_unroutable` for payments, sessions and transfers alike.
 *
 * Two questions, one home: `routeFor` guards a provider already chosen (today the sandbox) against
 * the account's mode; `channelsFor` chooses among the account's channels, in cascade order.
 */
import type { AccountMode } from "../accounts/Account.ts"
import { type Channel, supports } from "./Channel.ts"
import type { ProviderCatalog } from "./ProviderCatalog.ts"
import { PaymentUnroutable } from "../kernel/Errors.ts"

/** The refusal when `provider` does not serve the account's mode; `undefined` when it may carry it. */
export const routeFor = (
  provider: { readonly mode: "test" | "live" },
  livemode: boolean
): PaymentUnroutable | undefined =>
  provider.mode === (livemode ? "live" : "test")
    ? undefined
    : new PaymentUnroutable({
      message: livemode
        ? "No live provider is configured for this account"
        : "No test provider is configured for this account"
    })

/** What a payment asks of a channel. */
export interface PaymentRoute {
  readonly method: string
  readonly currency: string
  readonly country: string
}

/**
 * Where a payment goes: the built-in sandbox, or the account's channels in the order to try them
 * (the first, then the next whenever the one before is definitely unreachable).
 */
export type ChannelRoute =
  | { readonly _tag: "Sandbox" }
  | { readonly _tag: "Channels"; readonly channels: readonly [Channel, ...Array<Channel>] }

/** Whether a channel may carry `account`'s payments at all: enabled, and of the account's own mode. */
export const usableFor = (account: { readonly mode: AccountMode }) => (channel: Channel): boolean =>
  channel.status === "enabled" && channel.mode === account.mode

/**
 * The route of a payment of `account` over its `channels` (contract.md, Providers). Only enabled
 * channels of the account's own mode count. A test-mode account with none of them uses the sandbox;
 * one that has them is routed exactly as a live account is, so test mode rehearses live routing.
 * The candidates are those supporting the payment's method, currency and country, highest priority
 * first, equal priorities in creation order; none → `payment_unroutable`.
 */
export const channelsFor = (
  account: { readonly mode: AccountMode },
  channels: ReadonlyArray<Channel>,
  payment: PaymentRoute,
  catalog: ProviderCatalog
): ChannelRoute | PaymentUnroutable => {
  const usable = channels.filter(usableFor(account))
  if (account.mode === "test" && usable.length === 0) return { _tag: "Sandbox" }
  const [first, ...rest] = usable
    .map((channel, index) => ({ channel, index }))
    .filter(({ channel }) => supports(channel, payment, catalog))
    // Creation order is the timestamp, then the order given (the repository lists in creation order).
    .sort((a, b) =>
      b.channel.priority - a.channel.priority ||
      a.channel.created_at.localeCompare(b.channel.created_at) ||
      a.index - b.index
    )
    .map(({ channel }) => channel)
  if (first === undefined) {
    return new PaymentUnroutable({
      message: usable.length === 0
        ? `No ${account.mode} channel is configured for this account`
        : `No enabled ${account.mode} channel of this account takes ${payment.method} in ${payment.currency} from ${payment.country}`
    })
  }
  return { _tag: "Channels", channels: [first, ...rest] }
}
