/**
 * The handlers of `tender accounts …` (commands/Accounts.ts declares them). Each calls one method of
 * the Accounts use case, which decides (status changes, CIDR checks, conflicts); this file presents.
 * No view shows key hashes or signing secrets, except the ones a create or a roll prints once.
 */
import { type Account, AccountKeys, Accounts, type CreatedAccount, Errors, Money } from "@tender/domain"
import { Effect, Option } from "effect"
import type * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"

const handler = Services.useCase(Accounts)

interface Id {
  readonly id: string
}

/** contract.md, Payouts: what bounds a payout where no operator limit applies. */
const BALANCE_RULE = "the original payment's settled amount less its refunds and earlier payouts"
const UNLIMITED = "every currency without its own limits"

/**
 * Operator limits replace the balance rule where they apply (contract.md: "instead"; a payout may
 * then exceed its payment: winnings, marketplace earnings), and the account's default is read in
 * whole units of each currency (500 is 500 JPY and 500.000 KWD): every view says both, the JSON in
 * its field names (`replaces_balance_rule_in`, `unit`).
 */
const scopeOf = (currency: string | null) =>
  currency === null
    ? { replaces_balance_rule_in: UNLIMITED, unit: "whole units of each currency" }
    : { replaces_balance_rule_in: currency, unit: currency }

/** Payout limits as operators give them: amounts in major units of their currency (JSON numbers, as the API's amounts). */
const payoutLimitsView = (a: Account.Account) =>
  (a.payout_limits ?? []).map((l) => ({
    currency: l.currency,
    ...scopeOf(l.currency),
    max_per_payout: l.currency === null ? l.max_per_payout : Money.toMajor(l.max_per_payout, l.currency),
    max_per_day: l.currency === null ? l.max_per_day : Money.toMajor(l.max_per_day, l.currency)
  }))

/** A limit's amount as written: in its currency's decimals, or whole units for the default. */
const limitAmount = (minor: number, currency: string | null) => currency === null ? String(minor) : Money.toDecimalString(minor, currency)

const payoutRule = (a: Account.Account): string => {
  const limits = a.payout_limits ?? []
  if (limits.length === 0) return `at most ${BALANCE_RULE}`
  const each = limits.map((l) => {
    const [perPayout, perDay] = [limitAmount(l.max_per_payout, l.currency), limitAmount(l.max_per_day, l.currency)]
    return l.currency === null
      ? `${UNLIMITED}: at most ${perPayout} per payout and ${perDay} per UTC day, in whole units of each currency (${perPayout} JPY, ${perPayout} USD and ${perPayout} KWD alike, not converted)`
      : `${l.currency}: at most ${perPayout} per payout and ${perDay} per UTC day`
  })
  const rest = limits.some((l) => l.currency === null) ? [] : [`${limits.length === 1 ? "any other currency" : "other currencies"}: at most ${BALANCE_RULE}`]
  return `${[...each, ...rest].join("; ")}. The limits replace the balance rule (at most ${BALANCE_RULE}) ` +
    "where they apply: a payout may then exceed what its payment took"
}

/** What operators see of an account: no key hashes, no signing secret, no version counter. */
const view = (a: Account.Account) => ({
  id: a.id,
  name: a.name,
  mode: a.mode,
  status: a.status,
  publishable_key: a.publishable_key,
  secret_keys: a.secret_keys.map((k) => ({ hint: k.hint, created_at: k.created_at, revoked_at: k.revoked_at, expires_at: k.expires_at ?? null })),
  ip_allowlist: a.ip_allowlist,
  processing_profiles: a.processing_profiles,
  vault_enabled: a.vault_enabled,
  rate_limit: a.rate_limit,
  payout_limits: payoutLimitsView(a),
  three_ds_display_mode: a.three_ds_display_mode,
  /** When the previous signing secret stops verifying (a roll's overlap); never the secret itself. */
  previous_signing_secret_expires_at: a.previous_signing_secret_expires_at ?? null,
  created_at: a.created_at,
  updated_at: a.updated_at
})

