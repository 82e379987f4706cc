/**
 * Vault access tokens as `vat_<expiry ms>_<nonce>_<hmac>`: the HMAC binds the account id, expiry and
 * nonce, so verification needs no storage and a token of one account never verifies for another.
 *
 * The HMAC key is the server's, not the account's signing secret (which the merchant holds and
 * which also signs requests, responses and webhooks): a key derived with HKDF-SHA256 from the vault
 * key (VaultKey.ts), under its own label, so it is never the key that encrypts cards and every
 * process sharing the vault key verifies every other's tokens. Tokens minted under the old scheme
 * (before issue 12) no longer verify; they lived 5 minutes.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto"
import { AccessTokenSigner } from "@tender/domain"
import type { Account } from "@tender/domain/accounts/Account"
import { Effect, Layer } from "effect"

/** The HKDF label: changing it (a new version) invalidates every outstanding token. */
const INFO = "tender/vault-access-token/v1"

/** The token key derived from the vault key. */
export const deriveKey = (vaultKey: Uint8Array): Buffer =>
  Buffer.from(hkdfSync("sha256", vaultKey, new Uint8Array(0), INFO, 32))

const FORM = /^vat_(\d{1,15})_([0-9a-f]{32})_([0-9a-f]{64})$/

export const make = (vaultKey: Uint8Array): AccessTokenSigner["Service"] => {
  const key = deriveKey(vaultKey)
  const mac = (account: Account, expiresAt: string, nonce: string) =>
    createHmac("sha256", key).update(`vault-access:${account.id}:${expiresAt}:${nonce}`).digest("hex")
  return AccessTokenSigner.of({
    mint: (account, expiresAtMs) =>
      Effect.sync(() => {
        const nonce = randomBytes(16).toString("hex")
        return `vat_${expiresAtMs}_${nonce}_${mac(account, String(expiresAtMs), nonce)}`
      }),
    verify: (account, token) =>
      Effect.sync(() => {
        const match = FORM.exec(token)
        if (match === null) return undefined
        const [, expiresAt, nonce, given] = match
        const expected = Buffer.from(mac(account, expiresAt, nonce), "hex")
        return timingSafeEqual(expected, Buffer.from(given, "hex")) ? Number(expiresAt) : undefined
      })
  })
}

/** The signer over the vault key `key` resolves to (VaultKey.resolve). */
export const layer = <E>(key: Effect.Effect<Uint8Array, E>): Layer.Layer<AccessTokenSigner, E> =>
  Layer.effect(AccessTokenSigner, Effect.map(key, make))
