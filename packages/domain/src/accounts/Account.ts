/**
 * The Account aggregate: who a merchant is to Tender. Its changes are pure functions returning the
 * next state or a typed error; the Accounts use case persists what they return.
 */
import { Schema } from "effect"
import { parseCidr } from "../kernel/Cidr.ts"
import { Conflict, invalidField, MerchantOperationNotAllowedStatus, ValidationFailed } from "../kernel/Errors.ts"
import { AccountId } from "../kernel/Ids.ts"
import * as Money from "../kernel/Money.ts"

export const AccountMode = Schema.Literals(["test", "live"])
export type AccountMode = typeof AccountMode.Type
export const AccountStatus = Schema.Literals(["active", "suspended"])
export type AccountStatus = typeof AccountStatus.Type

/** A secret key as stored: only its SHA-256 hash, plus a short prefix to recognise it by. */
export const SecretKey = Schema.Struct({
  hash: Schema.String,
  /** e.g. `sk_test_4f3a…`, safe to show */
  hint: Schema.String,
  created_at: Schema.String,
  revoked_at: Schema.NullOr(Schema.String)
})
export type SecretKey = typeof SecretKey.Type

export const ProcessingProfile = Schema.Struct({
  code: Schema.String,
  name: Schema.NullOr(Schema.String),
  status: Schema.Literals(["active", "disabled"]),
  created_at: Schema.String,
  /**
   * Channels the profile's payments and transfers are pinned to (`tender accounts channels pin`):
   * routing picks among these only. Absent or empty: every channel of the account.
   */
  channels: Schema.optional(Schema.Array(Schema.String))
})
export type ProcessingProfile = typeof ProcessingProfile.Type

/** How the browser SDK presents a 3-D Secure challenge (contract.md: `tender accounts three-ds`). */
export const ThreeDsDisplayMode = Schema.Literals(["inline", "popup", "redirect"])
export type ThreeDsDisplayMode = typeof ThreeDsDisplayMode.Type

export const RateLimit = Schema.Struct({ per_second: Schema.Int, burst: Schema.Int })
export type RateLimit = typeof RateLimit.Type

/**
 * The operator's payout allowance (`tender accounts payouts`): it replaces the default rule (the
 * original's balance) for payouts (contract.md, Payouts: "an operator may set --max-per-payout and
 * --max-per-day instead"). With a currency it binds that currency's payouts, in its minor units;
 * without (null) it is the account's default for every currency that has none of its own, in whole
 * units (read in each payout's currency: `payoutLimitOf`).
 */
export const PayoutLimit = Schema.Struct({
  currency: Schema.NullOr(Schema.String),
  max_per_payout: Schema.Int,
  /** Payouts pending or succeeded that were created in one UTC day, this one included. */
  max_per_day: Schema.Int
})
export type PayoutLimit = typeof PayoutLimit.Type

export const Account = Schema.Struct({
  id: AccountId,
  name: Schema.String,
  mode: AccountMode,
  status: AccountStatus,
  secret_keys: Schema.Array(SecretKey),
  publishable_key: Schema.String,
  /** HMAC key shared with the merchant for request, response and webhook signatures. */
  signing_secret: Schema.String,
  /**
   * The signing secret before the last roll, honoured until `previous_signing_secret_expires_at`
   * (the overlap): it still verifies requests, and responses and webhooks carry a `v1` entry for it.
   */
  previous_signing_secret: Schema.optional(Schema.NullOr(Schema.String)),
  previous_signing_secret_expires_at: Schema.optional(Schema.NullOr(Schema.String)),
  /** CIDRs; empty means unrestricted. */
  ip_allowlist: Schema.Array(Schema.String),
  processing_profiles: Schema.Array(ProcessingProfile),
  vault_enabled: Schema.Boolean,
  /** Per-account override of the default token bucket. */
  rate_limit: Schema.NullOr(RateLimit),
  /** Shown to the browser SDK only (POST /v1/client/pay), never on the merchant API. */
  three_ds_display_mode: ThreeDsDisplayMode,
  /**
   * One per currency at most and one default (currency null) at most, the default first, then by
   * currency; absent or empty: every payout is bounded by its original's balance.
   */
  payout_limits: Schema.optional(Schema.Array(PayoutLimit)),
  created_at: Schema.String,
  updated_at: Schema.String,
  /** Optimistic concurrency: every update bumps it; a stale write is refused. */
  version: Schema.Int
})
export type Account = typeof Account.Type

