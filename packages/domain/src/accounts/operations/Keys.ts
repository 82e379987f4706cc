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
