/**
 * `tender accounts …`: the operator's hold on merchant accounts, declared; handlers/Accounts.ts runs
 * them. Secrets: `create` prints the secret key and signing secret once and `keys roll` the new
 * secret key once, `signing-secret roll` the new signing secret once; every other view leaves out
 * key hashes and the signing secrets.
 */
import { Argument, Command, Flag } from "effect/cli"
import { commandsOf } from "../Cli.ts"
import { ACCOUNT_MODES, THREE_DS_DISPLAY_MODES } from "../Vocabulary.ts"
import { channels } from "./Channels.ts"
import { routing } from "./Routing.ts"

const accountId = Argument.String("id").pipe(Argument.withDescription("Account id (acct_…)"))

const accountsCommand = commandsOf(() => import("../handlers/Accounts.ts"))

const create = accountsCommand(
  "create",
  {
    name: Flag.String("name").pipe(Flag.withDescription("Merchant name (1–200 characters)")),
    mode: Flag.Literals("mode", ACCOUNT_MODES).pipe(
      Flag.withDescription("test (sandbox provider, sk_test_ keys) or live"),
      Flag.withDefault("test")
    )
  },
  (h) => h.create
).pipe(Command.withDescription("Create an account and print its keys (the secret key is shown once)"))

const list = accountsCommand("list", {}, (h) => h.list).pipe(Command.withDescription("List accounts"))

const get = accountsCommand("get", { id: accountId }, (h) => h.get)
  .pipe(Command.withDescription("Show one account (never its key hashes or signing secret)"))

const suspend = accountsCommand("suspend", { id: accountId }, (h) => h.suspend).pipe(Command.withDescription("Suspend an account"))

const activate = accountsCommand("activate", { id: accountId }, (h) => h.activate)
  .pipe(Command.withDescription("Activate a suspended account"))

const allowlist = accountsCommand(
  "allowlist",
  {
    id: accountId,
    cidrs: Argument.String("cidr").pipe(
      Argument.withDescription("IPv4 or IPv6 CIDR; the list replaces the current one, 0.0.0.0/0 ::/0 lifts it"),
      Argument.atLeast(1)
    )
  },
  (h) => h.allowlist
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
      (h) => h.addProfile
    ).pipe(Command.withDescription("Add a processing profile")),
    accountsCommand(
      "disable",
      { id: accountId, code: Argument.String("code").pipe(Argument.withDescription("Profile code")) },
      (h) => h.disableProfile
    ).pipe(Command.withDescription("Disable a processing profile"))
  ])
)

const vault = Command.make("vault").pipe(
  Command.withDescription("Manage the card vault of an account"),
  Command.withSubcommands([
    accountsCommand("enable", { id: accountId }, (h) => h.enableVault).pipe(Command.withDescription("Enable the card vault"))
  ])
)

const keys = Command.make("keys").pipe(
  Command.withDescription("Manage the secret keys of an account"),
  Command.withSubcommands([
    accountsCommand("roll", { id: accountId }, (h) => h.rollKeys)
      .pipe(Command.withDescription("Revoke every secret key and issue a new one (shown once)"))
  ])
)

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
      (h) => h.rollSigningSecret
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
  (h) => h.rateLimit
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
  (h) => h.payoutLimits
).pipe(Command.withDescription("Show or set the payout limits of an account, its default or per currency: where set they replace the balance rule (the original's balance), so a payout may exceed its payment"))

const threeDs = accountsCommand(
  "three-ds",
  {
    id: accountId,
    displayMode: Flag.Literals("display-mode", THREE_DS_DISPLAY_MODES).pipe(
      Flag.withDescription("How the browser SDK shows a 3-D Secure challenge: in the card element, a popup, or a full-page redirect")
    )
  },
  (h) => h.threeDs
).pipe(Command.withDescription("Set how the browser SDK presents 3-D Secure challenges (default inline)"))

export const accounts = Command.make("accounts").pipe(
  Command.withDescription("Create and manage merchant accounts"),
  Command.withSubcommands([create, list, get, suspend, activate, allowlist, profiles, vault, keys, rateLimit, payoutLimits, threeDs, channels, routing, signingSecret])
)
