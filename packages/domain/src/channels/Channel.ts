/**
 * A channel: one provider account (Stripe or Adyen) that a merchant account's payments may go to
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
import { findMethod } from "../payments/PaymentMethods.ts"

export const ProviderName = Schema.Literals(["stripe", "adyen"])
export type ProviderName = typeof ProviderName.Type
export const ChannelStatus = Schema.Literals(["enabled", "disabled"])
export type ChannelStatus = typeof ChannelStatus.Type

export const Channel = Schema.Struct({
  id: ChannelId,
  account_id: AccountId,
  provider: ProviderName,
  /** The account's own mode: a live account's channel moves real money, a test account's the provider's test money. */
  mode: AccountMode,
  /** Payment method codes; `null` = every method the provider offers (PROVIDER_METHODS). */
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
export type Channel = typeof Channel.Type

/**
 * The payment methods Tender's adapter for each provider carries: cards (PaymentIntents on Stripe,
 * the Checkout API's scheme payments on Adyen). Both providers offer more (iDEAL, Pix, Boleto, …);
 * a method joins this list when its adapter does, so routing never picks a channel that cannot take
 * the payment. A channel may narrow this with `--methods`, never widen it.
 */
export const PROVIDER_METHODS: Readonly<Record<ProviderName, ReadonlyArray<string>>> = {
  stripe: ["card"],
  adyen: ["card"]
}

/**
 * Whether the adapter pays transfers out through the provider. Neither does: Stripe's are Connect
 * transfers and Adyen's the Balance Platform, other products than the card APIs a channel holds
 * credentials for. A transfer routed to such a channel is refused before anything is stored.
 */
export const PROVIDER_TRANSFERS: Readonly<Record<ProviderName, boolean>> = {
  stripe: false,
  adyen: false
}

export const PRIORITY_MIN = 0
export const PRIORITY_MAX = 1000
export const DEFAULT_PRIORITY = 0

/** Whether the channel takes this payment method (its `--methods`, else all its provider's adapter carries). */
export const takesMethod = (channel: Channel, method: string): boolean =>
  (channel.methods ?? PROVIDER_METHODS[channel.provider]).includes(method)

/** Whether the channel takes a payment of this method, currency and country (its mode and status aside). */
export const supports = (
  channel: Channel,
  payment: { readonly method: string; readonly currency: string; readonly country: string }
): boolean =>
  takesMethod(channel, payment.method) &&
  (channel.currencies === null || channel.currencies.includes(payment.currency)) &&
  (channel.countries === null || channel.countries.includes(payment.country))

// --- credentials ---------------------------------------------------------------------------

/**
 * Stripe: the secret (or restricted) API key of the Stripe account's mode, and the signing secret of
 * the webhook endpoint Stripe notifies (`Stripe-Signature`). Names as in Stripe's dashboard and SDK.
 */
export const StripeCredentials = Schema.Struct({
  provider: Schema.Literal("stripe"),
  secret_key: Schema.String,
  webhook_secret: Schema.String
})
export type StripeCredentials = typeof StripeCredentials.Type

/**
 * Adyen: the API key (`X-API-Key`), the merchant account payments are made under, the HMAC key of
 * the notification webhook (hex), and for live mode the company's live URL prefix (Customer Area,
 * Developers → API URLs), which the Adyen libraries need to reach the live endpoints.
 */
export const AdyenCredentials = Schema.Struct({
  provider: Schema.Literal("adyen"),
  api_key: Schema.String,
  merchant_account: Schema.String,
  hmac_key: Schema.String,
  live_url_prefix: Schema.NullOr(Schema.String)
})
export type AdyenCredentials = typeof AdyenCredentials.Type

export const ProviderCredentials = Schema.Union([StripeCredentials, AdyenCredentials])
export type ProviderCredentials = typeof ProviderCredentials.Type

interface CredentialField {
  readonly name: string
  readonly required: (mode: AccountMode) => boolean
  /** The problem with a present value, or `undefined` when it is acceptable. */
  readonly check: (value: string, mode: AccountMode) => string | undefined
}

const always = () => true
const noBlanks = (value: string) => /^\S+$/.test(value) ? undefined : "must be a non-empty string without spaces"

