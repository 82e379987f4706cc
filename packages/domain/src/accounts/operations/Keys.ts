/**
 * Operations on an account's key material: issue a secret key or a signing secret (random, from
 * Ids; a secret key stored only as its hash), and the operator's rolls of either
 * (`tender accounts keys roll`, `tender accounts signing-secret roll`). The plain secret is
 * returned once and never stored.
 */
import { Effect } from "effect"
import type { AccountMode } from "../Account.ts"
import * as Keys from "../AccountKeys.ts"
import { Ids } from "../../kernel/Ids.ts"
import { KeyHasher } from "../../kernel/Ports.ts"
import { change, load } from "./Change.ts"

export const issueSecretKey = (mode: AccountMode) =>
  Effect.gen(function*() {
    const secretKey = `${Keys.secretKeyPrefix(mode)}${yield* (yield* Ids).randomHex(24)}`
    return { secretKey, secretKeyHash: yield* (yield* KeyHasher).hash(secretKey) } satisfies Keys.IssuedKeys
  })

export const newSigningSecret = Effect.gen(function*() {
  return `whsec_${yield* (yield* Ids).randomHex(32)}`
})

/** Revokes every live secret key and issues a new one. */
export const rollKeys = (id: string) =>
  Effect.gen(function*() {
    const account = yield* load(id)
    const issued = yield* issueSecretKey(account.mode)
    const next = yield* change(id, (a, now) => Keys.rollKeys(a, issued, now))
    return { account: next, secret_key: issued.secretKey }
  })

/** A new signing secret; the old one keeps verifying for `overlapSeconds`. */
export const rollSigningSecret = (id: string, overlapSeconds: number) =>
  Effect.gen(function*() {
    const secret = yield* newSigningSecret
    const account = yield* change(id, (a, now) => Keys.rollSigningSecret(a, secret, overlapSeconds, now))
    return { account, signing_secret: secret }
  })

/**
 * A secret key for `ttlSeconds`, beside the account's own keys: the CLI's way into the public API
 * for an account it operates on. Returned once; revoke it with `revokeKey` when done.
 */
export const issueTemporaryKey = (id: string, ttlSeconds: number) =>
  retryConflict(Effect.gen(function*() {
    const issued = yield* issueSecretKey((yield* load(id)).mode)
    let expiresAt = ""
    const account = yield* change(id, (a, now) => {
      expiresAt = new Date(Date.parse(now) + ttlSeconds * 1000).toISOString()
      return Keys.addTemporaryKey(a, issued, now, expiresAt)
    })
    return { account, secret_key: issued.secretKey, expires_at: expiresAt }
  }))

/** Revokes one secret key of the account now (unknown or already revoked: nothing changes). */
export const revokeKey = (id: string, secretKey: string) =>
  Effect.gen(function*() {
    const hash = yield* (yield* KeyHasher).hash(secretKey)
    return yield* retryConflict(change(id, (a, now) => Keys.revokeKey(a, hash, now)))
  })

/**
 * Adding or revoking one's own key commutes with any other change of the account, so a version
 * conflict (two CLI commands starting at once on one account) is decided again on the fresh row
 * rather than failed: a revoke lost that way would leave the key live until its expiry.
 */
const retryConflict = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.retry(effect, { times: 8, while: (e) => e._tag === "Conflict" })
