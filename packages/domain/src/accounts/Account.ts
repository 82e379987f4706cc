/**
 * The Account aggregate: who a merchant is to Tender. Its record, its status table (active ⇄
 * suspended), its birth, and the reads every flow shares. The operator's other changes are pure
 * revisions beside it: AccountSettings.ts (allowlist, profiles, limits) and AccountKeys.ts (keys and
 * the signing secret). Every change returns a `Decided` row, the only kind AccountRepo.update takes.
 */
import { Result, Schema } from "effect"
import { Conflict, MerchantOperationNotAllowedStatus } from "../kernel/Errors.ts"
import { AccountId } from "../kernel/Ids.ts"
import * as Money from "../kernel/Money.ts"
import { type Changes, type Decided, define, type Machine, revise, transitionOf } from "../kernel/StateMachine.ts"
import { ProcessingProfile } from "./ProcessingProfile.ts"

/** Test or live: which cards, providers and channels the account's money may touch. */
export const AccountMode = Schema.Literals(["test", "live"])
/** Test or live. */
export type AccountMode = typeof AccountMode.Type

/** An account's statuses, in table order. */
export const ACCOUNT_STATUSES = ["active", "suspended"] as const
/** An account's status: `active`, or `suspended` (writes refused). */
export const AccountStatus = Schema.Literals(ACCOUNT_STATUSES)
/** An account's status. */
export type AccountStatus = typeof AccountStatus.Type
/** The operator's moves on an account's status. */
export type AccountTrigger = "suspend" | "activate"

/** contract.md, Operator set-up: `accounts suspend|activate ID`; spec, Account status: writes refused while not active. */
export const AccountMachine: Machine<AccountStatus, AccountTrigger> = define({
  name: "Account",
  states: ACCOUNT_STATUSES,
  finals: [],
  transitions: [
    { from: ["active"], trigger: "suspend", to: "suspended", when: "`tender accounts suspend`; writes then answer 409 merchant_operation_not_allowed_status, reads keep working" },
    { from: ["suspended"], trigger: "activate", to: "active", when: "`tender accounts activate`" }
  ]
})

/** A secret key as stored: only its SHA-256 hash, plus a short prefix to recognise it by. */
export const SecretKey = Schema.Struct({
  hash: Schema.String,
  /** e.g. `sk_test_4f3a…`, safe to show */
  hint: Schema.String,
  created_at: Schema.String,
  revoked_at: Schema.NullOr(Schema.String),
  /**
   * A temporary key's end (the CLI's `listen` and `trigger`, AccountKeys.addTemporaryKey); absent or
   * null for the merchant's own keys, which live until revoked.
   */
  expires_at: Schema.optional(Schema.NullOr(Schema.String))
})
export type SecretKey = typeof SecretKey.Type

export { ProcessingProfile } from "./ProcessingProfile.ts"

/** How the browser SDK presents a 3-D Secure challenge (contract.md: `tender accounts three-ds`). */
export const ThreeDsDisplayMode = Schema.Literals(["inline", "popup", "redirect"])
export type ThreeDsDisplayMode = typeof ThreeDsDisplayMode.Type

/** The account's request rate limit: a token bucket of `per_second` with `burst`. */
export const RateLimit = Schema.Struct({ per_second: Schema.Int, burst: Schema.Int })
/** The account's request rate limit. */
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

/** An account as stored: identity, mode, status, keys, signing secret and the operator's settings. */
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
/** An account as stored. */
export type Account = typeof Account.Type

/** What one of the account's pure changes decides: the next row (for AccountRepo.update), or why not. */
export type Decision<E> = Result.Result<Decided<Account>, E>

/**
 * Every change drops a previous signing secret whose overlap has ended: it verifies nothing by then
 * (`signingSecrets`), so it need not be kept. Dropped at the account's next change, rather than when
 * a request reads the account past the expiry: that would be a write on the hot path, racing the
 * operator's own changes.
 */
const overlapEnded = (account: Account, now: string): Changes<Account> =>
  account.previous_signing_secret_expires_at != null && Date.parse(account.previous_signing_secret_expires_at) <= Date.parse(now)
    ? { previous_signing_secret: null, previous_signing_secret_expires_at: null }
    : {}

/** A change that keeps the status (settings, keys): stamped, version bumped, an ended overlap dropped. */
export const amend = (account: Account, changes: Changes<Account>, now: string): Decided<Account> =>
  revise(account, { ...overlapEnded(account, now), ...changes }, now)

const move = transitionOf(AccountMachine, (account: Account, _move) =>
  // Two statuses, one way out of each: a refused move is a repeat.
  new Conflict({ message: `Account ${account.id} is already ${account.status}` }))

/** The status through the table (`suspend`, `activate`); a repeat is `Conflict`. */
export const transition = (account: Account, trigger: AccountTrigger, now: string): Decision<Conflict> =>
  Result.map(move(account, trigger, now, overlapEnded(account, now)), (moved) => moved.next)

/** A new account: `active`, at version 1, with its first secret key. */
export const born = (fields: {
  readonly id: AccountId
  readonly name: string
  readonly mode: AccountMode
  readonly secret_key: SecretKey
  readonly publishable_key: string
  readonly signing_secret: string
  readonly created_at: string
}): Account => ({
  id: fields.id,
  name: fields.name,
  mode: fields.mode,
  status: "active",
  secret_keys: [fields.secret_key],
  publishable_key: fields.publishable_key,
  signing_secret: fields.signing_secret,
  ip_allowlist: [],
  processing_profiles: [],
  vault_enabled: false,
  rate_limit: null,
  payout_limits: [],
  three_ds_display_mode: "inline",
  created_at: fields.created_at,
  updated_at: fields.created_at,
  version: 1
})

/** Why the account may not collect a payment now (not active: suspended), or `undefined` when it may. */
export const notCollecting = (account: Account): MerchantOperationNotAllowedStatus | undefined =>
  account.status === "active"
    ? undefined
    : new MerchantOperationNotAllowedStatus({ message: `Account is ${account.status}: payments are not allowed` })

/** A profile code passed on a request is usable only when it exists and is active. */
export const activeProfile = (account: Account, code: string): ProcessingProfile | undefined =>
  account.processing_profiles.find((p) => p.code === code && p.status === "active")

/** What of an account signs for it: its secret, and the previous one with the end of its overlap. */
export type SigningKeys = Pick<Account, "signing_secret" | "previous_signing_secret" | "previous_signing_secret_expires_at">

/**
 * The secrets that sign and verify for the account at `nowMs`: the current one first, then the
 * previous one while its overlap lasts. Requests verify under any; responses and webhooks carry a
 * `v1` entry for each, so a merchant holding either secret can check them.
 */
export const signingSecrets = (account: SigningKeys, nowMs: number): ReadonlyArray<string> =>
  account.previous_signing_secret != null && account.previous_signing_secret_expires_at != null &&
    Date.parse(account.previous_signing_secret_expires_at) > nowMs
    ? [account.signing_secret, account.previous_signing_secret]
    : [account.signing_secret]

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
