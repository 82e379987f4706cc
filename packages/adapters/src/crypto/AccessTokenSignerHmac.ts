/**
 * Vault access tokens as `vat_<expiry ms>_<nonce>_<hmac>`: the HMAC (under the account's signing
 * secret) binds the account id, expiry and nonce, so verification needs no storage and a token of
 * one account never verifies for another.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { AccessTokenSigner } from "@tender/domain"
import type { Account } from "@tender/domain/Account"
import { Effect, Layer } from "effect"

const mac = (account: Account, expiresAt: string, nonce: string) =>
  createHmac("sha256", account.signing_secret).update(`vault-access:${account.id}:${expiresAt}:${nonce}`).digest("hex")

const FORM = /^vat_(\d{1,15})_([0-9a-f]{32})_([0-9a-f]{64})$/

export const layer = Layer.succeed(
  AccessTokenSigner,
  AccessTokenSigner.of({
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
)