export const secretKeyPrefix = (mode: AccountMode) => `sk_${mode}_`
export const publishableKeyPrefix = (mode: AccountMode) => `pk_${mode}_`

export const hintOf = (key: string): string => `${key.slice(0, key.lastIndexOf("_") + 5)}…`

/** The result of issuing keys: the plain secret key is returned once and never stored. */
export interface IssuedKeys {
  readonly secretKey: string
  readonly secretKeyHash: string
}

/**
 * Every change stamps `updated_at`, and drops a previous signing secret whose overlap has ended: it
 * verifies nothing by then (`signingSecrets`), so it need not be kept. Dropped here, at the
 * account's next change, rather than when a request reads the account past the expiry: that would
 * be a write on the hot path, racing the operator's own changes.
 */
const touch = (account: Account, now: string): Account =>
  account.previous_signing_secret_expires_at != null && Date.parse(account.previous_signing_secret_expires_at) <= Date.parse(now)
    ? { ...account, previous_signing_secret: null, previous_signing_secret_expires_at: null, updated_at: now }
    : { ...account, updated_at: now }

export const suspend = (account: Account, now: string): Account | Conflict =>
  account.status === "suspended"
    ? new Conflict({ message: `Account ${account.id} is already suspended` })
    : touch({ ...account, status: "suspended" }, now)

export const activate = (account: Account, now: string): Account | Conflict =>
  account.status === "active"
    ? new Conflict({ message: `Account ${account.id} is already active` })
    : touch({ ...account, status: "active" }, now)

/** Replaces the allowlist. `0.0.0.0/0 ::/0` lifts the restriction (it is stored as the empty list). */
export const setAllowlist = (
  account: Account,
  cidrs: ReadonlyArray<string>,
  now: string
): Account | ValidationFailed => {
  if (cidrs.length === 0) return invalidField("cidrs", "must name at least one CIDR")
  const errors = cidrs.flatMap((c, i) =>
    parseCidr(c) === undefined ? [{ field: `cidrs[${i}]`, message: `"${c}" is not an IPv4 or IPv6 CIDR` }] : []
  )
  if (errors.length > 0) return new ValidationFailed({ message: "Invalid CIDR in allowlist", errors })
  const normalized = cidrs.map((c) => c.trim())
  const unrestricted = normalized.some((c) => /^0\.0\.0\.0\/0$/.test(c)) && normalized.some((c) => /^::\/0$/.test(c))
  return touch({ ...account, ip_allowlist: unrestricted ? [] : normalized }, now)
}

const PROFILE_CODE = /^[a-z0-9][a-z0-9_-]{0,63}$/

export const addProfile = (
  account: Account,
  code: string,
  name: string | null,
  now: string
): Account | ValidationFailed | Conflict => {
  if (!PROFILE_CODE.test(code)) {
    return invalidField("code", "must be 1–64 lowercase letters, digits, '_' or '-', starting with a letter or digit")
  }
  const existing = account.processing_profiles.find((p) => p.code === code)
  if (existing !== undefined) {
    return new Conflict({ message: `Processing profile ${code} already exists (${existing.status})` })
  }
  return touch({
    ...account,
    processing_profiles: [...account.processing_profiles, { code, name, status: "active", created_at: now }]
  }, now)
}

export const disableProfile = (account: Account, code: string, now: string): Account | ValidationFailed | Conflict => {
  const existing = account.processing_profiles.find((p) => p.code === code)
  if (existing === undefined) return invalidField("code", `no processing profile ${code} on this account`)
  if (existing.status === "disabled") return new Conflict({ message: `Processing profile ${code} is already disabled` })
  return touch({
    ...account,
    processing_profiles: account.processing_profiles.map((p) => p.code === code ? { ...p, status: "disabled" } : p)
  }, now)
}

