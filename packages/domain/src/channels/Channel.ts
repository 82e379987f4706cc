/**
 * A channel: one provider account (Stripe, Adyen, …: ProviderCatalog.ts) that a merchant account's payments may go to
 * (contract.md, Providers). The record holds what routing reads: provider, mode, which methods,
 * currencies and countries it takes, its priority and whether it is enabled. Its credentials are
 * not part of it: they are checked here once, on the way in, then sealed by the storage adapter
 * under the vault key and only ever opened there, to build the provider's client.
 */
import { Schema } from "effect"
import { AccountMode } from "../accounts/Account.ts"
import { isCountry } from "../kernel/Countries.ts"
import { Conflict, type FieldError, ValidationFailed } from "../kernel/Errors.ts"
import { AccountId, ChannelId } from "../kernel/Ids.ts"
import { isCurrency } from "../kernel/Money.ts"
import { define, transitionOf } from "../kernel/StateMachine.ts"
import { findMethod } from "../payments/PaymentMethods.ts"
import { descriptorOf, offeredBy, type ProviderCatalog } from "./ProviderCatalog.ts"

/**
 * A provider's name. Which names exist is the adapters' list of providers (ProviderCatalog.ts), not
 * a literal here: a channel of a provider is checked against that catalog when it is added.
 */
export const ProviderName = Schema.String
/** A provider's name. */
export type ProviderName = typeof ProviderName.Type
/** A channel's statuses, in table order. */
export const CHANNEL_STATUSES = ["enabled", "disabled"] as const
/** A channel's status: `enabled`, or `disabled` (out of routing, for good). */
export const ChannelStatus = Schema.Literals(CHANNEL_STATUSES)
/** A channel's status. */
export type ChannelStatus = typeof ChannelStatus.Type

/** A channel as stored: one provider account of a Tender account, with what it takes and its priority. */
export const Channel = Schema.Struct({
  id: ChannelId,
  account_id: AccountId,
  provider: ProviderName,
  /** The account's own mode: a live account's channel moves real money, a test account's the provider's test money. */
  mode: AccountMode,
  /** Payment method codes; `null` = every method the provider's adapter carries (its descriptor's `methods`). */
  methods: Schema.NullOr(Schema.Array(Schema.String)),
  /** ISO 4217 codes; `null` = any currency. */
  currencies: Schema.NullOr(Schema.Array(Schema.String)),
  /** ISO 3166-1 alpha-2 codes; `null` = any country. */
  countries: Schema.NullOr(Schema.Array(Schema.String)),
  /** Higher goes first; equal priorities go in creation order. */
  priority: Schema.Int,
  status: ChannelStatus,
  created_at: Schema.String,
  updated_at: Schema.String
})
/** A channel as stored. */
export type Channel = typeof Channel.Type

/**
 * A channel's life: enabled when added; disabling takes it out of routing for good (it is kept,
 * since its transactions' follow-ups name it). A new key is a new channel, so nothing re-enables one.
 */
export const ChannelMachine = define<ChannelStatus, "disable">({
  name: "Channel",
  states: CHANNEL_STATUSES,
  finals: ["disabled"],
  transitions: [
    { from: ["enabled"], trigger: "disable", to: "disabled", when: "the operator disables it (`tender accounts channels disable`)" }
  ]
})

/** The one way a channel's status changes: the table's move, or a Conflict naming it. */
export const transition = transitionOf(ChannelMachine, (channel: Channel, move) =>
  new Conflict({
    message: channel.status === "disabled" ? `Channel ${channel.id} is already disabled` : `Channel ${channel.id}: ${move}`
  }))

/** The lowest priority a channel may have. */
export const PRIORITY_MIN = 0
/** The highest priority a channel may have. */
export const PRIORITY_MAX = 1000
/** A new channel's priority when none is given. */
export const DEFAULT_PRIORITY = 0

/** Whether the channel takes this payment method (its `--methods`, else all its provider's adapter carries). */
export const takesMethod = (channel: Channel, method: string, catalog: ProviderCatalog): boolean =>
  (channel.methods ?? offeredBy(catalog, channel.provider)).includes(method)

