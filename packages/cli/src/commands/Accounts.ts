/**
 * `tender accounts …`: the operator's hold on merchant accounts. Each command calls one method of
 * the Accounts use case, which decides (status changes, CIDR checks, conflicts); this file parses
 * and presents. Secrets: `create` prints the secret key and signing secret once and `keys roll` the
 * new secret key once, `signing-secret roll` the new signing secret once; every other view leaves
 * out key hashes and the signing secrets.
 */
import { Account, Accounts, type CreatedAccount, Errors, Money } from "@tender/domain"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Output from "../Output.ts"
import * as Services from "../Services.ts"
import * as Table from "../Table.ts"
import { channels } from "./Channels.ts"

const accountId = Argument.String("id").pipe(Argument.withDescription("Account id (acct_…)"))

const accountsCommand = Services.useCaseCommand(Accounts)

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
  secret_keys: a.secret_keys.map((k) => ({ hint: k.hint, created_at: k.created_at, revoked_at: k.revoked_at })),
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
  const live = a.secret_keys.filter((k) => k.revoked_at === null).map((k) => k.hint)
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

const create = accountsCommand(
  "create",
  {
    name: Flag.String("name").pipe(Flag.withDescription("Merchant name (1–200 characters)")),
    mode: Flag.Literals("mode", Account.AccountMode.literals).pipe(
      Flag.withDescription("test (sandbox provider, sk_test_ keys) or live"),
      Flag.withDefault("test")
    )
  },
  (accounts, input) => accounts.create(input),
  () => created
).pipe(Command.withDescription("Create an account and print its keys (the secret key is shown once)"))

const list = accountsCommand("list", {}, (accounts) => accounts.list(), () => ({
  json: (all) => ({ data: all.map(view) }),
  text: (all) =>
    all.length === 0
      ? "No accounts."
      : Table.table(
        ["ID", "NAME", "MODE", "STATUS", "CREATED"],
        all.map((a) => [a.id, a.name, a.mode, a.status, a.created_at])
      )
})).pipe(Command.withDescription("List accounts"))

const get = accountsCommand("get", { id: accountId }, (accounts, { id }) => accounts.get(id), () => ({
  json: view,
  text: describe
})).pipe(Command.withDescription("Show one account (never its key hashes or signing secret)"))

const suspend = accountsCommand(
  "suspend",
  { id: accountId },
  (accounts, { id }) => accounts.suspend(id),
  changed((a) => `Suspended ${a.id}.`)
).pipe(Command.withDescription("Suspend an account"))

const activate = accountsCommand(
  "activate",
  { id: accountId },
  (accounts, { id }) => accounts.activate(id),
  changed((a) => `Activated ${a.id}.`)
).pipe(Command.withDescription("Activate a suspended account"))

const allowlist = accountsCommand(
  "allowlist",
  {
    id: accountId,
    cidrs: Argument.String("cidr").pipe(
      Argument.withDescription("IPv4 or IPv6 CIDR; the list replaces the current one, 0.0.0.0/0 ::/0 lifts it"),
      Argument.atLeast(1)
    )
  },
  (accounts, { cidrs, id }) => accounts.setAllowlist(id, cidrs),
  changed((a) =>
    a.ip_allowlist.length === 0
      ? `${a.id} accepts API calls from any address.`
      : `${a.id} accepts API calls only from ${a.ip_allowlist.join(", ")}.`
  )
).pipe(Command.withDescription("Replace the IP allowlist of an account"))

const profiles = Command.make("profiles").pipe(
  Command.withDescription("Manage the processing profiles of an account"),
  Command.withSubcommands([
    accountsCommand(
      "add",
      {
        id: accountId,
        code: Flag.String("code").pipe(Flag.withDescription("Profile code: lowercase letters, digits, '_' or '-'")),
        name: Flag.String("name").pipe(Flag.withDescription("Display name"), Flag.optional)
      },
      (accounts, { code, id, name }) => accounts.addProfile(id, code, Option.getOrNull(name)),
      changed((a, { code }) => `Added processing profile ${code} to ${a.id}.`)
    ).pipe(Command.withDescription("Add a processing profile")),
    accountsCommand(
      "disable",
      { id: accountId, code: Argument.String("code").pipe(Argument.withDescription("Profile code")) },
      (accounts, { code, id }) => accounts.disableProfile(id, code),
      changed((a, { code }) => `Disabled processing profile ${code} on ${a.id}.`)
    ).pipe(Command.withDescription("Disable a processing profile"))
  ])
)

const vault = Command.make("vault").pipe(
  Command.withDescription("Manage the card vault of an account"),
  Command.withSubcommands([
    accountsCommand(
      "enable",
      { id: accountId },
      (accounts, { id }) => accounts.enableVault(id),
      changed((a) => `Enabled the card vault on ${a.id}.`)
    ).pipe(Command.withDescription("Enable the card vault"))
  ])
)