/** Pins an active profile to `channels` (checked by the Channels use case); an empty list unpins it. */
export const pinChannels = (account: Account, code: string, channels: ReadonlyArray<string>, now: string): Account | ValidationFailed => {
  const existing = account.processing_profiles.find((p) => p.code === code)
  if (existing === undefined) return invalidField("profile", `no processing profile ${code} on this account`)
  if (existing.status === "disabled") return invalidField("profile", `processing profile ${code} is disabled`)
  return touch({
    ...account,
    processing_profiles: account.processing_profiles.map((p) => {
      if (p.code !== code) return p
      const { channels: _previous, ...rest } = p
      return channels.length === 0 ? rest : { ...rest, channels: [...new Set(channels)] }
    })
  }, now)
}

/** Why the account may not collect a payment now (not active: suspended), or `undefined` when it may. */
export const notCollecting = (account: Account): MerchantOperationNotAllowedStatus | undefined =>
  account.status === "active"
    ? undefined
    : new MerchantOperationNotAllowedStatus({ message: `Account is ${account.status}: payments are not allowed` })

export const enableVault = (account: Account, now: string): Account | Conflict =>
  account.vault_enabled
    ? new Conflict({ message: `The vault is already enabled on ${account.id}` })
    : touch({ ...account, vault_enabled: true }, now)

/** Revokes every live secret key and adds the new one. */
export const rollKeys = (account: Account, issued: IssuedKeys, now: string): Account =>
  touch({
    ...account,
    secret_keys: [
      ...account.secret_keys.map((k) => (k.revoked_at === null ? { ...k, revoked_at: now } : k)),
      { hash: issued.secretKeyHash, hint: hintOf(issued.secretKey), created_at: now, revoked_at: null }
    ]
  }, now)

/** The longest overlap a signing-secret roll may give the previous secret (30 days). */
export const MAX_SIGNING_SECRET_OVERLAP_SECONDS = 30 * 24 * 3600

/**
 * Replaces the signing secret; the current one stays valid for `overlapSeconds` (0: revoked now).
 * Only one previous secret is kept: rolling again during an overlap ends the older one's.
 */
export const rollSigningSecret = (
  account: Account,
  secret: string,
  overlapSeconds: number,
  now: string
): Account | ValidationFailed => {
  if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_SIGNING_SECRET_OVERLAP_SECONDS) {
    return invalidField("overlap", "must be a duration between 0 and 30 days (e.g. 24h)")
  }
  return touch({
    ...account,
    signing_secret: secret,
    previous_signing_secret: overlapSeconds === 0 ? null : account.signing_secret,
    previous_signing_secret_expires_at: overlapSeconds === 0
      ? null
      : new Date(Date.parse(now) + overlapSeconds * 1000).toISOString()
  }, now)
}

/**
 * The secrets that sign and verify for the account at `nowMs`: the current one first, then the
 * previous one while its overlap lasts. Requests verify under any; responses and webhooks carry a
 * `v1` entry for each, so a merchant holding either secret can check them.
 */
export const signingSecrets = (account: Account, nowMs: number): ReadonlyArray<string> =>
  account.previous_signing_secret != null && account.previous_signing_secret_expires_at != null &&
    Date.parse(account.previous_signing_secret_expires_at) > nowMs
    ? [account.signing_secret, account.previous_signing_secret]
    : [account.signing_secret]

export const setRateLimit = (
  account: Account,
  perSecond: number,
  burst: number,
  now: string
): Account | ValidationFailed => {
  if (!Number.isInteger(perSecond) || perSecond < 1) return invalidField("per_second", "must be a positive integer")
  if (!Number.isInteger(burst) || burst < perSecond) {
    return invalidField("burst", "must be an integer at least as large as per_second")
  }
  return touch({ ...account, rate_limit: { per_second: perSecond, burst } }, now)
}

