/**
 * The Accounts use case: a facade over the operations (operations/*): create accounts,
 * authenticate keys, and apply the operator's changes (status, allowlist, profiles, vault, keys,
 * rate limit, payout limits, 3-D Secure display), each load → decide (pure: Account.ts,
 * AccountSettings.ts, AccountKeys.ts) → persist the `Decided` row under the version check. This layer
 * only captures the services the operations need.
 */
import { Context, Effect, Layer } from "effect"
import type * as Account from "./Account.ts"
import { AccountRepo } from "./AccountPorts.ts"
import type {
  AccountNotFound,
  Conflict,
  InvalidApiKey,
  PublishableApiKeyNotAllowed,
  ValidationFailed
} from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import { runWith } from "../kernel/Seam.ts"
import { KeyHasher, UnitOfWork } from "../kernel/Ports.ts"
import { authenticate, authenticatePublishable } from "./operations/Authenticate.ts"
import * as Change from "./operations/Change.ts"
import { create } from "./operations/Create.ts"
import type { CreatedAccount } from "./operations/Create.ts"
import { issueTemporaryKey, revokeKey, rollKeys, rollSigningSecret } from "./operations/Keys.ts"

export type { CreatedAccount }

/** The Accounts use case: create accounts, authenticate their keys, and apply the operator's changes. */
export class Accounts extends Context.Service<Accounts, {
  /** A new account with its first keys; the secret key is in the answer only, once. */
  create(input: { readonly name: string; readonly mode: Account.AccountMode }): Effect.Effect<CreatedAccount, ValidationFailed>
  /** The account with this id. */
  get(id: string): Effect.Effect<Account.Account, AccountNotFound>
  /** Every account (operator access). */
  list(): Effect.Effect<ReadonlyArray<Account.Account>>
  /** Resolves a bearer key to its account: unknown or revoked → `invalid_api_key`. */
  authenticate(key: string): Effect.Effect<Account.Account, InvalidApiKey | PublishableApiKeyNotAllowed>
  /** Suspends the account: its writes are refused until it is activated. */
  suspend(id: string): Effect.Effect<Account.Account, AccountNotFound | Conflict>
  /** Activates a suspended account. */
  activate(id: string): Effect.Effect<Account.Account, AccountNotFound | Conflict>
  /** Replaces the account's IP allowlist (at least one CIDR); `0.0.0.0/0 ::/0` lifts the restriction. */
  setAllowlist(id: string, cidrs: ReadonlyArray<string>): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  /** Adds an active processing profile with this code. */
  addProfile(id: string, code: string, name: string | null): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  /** Disables a processing profile, for good. */
  disableProfile(id: string, code: string): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  /** Pins a profile to channels the caller checked (Channels.pin); an empty list unpins it. */
  pinProfileChannels(id: string, code: string, channels: ReadonlyArray<string>): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  /** Enables the card vault for the account (VaultAccess refuses tokens until then). */
  enableVault(id: string): Effect.Effect<Account.Account, AccountNotFound | Conflict>
  /** Revokes every secret key and issues a new one; returns it once. */
  rollKeys(id: string): Effect.Effect<{ readonly account: Account.Account; readonly secret_key: string }, AccountNotFound | Conflict>
  /** A secret key that expires after `ttlSeconds`, beside the account's own; returned once (the CLI's listen and trigger). */
  issueTemporaryKey(id: string, ttlSeconds: number): Effect.Effect<{ readonly account: Account.Account; readonly secret_key: string; readonly expires_at: string }, AccountNotFound | Conflict>
  /** Revokes one secret key now. */
  revokeKey(id: string, secretKey: string): Effect.Effect<Account.Account, AccountNotFound | Conflict>
  /** Issues a new signing secret, returned once; the old one keeps verifying for `overlapSeconds`. */
  rollSigningSecret(id: string, overlapSeconds: number): Effect.Effect<{ readonly account: Account.Account; readonly signing_secret: string }, AccountNotFound | Conflict | ValidationFailed>
  /** Sets the account's request rate limit. */
  setRateLimit(id: string, perSecond: number, burst: number): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  /** Sets how the browser SDK shows a 3-D Secure challenge (`inline`, `popup` or `redirect`). */
  setThreeDsDisplayMode(id: string, mode: string): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  /**
   * Sets one currency's payout limits (decimal amounts in it) or, with no currency, the account's
   * default for every currency (whole units), replacing the default balance rule (AccountSettings.setPayoutLimit).
   */
  setPayoutLimit(id: string, limit: { readonly currency?: string | undefined; readonly max_per_payout: string; readonly max_per_day: string }): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  /** Removes one currency's payout limits, or with no currency the account's default. */
  clearPayoutLimit(id: string, currency: string | undefined): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  /** Resolves a publishable key (the browser SDK's) to its account: unknown or not `pk_…` → `invalid_api_key`. */
  authenticatePublishable(key: string): Effect.Effect<Account.Account, InvalidApiKey>
}>()("@tender/domain/accounts/Accounts") {
  static readonly layer = Layer.effect(
    Accounts,
    Effect.gen(function*() {
      const context = yield* Effect.context<AccountRepo | Ids | KeyHasher | UnitOfWork>()
      const run = runWith(context)

      return Accounts.of({
        create: (input) => run(create(input)).pipe(Effect.withSpan("Accounts.create")),
        get: (id) => run(Change.load(id)),
        list: () => Context.get(context, AccountRepo).list(),
        authenticate: (key) => run(authenticate(key)),
        authenticatePublishable: (key) => run(authenticatePublishable(key)),
        suspend: (id) => run(Change.suspend(id)),
        activate: (id) => run(Change.activate(id)),
        setAllowlist: (id, cidrs) => run(Change.setAllowlist(id, cidrs)),
        addProfile: (id, code, name) => run(Change.addProfile(id, code, name)),
        disableProfile: (id, code) => run(Change.disableProfile(id, code)),
        pinProfileChannels: (id, code, channels) => run(Change.pinProfileChannels(id, code, channels)),
        enableVault: (id) => run(Change.enableVault(id)),
        rollKeys: (id) => run(rollKeys(id)).pipe(Effect.withSpan("Accounts.rollKeys")),
        issueTemporaryKey: (id, ttlSeconds) => run(issueTemporaryKey(id, ttlSeconds)),
        revokeKey: (id, secretKey) => run(revokeKey(id, secretKey)),
        rollSigningSecret: (id, overlapSeconds) => run(rollSigningSecret(id, overlapSeconds)).pipe(Effect.withSpan("Accounts.rollSigningSecret")),
        setRateLimit: (id, perSecond, burst) => run(Change.setRateLimit(id, perSecond, burst)),
        setThreeDsDisplayMode: (id, mode) => run(Change.setThreeDsDisplayMode(id, mode)),
        setPayoutLimit: (id, limit) => run(Change.setPayoutLimit(id, limit)),
        clearPayoutLimit: (id, currency) => run(Change.clearPayoutLimit(id, currency))
      })
    })
  )
}
