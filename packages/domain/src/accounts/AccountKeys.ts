/**
 * The account's key material: secret keys (stored as hashes, recognised by a hint) and the signing
 * secret, and the operator's rolls of either, pure revisions of the Account aggregate.
 */
import { Result } from "effect"
import { invalidField, type ValidationFailed } from "../kernel/Errors.ts"
import { type Account, type AccountMode, amend, type Decision, type SecretKey } from "./Account.ts"

export const secretKeyPrefix = (mode: AccountMode) => `sk_${mode}_`
export const publishableKeyPrefix = (mode: AccountMode) => `pk_${mode}_`

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

/**
 * Whether a stored key authenticates at `nowMs`: never revoked, or revoked at a time still to come
 * (a temporary key carries its expiry as a revocation fixed in advance).
 */
export const isLive = (key: SecretKey, nowMs: number): boolean => key.revoked_at === null || Date.parse(key.revoked_at) > nowMs

const revokedNow = (keys: ReadonlyArray<SecretKey>, now: string, which: (key: SecretKey) => boolean) =>
  keys.map((k) => (which(k) && isLive(k, Date.parse(now)) ? { ...k, revoked_at: now } : k))

/** Revokes every live secret key (temporary ones too) and adds the new one. */
export const rollKeys = (account: Account, issued: IssuedKeys, now: string): Decision<never> =>
  Result.succeed(amend(account, {
    secret_keys: [...revokedNow(account.secret_keys, now, () => true), storedKey(issued, now)]
  }, now))

/**
 * Adds a secret key that stops authenticating at `expiresAt`, beside the merchant's own (which it
 * leaves alone): what the operator's CLI uses to call the public API for an account it may already
 * change directly (`tender listen`, `tender trigger`).
 */
export const addTemporaryKey = (account: Account, issued: IssuedKeys, now: string, expiresAt: string): Decision<never> =>
  Result.succeed(amend(account, { secret_keys: [...account.secret_keys, { ...storedKey(issued, now), revoked_at: expiresAt }] }, now))

/** Revokes the one key with this hash now, if it is still live. */
export const revokeKey = (account: Account, hash: string, now: string): Decision<never> =>
  Result.succeed(amend(account, { secret_keys: revokedNow(account.secret_keys, now, (k) => k.hash === hash) }, now))

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