/** A payout limit's currency as given: absent is the account's default (null). */
const limitCurrency = (currency: string | undefined): string | null | ValidationFailed => {
  if (currency === undefined) return null
  const code = currency.trim().toUpperCase()
  return Money.isCurrency(code) ? code : invalidField("currency", "must be an ISO 4217 currency code such as USD")
}

/**
 * Sets the payout allowance of one currency (decimal amounts in it, as the API takes them) or, with
 * no currency, the account's default (whole units: Money.parseWholeUnits); a per-payout cap above the
 * daily one would never bind, so it is refused.
 */
export const setPayoutLimit = (
  account: Account,
  input: { readonly currency?: string | undefined; readonly max_per_payout: string; readonly max_per_day: string },
  now: string
): Account | ValidationFailed => {
  const currency = limitCurrency(input.currency)
  if (currency instanceof ValidationFailed) return currency
  const errors: Array<{ readonly field: string; readonly message: string }> = []
  const amount = (field: "max_per_payout" | "max_per_day") => {
    const text = input[field].trim()
    const parsed = currency === null ? Money.parseWholeUnits(text) : Money.parseAmount(text, currency)
    if ("units" in parsed) return parsed.units
    if ("minor" in parsed) return parsed.minor
    errors.push({ field, message: currency === null ? Money.wholeUnitsErrorMessage(parsed.error) : Money.amountErrorMessage(parsed.error, currency) })
    return 0
  }
  const perPayout = amount("max_per_payout")
  const perDay = amount("max_per_day")
  if (errors.length === 0 && perPayout > perDay) errors.push({ field: "max_per_payout", message: "must not exceed max_per_day" })
  if (errors.length > 0) return new ValidationFailed({ message: "Invalid payout limit", errors })
  const others = (account.payout_limits ?? []).filter((l) => l.currency !== currency)
  const limits = [...others, { currency, max_per_payout: perPayout, max_per_day: perDay }]
    .sort((a, b) => a.currency === null ? -1 : b.currency === null ? 1 : a.currency.localeCompare(b.currency))
  return touch({ ...account, payout_limits: limits }, now)
}

/** Returns payouts in `currency` to the default (the account's default limit, else the balance rule); no currency: clears the default. */
export const clearPayoutLimit = (account: Account, currency: string | undefined, now: string): Account | ValidationFailed | Conflict => {
  const code = limitCurrency(currency)
  if (code instanceof ValidationFailed) return code
  const limits = account.payout_limits ?? []
  if (!limits.some((l) => l.currency === code)) return new Conflict({ message: `${account.id} has no ${code === null ? "default payout limit" : `payout limit in ${code}`}` })
  return touch({ ...account, payout_limits: limits.filter((l) => l.currency !== code) }, now)
}

/**
 * The operator's payout limit in force for `currency`, in its minor units, if one replaces the
 * balance rule: the currency's own, else the account's default read in it.
 */
export const payoutLimitOf = (account: Account, currency: string): PayoutLimit | undefined => {
  const limits = account.payout_limits ?? []
  const own = limits.find((l) => l.currency === currency)
  if (own !== undefined) return own
  const fallback = limits.find((l) => l.currency === null)
  return fallback === undefined ? undefined : {
    currency,
    max_per_payout: Money.wholeToMinor(fallback.max_per_payout, currency),
    max_per_day: Money.wholeToMinor(fallback.max_per_day, currency)
  }
}

export const setThreeDsDisplayMode = (account: Account, mode: string, now: string): Account | ValidationFailed =>
  Schema.is(ThreeDsDisplayMode)(mode)
    ? touch({ ...account, three_ds_display_mode: mode }, now)
    : invalidField("display_mode", "must be inline, popup or redirect")

/** A profile code passed on a request is usable only when it exists and is active. */
export const activeProfile = (account: Account, code: string): ProcessingProfile | undefined =>
  account.processing_profiles.find((p) => p.code === code && p.status === "active")