/** Whether the channel takes a payment of this method, currency and country (its mode and status aside). */
export const supports = (
  channel: Channel,
  payment: { readonly method: string; readonly currency: string; readonly country: string },
  catalog: ProviderCatalog
): boolean =>
  takesMethod(channel, payment.method, catalog) &&
  (channel.currencies === null || channel.currencies.includes(payment.currency)) &&
  (channel.countries === null || channel.countries.includes(payment.country))

// --- a new channel -------------------------------------------------------------------------

/** What the operator chooses for a new channel: provider, mode, methods, currencies, countries, priority. */
export interface ChannelSettings {
  readonly provider: ProviderName
  readonly mode: AccountMode
  readonly methods: ReadonlyArray<string> | null
  readonly currencies: ReadonlyArray<string> | null
  readonly countries: ReadonlyArray<string> | null
  readonly priority: number | null
}

/** A list option: `null` stays "any"; codes are trimmed, deduplicated in order, and each checked. */
const codes = (
  field: string,
  list: ReadonlyArray<string> | null,
  normalise: (code: string) => string,
  problemOf: (code: string) => string | undefined,
  errors: Array<FieldError>
): ReadonlyArray<string> | null => {
  if (list === null) return null
  const unique = [...new Set(list.map((c) => normalise(c.trim())).filter((c) => c.length > 0))]
  if (unique.length === 0) errors.push({ field, message: "must name at least one code (omit it to allow all)" })
  for (const code of unique) {
    const problem = problemOf(code)
    if (problem !== undefined) errors.push({ field, message: problem })
  }
  return unique
}

/**
 * The record of a channel an operator adds to `account`, or every problem with the settings. The
 * mode must be the account's own: a live account uses only live channels and a test account only
 * test ones (contract.md), so a channel of the other mode could never carry a payment.
 */
export const make = (
  account: { readonly id: AccountId; readonly mode: AccountMode },
  id: ChannelId,
  settings: ChannelSettings,
  catalog: ProviderCatalog,
  now: string
): Channel | ValidationFailed => {
  const errors: Array<FieldError> = []
  if (descriptorOf(catalog, settings.provider) === undefined) {
    errors.push({ field: "provider", message: `must be one of ${catalog.map((p) => p.name).join(", ")}` })
  }
  if (settings.mode !== account.mode) {
    errors.push({
      field: "mode",
      message: `must be the account's mode (${account.mode}): a ${account.mode}-mode account uses only ${account.mode}-mode channels`
    })
  }
  const offered = offeredBy(catalog, settings.provider)
  const methods = codes("methods", settings.methods, (c) => c.toLowerCase(), (code) =>
    findMethod(code) === undefined
      ? `${code} is not a payment method`
      : offered.includes(code) || offered.length === 0
      ? undefined
      : `${settings.provider} does not offer ${code} (it offers ${offered.join(", ")})`, errors)
  const currencies = codes("currencies", settings.currencies, (c) => c.toUpperCase(), (code) =>
    isCurrency(code) ? undefined : `${code} is not an ISO 4217 currency`, errors)
  const countries = codes("countries", settings.countries, (c) => c.toUpperCase(), (code) =>
    isCountry(code) ? undefined : `${code} is not an ISO 3166-1 alpha-2 country`, errors)
  const priority = settings.priority ?? DEFAULT_PRIORITY
  if (!Number.isInteger(priority) || priority < PRIORITY_MIN || priority > PRIORITY_MAX) {
    errors.push({ field: "priority", message: `must be an integer from ${PRIORITY_MIN} to ${PRIORITY_MAX}` })
  }
  if (errors.length > 0) {
    return new ValidationFailed({
      message: errors.length === 1
        ? `Invalid request: ${errors[0].field} ${errors[0].message}`
        : "Invalid request: the channel settings are invalid",
      errors
    })
  }
  return {
    id,
    account_id: account.id,
    provider: settings.provider,
    mode: settings.mode,
    methods,
    currencies,
    countries,
    priority,
    status: "enabled",
    created_at: now,
    updated_at: now
  }
}

/** Disabling takes the channel out of routing (ChannelMachine); `Conflict` when it already is. */
export const disable = (channel: Channel, now: string) => transition(channel, "disable", now)