const CREDENTIAL_FIELDS: Readonly<Record<ProviderName, ReadonlyArray<CredentialField>>> = {
  stripe: [
    {
      name: "secret_key",
      required: always,
      check: (value, mode) =>
        /^(sk|rk)_(test|live)_[A-Za-z0-9]+$/.test(value)
          ? value.startsWith(`sk_${mode}_`) || value.startsWith(`rk_${mode}_`)
            ? undefined
            : `must be a ${mode}-mode key (sk_${mode}_… or rk_${mode}_…) for a ${mode}-mode channel`
          : "must be a Stripe secret or restricted key (sk_test_…, sk_live_…, rk_test_…, rk_live_…)"
    },
    {
      name: "webhook_secret",
      required: always,
      check: (value) => /^whsec_[A-Za-z0-9]+$/.test(value) ? undefined : "must be a Stripe webhook signing secret (whsec_…)"
    }
  ],
  adyen: [
    { name: "api_key", required: always, check: noBlanks },
    { name: "merchant_account", required: always, check: noBlanks },
    {
      name: "hmac_key",
      required: always,
      check: (value) =>
        /^(?:[0-9A-Fa-f]{2}){16,}$/.test(value) ? undefined : "must be the notification HMAC key as Adyen shows it (hexadecimal)"
    },
    {
      name: "live_url_prefix",
      // Adyen's live endpoints are per company (`{prefix}-checkout-live.adyenpayments.com`); test has one.
      required: (mode) => mode === "live",
      check: (value, mode) =>
        mode === "test"
          ? "is for live mode only (the test endpoints have no prefix)"
          : /^[A-Za-z0-9-]+$/.test(value)
          ? undefined
          : "must be the live URL prefix from the Customer Area (letters, digits and '-')"
    }
  ]
}

/**
 * Checks a credentials file's content for `provider` and `mode`: every field the provider needs,
 * each in its provider's format and of the channel's mode, and nothing else (a misspelt name is
 * reported, not silently dropped). Field errors are named `credentials.<field>`; the messages
 * never repeat a value, since values are secrets.
 */
export const parseCredentials = (
  provider: ProviderName,
  mode: AccountMode,
  input: unknown
): ProviderCredentials | ValidationFailed => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return new ValidationFailed({
      message: "Invalid request: credentials must be a JSON object",
      errors: [{ field: "credentials", message: "must be a JSON object" }]
    })
  }
  const given = input as Record<string, unknown>
  const fields = CREDENTIAL_FIELDS[provider]
  const errors: Array<FieldError> = []
  const values: Record<string, string | null> = {}
  for (const field of fields) {
    const value = given[field.name]
    const problem = value === undefined || value === null
      ? field.required(mode) ? "is required" : undefined
      : typeof value !== "string"
      ? "must be a string"
      : field.check(value, mode)
    if (problem !== undefined) errors.push({ field: `credentials.${field.name}`, message: problem })
    values[field.name] = typeof value === "string" ? value : null
  }
  for (const name of Object.keys(given)) {
    if (!fields.some((f) => f.name === name)) {
      errors.push({
        field: `credentials.${name}`,
        message: `is not one of the ${provider} credentials (expected ${fields.map((f) => f.name).join(", ")})`
      })
    }
  }
  if (errors.length > 0) {
    return new ValidationFailed({
      message: `Invalid request: the ${provider} credentials are incomplete or malformed`,
      errors
    })
  }
  return provider === "stripe"
    ? { provider, secret_key: values.secret_key!, webhook_secret: values.webhook_secret! }
    : {
      provider,
      api_key: values.api_key!,
      merchant_account: values.merchant_account!,
      hmac_key: values.hmac_key!,
      live_url_prefix: values.live_url_prefix ?? null
    }
}

// --- a new channel -------------------------------------------------------------------------

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
  now: string
): Channel | ValidationFailed => {
  const errors: Array<FieldError> = []
  if (settings.mode !== account.mode) {
    errors.push({
      field: "mode",
      message: `must be the account's mode (${account.mode}): a ${account.mode}-mode account uses only ${account.mode}-mode channels`
    })
  }
  const offered = PROVIDER_METHODS[settings.provider]
  const methods = codes("methods", settings.methods, (c) => c.toLowerCase(), (code) =>
    findMethod(code) === undefined
      ? `${code} is not a payment method`
      : offered.includes(code)
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

/** Disabling takes the channel out of routing; it is kept, since its transactions' follow-ups name it. */
export const disable = (channel: Channel, now: string): Channel | Conflict =>
  channel.status === "disabled"
    ? new Conflict({ message: `Channel ${channel.id} is already disabled` })
    : { ...channel, status: "disabled", updated_at: now }