const describe = (a: Account.Account): string => {
  // A temporary key (a CLI's listen or trigger) is shown with its end.
  const live = a.secret_keys.filter((k) => AccountKeys.isLive(k, Date.now()))
    .map((k) => (k.expires_at == null ? k.hint : `${k.hint} (temporary, until ${k.expires_at})`))
  const revoked = a.secret_keys.length - live.length
  return Table.fields([
    ["id", a.id],
    ["name", a.name],
    ["mode", a.mode],
    ["status", a.status],
    ["publishable key", a.publishable_key],
    ["secret key", [...live, ...(revoked > 0 ? [`${revoked} revoked`] : [])].join(", ")],
    ["ip allowlist", a.ip_allowlist.length === 0 ? "unrestricted" : a.ip_allowlist.join(", ")],
    [
      "profiles",
      a.processing_profiles.length === 0
        ? "none"
        : a.processing_profiles.map((p) => `${p.code}${p.name === null ? "" : ` "${p.name}"`} (${p.status})`).join(", ")
    ],
    ["vault", a.vault_enabled ? "enabled" : "disabled"],
    ["rate limit", a.rate_limit === null ? "default" : `${a.rate_limit.per_second}/s, burst ${a.rate_limit.burst}`],
    ["payouts", payoutRule(a)],
    ["3-D Secure display", a.three_ds_display_mode],
    ...(a.previous_signing_secret_expires_at == null || Date.parse(a.previous_signing_secret_expires_at) <= Date.now()
      ? []
      : [["previous signing secret", `verifies until ${a.previous_signing_secret_expires_at}`] as const]),
    ["created", a.created_at],
    ["updated", a.updated_at]
  ])
}

/** What a command changing one account prints: a summary line, then the account as it is now. */
const changed = <I>(headline: (account: Account.Account, input: I) => string) =>
(input: I): Output.Presentation<Account.Account> => ({
  json: view,
  text: (a) => `${headline(a, input)}\n\n${describe(a)}`
})

const created: Output.Presentation<CreatedAccount> = {
  // Built key by key: the contract fixes exactly these keys in this order.
  json: (c) => ({
    account_id: c.account_id,
    mode: c.mode,
    secret_key: c.secret_key,
    publishable_key: c.publishable_key,
    signing_secret: c.signing_secret
  }),
  text: (c) =>
    [
      `Created ${c.mode}-mode account ${c.account_id}.`,
      "",
      Table.fields([
        ["account id", c.account_id],
        ["mode", c.mode],
        ["secret key", c.secret_key],
        ["publishable key", c.publishable_key],
        ["signing secret", c.signing_secret]
      ]),
      "",
      "Store the secret key and the signing secret now: they are shown only this once",
      "(Tender keeps only a hash of the secret key; `tender accounts keys roll` issues a new one)."
    ].join("\n")
}

export const create = handler(
  (accounts, input: { readonly name: string; readonly mode: Account.AccountMode }) => accounts.create(input),
  () => created
)

export const list = handler((accounts, _: {}) => accounts.list(), () => ({
  json: (all) => ({ data: all.map(view) }),
  text: (all) =>
    all.length === 0
      ? "No accounts."
      : Table.table(
        ["ID", "NAME", "MODE", "STATUS", "CREATED"],
        all.map((a) => [a.id, a.name, a.mode, a.status, a.created_at])
      )
}))

export const get = handler((accounts, { id }: Id) => accounts.get(id), () => ({ json: view, text: describe }))

export const suspend = handler((accounts, { id }: Id) => accounts.suspend(id), changed((a) => `Suspended ${a.id}.`))

export const activate = handler((accounts, { id }: Id) => accounts.activate(id), changed((a) => `Activated ${a.id}.`))

export const allowlist = handler(
  (accounts, { cidrs, id }: Id & { readonly cidrs: ReadonlyArray<string> }) => accounts.setAllowlist(id, cidrs),
  changed((a) =>
    a.ip_allowlist.length === 0
      ? `${a.id} accepts API calls from any address.`
      : `${a.id} accepts API calls only from ${a.ip_allowlist.join(", ")}.`
  )
)

export const addProfile = handler(
  (accounts, { code, id, name }: Id & { readonly code: string; readonly name: Option.Option<string> }) =>
    accounts.addProfile(id, code, Option.getOrNull(name)),
  changed((a, { code }) => `Added processing profile ${code} to ${a.id}.`)
)

export const disableProfile = handler(
  (accounts, { code, id }: Id & { readonly code: string }) => accounts.disableProfile(id, code),
  changed((a, { code }) => `Disabled processing profile ${code} on ${a.id}.`)
)

export const enableVault = handler((accounts, { id }: Id) => accounts.enableVault(id), changed((a) => `Enabled the card vault on ${a.id}.`))

export const rollKeys = handler((accounts, { id }: Id) => accounts.rollKeys(id), () => ({
  json: (r) => ({ account_id: r.account.id, secret_key: r.secret_key }),
  text: (r) =>
    [
      `Rolled the secret key of ${r.account.id}: every earlier secret key is revoked.`,
      "",
      `New secret key: ${r.secret_key}`,
      "",
      "Store it now: it is shown only this once."
    ].join("\n")
}))

