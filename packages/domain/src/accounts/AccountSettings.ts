/**
 * The operator's settings of an account: IP allowlist, processing profiles and their channel pins,
 * the vault, the rate limit, payout limits and the 3-D Secure display mode. Each is a pure revision
 * of the Account aggregate (the status is never one of them: Account.transition), or why not.
 */
import { Result, Schema } from "effect"
import { parseCidr } from "../kernel/Cidr.ts"
import { Conflict, invalidField, ValidationFailed } from "../kernel/Errors.ts"
import * as Money from "../kernel/Money.ts"
import { type Account, amend, type Decision, ThreeDsDisplayMode } from "./Account.ts"
import * as Profile from "./ProcessingProfile.ts"

/** Replaces the allowlist. `0.0.0.0/0 ::/0` lifts the restriction (it is stored as the empty list). */
export const setAllowlist = (account: Account, cidrs: ReadonlyArray<string>, now: string): Decision<ValidationFailed> => {
  if (cidrs.length === 0) return Result.fail(invalidField("cidrs", "must name at least one CIDR"))
  const errors = cidrs.flatMap((c, i) =>
    parseCidr(c) === undefined ? [{ field: `cidrs[${i}]`, message: `"${c}" is not an IPv4 or IPv6 CIDR` }] : []
  )
  if (errors.length > 0) return Result.fail(new ValidationFailed({ message: "Invalid CIDR in allowlist", errors }))
  const normalized = cidrs.map((c) => c.trim())
  const unrestricted = normalized.some((c) => /^0\.0\.0\.0\/0$/.test(c)) && normalized.some((c) => /^::\/0$/.test(c))
  return Result.succeed(amend(account, { ip_allowlist: unrestricted ? [] : normalized }, now))
}

export const addProfile = (
  account: Account,
  code: string,
  name: string | null,
  now: string
): Decision<ValidationFailed | Conflict> => {
  if (!Profile.PROFILE_CODE.test(code)) {
    return Result.fail(invalidField("code", "must be 1–64 lowercase letters, digits, '_' or '-', starting with a letter or digit"))
  }
  const existing = account.processing_profiles.find((p) => p.code === code)
  if (existing !== undefined) {
    return Result.fail(new Conflict({ message: `Processing profile ${code} already exists (${existing.status})` }))
  }
  return Result.succeed(amend(account, { processing_profiles: [...account.processing_profiles, Profile.born(code, name, now)] }, now))
}

export const disableProfile = (account: Account, code: string, now: string): Decision<ValidationFailed | Conflict> => {
  const existing = account.processing_profiles.find((p) => p.code === code)
  if (existing === undefined) return Result.fail(invalidField("code", `no processing profile ${code} on this account`))
  return Result.map(Profile.transition(existing, "disable"), (disabled) =>
    amend(account, { processing_profiles: account.processing_profiles.map((p) => p.code === code ? disabled : p) }, now))
}

/** Pins an active profile to `channels` (checked by the Channels use case); an empty list unpins it. */
export const pinChannels = (account: Account, code: string, channels: ReadonlyArray<string>, now: string): Decision<ValidationFailed> => {
  const existing = account.processing_profiles.find((p) => p.code === code)
  if (existing === undefined) return Result.fail(invalidField("profile", `no processing profile ${code} on this account`))
  if (existing.status === "disabled") return Result.fail(invalidField("profile", `processing profile ${code} is disabled`))
  return Result.succeed(amend(account, {
    processing_profiles: account.processing_profiles.map((p) => {
      if (p.code !== code) return p
      const { channels: _previous, ...rest } = p
      return channels.length === 0 ? rest : { ...rest, channels: [...new Set(channels)] }
    })
  }, now))
}

export const enableVault = (account: Account, now: string): Decision<Conflict> =>
  account.vault_enabled
    ? Result.fail(new Conflict({ message: `The vault is already enabled on ${account.id}` }))
    : Result.succeed(amend(account, { vault_enabled: true }, now))

export const setRateLimit = (account: Account, perSecond: number, burst: number, now: string): Decision<ValidationFailed> => {
  if (!Number.isInteger(perSecond) || perSecond < 1) return Result.fail(invalidField("per_second", "must be a positive integer"))
  if (!Number.isInteger(burst) || burst < perSecond) {
    return Result.fail(invalidField("burst", "must be an integer at least as large as per_second"))
  }
  return Result.succeed(amend(account, { rate_limit: { per_second: perSecond, burst } }, now))
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
): Decision<ValidationFailed> => {
  const currency = limitCurrency(input.currency)
  if (currency instanceof ValidationFailed) return Result.fail(currency)
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
  if (errors.length > 0) return Result.fail(new ValidationFailed({ message: "Invalid payout limit", errors }))
  const others = (account.payout_limits ?? []).filter((l) => l.currency !== currency)
  const limits = [...others, { currency, max_per_payout: perPayout, max_per_day: perDay }]
    .sort((a, b) => a.currency === null ? -1 : b.currency === null ? 1 : a.currency.localeCompare(b.currency))
  return Result.succeed(amend(account, { payout_limits: limits }, now))
}

/** Returns payouts in `currency` to the default (the account's default limit, else the balance rule); no currency: clears the default. */
export const clearPayoutLimit = (account: Account, currency: string | undefined, now: string): Decision<ValidationFailed | Conflict> => {
  const code = limitCurrency(currency)
  if (code instanceof ValidationFailed) return Result.fail(code)
  const limits = account.payout_limits ?? []
  if (!limits.some((l) => l.currency === code)) {
    return Result.fail(new Conflict({ message: `${account.id} has no ${code === null ? "default payout limit" : `payout limit in ${code}`}` }))
  }
  return Result.succeed(amend(account, { payout_limits: limits.filter((l) => l.currency !== code) }, now))
}

export const setThreeDsDisplayMode = (account: Account, mode: string, now: string): Decision<ValidationFailed> =>
  Schema.is(ThreeDsDisplayMode)(mode)
    ? Result.succeed(amend(account, { three_ds_display_mode: mode }, now))
    : Result.fail(invalidField("display_mode", "must be inline, popup or redirect"))