const keys = Command.make("keys").pipe(
  Command.withDescription("Manage the secret keys of an account"),
  Command.withSubcommands([
    accountsCommand("roll", { id: accountId }, (accounts, { id }) => accounts.rollKeys(id), () => ({
      json: (r) => ({ account_id: r.account.id, secret_key: r.secret_key }),
      text: (r) =>
        [
          `Rolled the secret key of ${r.account.id}: every earlier secret key is revoked.`,
          "",
          `New secret key: ${r.secret_key}`,
          "",
          "Store it now: it is shown only this once."
        ].join("\n")
    })).pipe(Command.withDescription("Revoke every secret key and issue a new one (shown once)"))
  ])
)

/** `30s`, `15m`, `24h`, `7d` (or bare seconds) → seconds; NaN when not a duration (the use case refuses it). */
const overlapSeconds = (text: string): number => {
  const match = /^\s*(\d{1,9})\s*([smhd]?)\s*$/.exec(text)
  if (match === null) return Number.NaN
  return Number(match[1]) * { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as "" | "s" | "m" | "h" | "d"]
}

const signingSecret = Command.make("signing-secret").pipe(
  Command.withDescription("Manage the signing secret of an account"),
  Command.withSubcommands([
    accountsCommand(
      "roll",
      {
        id: accountId,
        overlap: Flag.String("overlap").pipe(
          Flag.withDescription("How long the current secret keeps verifying (and signing beside the new one): 30m, 24h, 7d; 0 ends it now; at most 30d"),
          Flag.withDefault("24h")
        )
      },
      (accounts, { id, overlap }) => accounts.rollSigningSecret(id, overlapSeconds(overlap)),
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
    ).pipe(Command.withDescription("Issue a new signing secret (shown once); the old one verifies until the overlap ends"))
  ])
)

const rateLimit = accountsCommand(
  "rate-limit",
  {
    id: accountId,
    perSecond: Flag.Int("per-second").pipe(Flag.withDescription("Sustained requests per second")),
    burst: Flag.Int("burst").pipe(Flag.withDescription("Bucket size; at least --per-second"))
  },
  (accounts, { burst, id, perSecond }) => accounts.setRateLimit(id, perSecond, burst),
  changed((a, { burst, perSecond }) => `${a.id} is limited to ${perSecond}/s, burst ${burst}.`)
).pipe(Command.withDescription("Set the API rate limit of an account (token bucket)"))

/**
 * contract.md: `tender accounts payouts ID --max-per-payout A --max-per-day A`: without `--currency`
 * the limits are the account's default for every currency (A in whole units, read in each payout's
 * currency); `--currency C` sets C's own, which takes precedence (A in C's decimals). With no limit
 * flags the command shows the setting; `--clear` removes the default, or C's limits with `--currency`.
 */
const payoutLimits = accountsCommand(
  "payouts",
  {
    id: accountId,
    currency: Flag.String("currency").pipe(
      Flag.withDescription("ISO 4217 code whose payouts the limits bound instead of the original's balance (amounts decimal, in its units); without it, the account's default for every currency without its own (amounts in whole units of each: 500 is 500 JPY and 500 KWD)"),
      Flag.optional
    ),
    maxPerPayout: Flag.String("max-per-payout").pipe(Flag.withDescription("Largest single payout, in place of the original's balance, e.g. 500 (whole units of each currency), or 500.00 with --currency"), Flag.optional),
    maxPerDay: Flag.String("max-per-day").pipe(Flag.withDescription("Most paid out per UTC day and currency, pending and succeeded payouts counted, e.g. 2000"), Flag.optional),
    clear: Flag.Boolean("clear").pipe(
      Flag.withDescription("Remove the limits (the currency's with --currency, else the default): payouts fall back to the default, or the original's balance"),
      Flag.withDefault(false)
    )
  },
  (accounts, { clear, currency, id, maxPerDay, maxPerPayout }) => {
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
).pipe(Command.withDescription("Show or set the payout limits of an account, its default or per currency: where set they replace the balance rule (the original's balance), so a payout may exceed its payment"))

const threeDs = accountsCommand(
  "three-ds",
  {
    id: accountId,
    displayMode: Flag.Literals("display-mode", Account.ThreeDsDisplayMode.literals).pipe(
      Flag.withDescription("How the browser SDK shows a 3-D Secure challenge: in the card element, a popup, or a full-page redirect")
    )
  },
  (accounts, { displayMode, id }) => accounts.setThreeDsDisplayMode(id, displayMode),
  changed((a) => `${a.id} shows 3-D Secure challenges ${a.three_ds_display_mode === "inline" ? "inline" : a.three_ds_display_mode === "popup" ? "in a popup" : "by redirecting the page"}.`)
).pipe(Command.withDescription("Set how the browser SDK presents 3-D Secure challenges (default inline)"))

export const accounts = Command.make("accounts").pipe(
  Command.withDescription("Create and manage merchant accounts"),
  Command.withSubcommands([create, list, get, suspend, activate, allowlist, profiles, vault, keys, rateLimit, payoutLimits, threeDs, channels, signingSecret])
)