/** `30s`, `15m`, `24h`, `7d` (or bare seconds) → seconds; NaN when not a duration (the use case refuses it). */
const overlapSeconds = (text: string): number => {
  const match = /^\s*(\d{1,9})\s*([smhd]?)\s*$/.exec(text)
  if (match === null) return Number.NaN
  return Number(match[1]) * { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as "" | "s" | "m" | "h" | "d"]
}

export const rollSigningSecret = handler(
  (accounts, { id, overlap }: Id & { readonly overlap: string }) => accounts.rollSigningSecret(id, overlapSeconds(overlap)),
  () => ({
    json: (r) => ({
      account_id: r.account.id,
      signing_secret: r.signing_secret,
      previous_secret_expires_at: r.account.previous_signing_secret_expires_at ?? null
    }),
    text: (r) =>
      [
        r.account.previous_signing_secret_expires_at == null
          ? `Rolled the signing secret of ${r.account.id}: the previous one is revoked.`
          : `Rolled the signing secret of ${r.account.id}: the previous one keeps verifying until ${r.account.previous_signing_secret_expires_at}.`,
        "",
        `New signing secret: ${r.signing_secret}`,
        "",
        "Store it now: it is shown only this once. Until the overlap ends, responses and webhooks carry",
        "a v1= signature for each secret."
      ].join("\n")
  })
)

export const rateLimit = handler(
  (accounts, { burst, id, perSecond }: Id & { readonly perSecond: number; readonly burst: number }) => accounts.setRateLimit(id, perSecond, burst),
  changed((a, { burst, perSecond }) => `${a.id} is limited to ${perSecond}/s, burst ${burst}.`)
)

interface PayoutLimitsInput extends Id {
  readonly currency: Option.Option<string>
  readonly maxPerPayout: Option.Option<string>
  readonly maxPerDay: Option.Option<string>
  readonly clear: boolean
}

export const payoutLimits = handler(
  (accounts, { clear, currency, id, maxPerDay, maxPerPayout }: PayoutLimitsInput) => {
    const perPayout = Option.getOrUndefined(maxPerPayout)
    const perDay = Option.getOrUndefined(maxPerDay)
    const code = Option.getOrUndefined(currency)
    if (!clear && perPayout === undefined && perDay === undefined) return accounts.get(id)
    const missing = [
      ...(!clear && perPayout === undefined ? [{ field: "max_per_payout", message: "is required with --max-per-day" }] : []),
      ...(!clear && perDay === undefined ? [{ field: "max_per_day", message: "is required with --max-per-payout" }] : []),
      ...(clear && (perPayout !== undefined || perDay !== undefined) ? [{ field: "clear", message: "cannot be combined with limits" }] : [])
    ]
    if (missing.length > 0) return Effect.fail(new Errors.ValidationFailed({ message: "Invalid payout limit", errors: missing }))
    return clear
      ? accounts.clearPayoutLimit(id, code)
      : accounts.setPayoutLimit(id, { currency: code, max_per_payout: perPayout!, max_per_day: perDay! })
  },
  ({ clear, maxPerDay, maxPerPayout }) => ({
    json: (a) => ({ account_id: a.id, payout_limits: payoutLimitsView(a) }),
    text: (a) => {
      const limits = a.payout_limits ?? []
      const headline = clear
        ? `Cleared a payout limit of ${a.id}.`
        : Option.isSome(maxPerPayout) || Option.isSome(maxPerDay)
        ? `Set a payout limit of ${a.id}.`
        : `Payout limits of ${a.id}.`
      const table = limits.length === 0
        ? `No limits: every payout is at most ${BALANCE_RULE}.`
        : Table.table(
          ["CURRENCY", "MAX PER PAYOUT", "MAX PER DAY", "UNIT", "REPLACES THE BALANCE RULE IN"],
          limits.map((l) => {
            const scope = scopeOf(l.currency)
            return [l.currency ?? "(default)", limitAmount(l.max_per_payout, l.currency), limitAmount(l.max_per_day, l.currency), scope.unit, scope.replaces_balance_rule_in]
          })
        )
      return `${headline}\n\nPayouts: ${payoutRule(a)}.\n\n${table}`
    }
  })
)

export const threeDs = handler(
  (accounts, { displayMode, id }: Id & { readonly displayMode: Account.ThreeDsDisplayMode }) => accounts.setThreeDsDisplayMode(id, displayMode),
  changed((a) => `${a.id} shows 3-D Secure challenges ${a.three_ds_display_mode === "inline" ? "inline" : a.three_ds_display_mode === "popup" ? "in a popup" : "by redirecting the page"}.`)
)
