/**
 * Vault API access tokens (contract.md: `POST /v1/vault/access_tokens` → `{token, expires_at}`,
 * 5 minutes). Only accounts with the vault enabled may mint them. A token is self-contained and
 * signed (see the `AccessTokenSigner` port), so any server process can verify it without storage.
 */
import { isoOf } from "../kernel/Time.ts"
import { Clock, Context, Effect, Layer } from "effect"
import type { Account } from "../accounts/Account.ts"
import { VaultNotEnabled } from "../kernel/Errors.ts"

/** How long a vault access token is valid: five minutes. */
export const ACCESS_TOKEN_TTL_MS = 5 * 60 * 1000

/** Port: signs and checks access tokens for an account. */
export class AccessTokenSigner extends Context.Service<AccessTokenSigner, {
  /** A token of this account that expires at `expiresAtMs`. */
  mint(account: Account, expiresAtMs: number): Effect.Effect<string>
  /** The expiry of a token this account minted, or `undefined` when it is not one of them. */
  verify(account: Account, token: string): Effect.Effect<number | undefined>
}>()("@tender/domain/AccessTokenSigner") {}

/** The vault access use case: issues and checks short-lived tokens for accounts with the vault enabled. */
export class VaultAccess extends Context.Service<VaultAccess, {
  /** A vault access token for the account, valid for `ACCESS_TOKEN_TTL_MS`; refused unless the vault is enabled. */
  issue(account: Account): Effect.Effect<{ readonly token: string; readonly expires_at: string }, VaultNotEnabled>
  /** True while the token is this account's and unexpired. */
  check(account: Account, token: string): Effect.Effect<boolean>
}>()("@tender/domain/cards/VaultAccess") {
  static readonly layer = Layer.effect(
    VaultAccess,
    Effect.gen(function*() {
      const signer = yield* AccessTokenSigner
      return VaultAccess.of({
        issue: Effect.fn("VaultAccess.issue")(function*(account) {
          if (!account.vault_enabled) {
            return yield* new VaultNotEnabled({ message: "The Vault API is not enabled for this account" })
          }
          const expiresAt = (yield* Clock.currentTimeMillis) + ACCESS_TOKEN_TTL_MS
          return {
            token: yield* signer.mint(account, expiresAt),
            expires_at: isoOf(expiresAt)
          }
        }),
        check: Effect.fnUntraced(function*(account, token) {
          const expiresAt = yield* signer.verify(account, token)
          return account.vault_enabled && expiresAt !== undefined && expiresAt > (yield* Clock.currentTimeMillis)
        })
      })
    })
  )
}
