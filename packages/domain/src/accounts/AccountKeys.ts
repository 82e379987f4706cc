/**
 * The account's key material: secret keys (stored as hashes, recognised by a hint) and the signing
 * secret, and the operator's rolls of either, pure revisions of the Account aggregate.
 */
import { Result } from "effect"
import { invalidField, type ValidationFailed } from "../kernel/Errors.ts"
import { type Account, type AccountMode, amend, type Decision, type SecretKey } from "./Account.ts"

/** How a secret key of the mode begins: `sk_test_` or `sk_live_`. */
export const secretKeyPrefix = (mode: AccountMode) => `sk_${mode}_`
/** How a publishable key of the mode begins: `pk_test_` or `pk_live_`. */
export const publishableKeyPrefix = (mode: AccountMode) => `pk_${mode}_`

/** What is shown of a key: its prefix and four characters (`sk_test_4f3a…`). */
export const hintOf = (key: string): string => `${key.slice(0, key.lastIndexOf("_") + 5)}…`

/** The result of issuing keys: the plain secret key is returned once and never stored. */
export interface IssuedKeys {
  readonly secretKey: string
  readonly secretKeyHash: string
}

/** An issued key as the account stores it: its hash and hint, live. */
export const storedKey = (issued: IssuedKeys, now: string): SecretKey => ({
  hash: issued.secretKeyHash,
  hint: hintOf(issued.secretKey),
  created_at: now,
  revoked_at: null
})

/** Whether a stored key authenticates at `nowMs`: not revoked and, for a temporary key, not expired. */
export const isLive = (key: SecretKey, nowMs: number): boolean =>
  key.revoked_at === null && (key.expires_at == null || Date.parse(key.expires_at) > nowMs)

const isTemporary = (key: SecretKey) => key.expires_at != null

/**
 * The keys less the temporary ones that no longer authenticate: a temporary key is not history worth
 * keeping (one is issued per CLI command), and every account read carries its keys.
 */
const withoutSpentTemporaries = (keys: ReadonlyArray<SecretKey>, nowMs: number) =>
  keys.filter((k) => !isTemporary(k) || isLive(k, nowMs))

/** Revokes the keys `which` picks: a merchant's key keeps its revocation time, a temporary one goes. */
const revoked = (keys: ReadonlyArray<SecretKey>, now: string, which: (key: SecretKey) => boolean) =>
  withoutSpentTemporaries(
    keys.map((k) => (which(k) && k.revoked_at === null ? { ...k, revoked_at: now } : k)),
    Date.parse(now)
  )

/** Revokes every live secret key (temporary ones too) and adds the new one. */
export const rollKeys = (account: Account, issued: IssuedKeys, now: string): Decision<never> =>
  Result.succeed(amend(account, {
    secret_keys: [...revoked(account.secret_keys, now, () => true), storedKey(issued, now)]
  }, now))

/**
 * Adds a secret key that stops authenticating at `expiresAt`, beside the merchant's own (which it
 * leaves alone): what the operator's CLI uses to call the public API for an account it may already
 * change directly (`tender listen`, `tender trigger`). Spent temporary keys go at the same time.
 */
export const addTemporaryKey = (account: Account, issued: IssuedKeys, now: string, expiresAt: string): Decision<never> =>
  Result.succeed(amend(account, {
    secret_keys: [...withoutSpentTemporaries(account.secret_keys, Date.parse(now)), { ...storedKey(issued, now), expires_at: expiresAt }]
  }, now))

/** Revokes the one key with this hash now, if it is still live (a temporary key goes). */
export const revokeKey = (account: Account, hash: string, now: string): Decision<never> =>
  Result.succeed(amend(account, { secret_keys: revoked(account.secret_keys, now, (k) => k.hash === hash) }, now))

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
): Decision<ValidationFailed> => {
  if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_SIGNING_SECRET_OVERLAP_SECONDS) {
    return Result.fail(invalidField("overlap", "must be a duration between 0 and 30 days (e.g. 24h)"))
  }
  return Result.succeed(amend(account, {
    signing_secret: secret,
    previous_signing_secret: overlapSeconds === 0 ? null : account.signing_secret,
    previous_signing_secret_expires_at: overlapSeconds === 0
      ? null
      : new Date(Date.parse(now) + overlapSeconds * 1000).toISOString()
  }, now))
}
