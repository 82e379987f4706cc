/**
 * The Accounts use case: create accounts, authenticate keys, and apply the operator's changes
 * (suspend, allowlist, profiles, vault, keys, rate limit, payout limits). Each change follows one rhythm: load,
 * ask the aggregate's pure function, persist with optimistic concurrency.
 */
import { nowIso } from "../kernel/Time.ts"
import { Context, Effect, Layer, Option } from "effect"
import * as Account from "./Account.ts"
import {
  AccountNotFound,
  type Conflict,
  invalidField,
  InvalidApiKey,
  PublishableApiKeyNotAllowed,
  type ValidationFailed
} from "../kernel/Errors.ts"
import { Ids } from "../kernel/Ids.ts"
import type { AccountId } from "../kernel/Ids.ts"
import { AccountRepo, KeyHasher, UnitOfWork } from "../kernel/Ports.ts"


/** What `tender accounts create --json` prints, exactly (contract.md). */
export interface CreatedAccount {
  readonly account_id: string
  readonly mode: Account.AccountMode
  readonly secret_key: string
  readonly publishable_key: string
  readonly signing_secret: string
}

export type AccountChange = "suspend" | "activate" | "vault_enable"


export class Accounts extends Context.Service<Accounts, {
  create(input: { readonly name: string; readonly mode: Account.AccountMode }): Effect.Effect<CreatedAccount, ValidationFailed>
  get(id: string): Effect.Effect<Account.Account, AccountNotFound>
  list(): Effect.Effect<ReadonlyArray<Account.Account>>
  /** Resolves a bearer key to its account: unknown or revoked → `invalid_api_key`. */
  authenticate(key: string): Effect.Effect<Account.Account, InvalidApiKey | PublishableApiKeyNotAllowed>
  suspend(id: string): Effect.Effect<Account.Account, AccountNotFound | Conflict>
  activate(id: string): Effect.Effect<Account.Account, AccountNotFound | Conflict>
  setAllowlist(id: string, cidrs: ReadonlyArray<string>): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  addProfile(id: string, code: string, name: string | null): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  disableProfile(id: string, code: string): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  /** Pins a profile to channels the caller checked (Channels.pin); an empty list unpins it. */
  pinProfileChannels(id: string, code: string, channels: ReadonlyArray<string>): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  enableVault(id: string): Effect.Effect<Account.Account, AccountNotFound | Conflict>
  /** Revokes every secret key and issues a new one; returns it once. */
  rollKeys(id: string): Effect.Effect<{ readonly account: Account.Account; readonly secret_key: string }, AccountNotFound | Conflict>
  /** Issues a new signing secret, returned once; the old one keeps verifying for `overlapSeconds`. */
  rollSigningSecret(id: string, overlapSeconds: number): Effect.Effect<{ readonly account: Account.Account; readonly signing_secret: string }, AccountNotFound | Conflict | ValidationFailed>
  setRateLimit(id: string, perSecond: number, burst: number): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  setThreeDsDisplayMode(id: string, mode: string): Effect.Effect<Account.Account, AccountNotFound | Conflict | ValidationFailed>
  /**
   * Sets one currency's payout limits (decimal amounts in it) or, with no currency, the account's
   * default for every currency (whole units), replacing the default balance rule (Account.setPayoutLimit).
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
      const repo = yield* AccountRepo
      const ids = yield* Ids
      const hasher = yield* KeyHasher
      const uow = yield* UnitOfWork

      const issueSecretKey = Effect.fnUntraced(function*(mode: Account.AccountMode) {
        const secretKey = `${Account.secretKeyPrefix(mode)}${yield* ids.randomHex(24)}`
        return { secretKey, secretKeyHash: yield* hasher.hash(secretKey) }
      })

      const newSigningSecret = Effect.map(ids.randomHex(32), (hex) => `whsec_${hex}`)

      const load = (id: string) =>
        Effect.flatMap(
          repo.findById(id as AccountId),
          Option.match({ onNone: () => Effect.fail(new AccountNotFound({ message: `No account ${id}` })), onSome: Effect.succeed })
        )

      /** Load, apply the pure change, persist under the version check. */
      const change = <E extends Error = never>(
        id: string,
        f: (account: Account.Account, now: string) => Account.Account | E
      ) =>
        uow.transaction(Effect.gen(function*() {
          const account = yield* load(id)
          const next = f(account, yield* nowIso)
          if (next instanceof Error) return yield* Effect.fail(next)
          const versioned: Account.Account = { ...next, version: account.version + 1 }
          yield* repo.update(versioned)
          return versioned
        }))

      return Accounts.of({
        create: Effect.fn("Accounts.create")(function*({ name, mode }) {
          const trimmed = name.trim()
          if (trimmed.length === 0 || trimmed.length > 200) {
            return yield* invalidField("name", "must be 1–200 characters")
          }
          const id = (yield* ids.make("account")) as AccountId
          const issued = yield* issueSecretKey(mode)
          const publishableKey = `${Account.publishableKeyPrefix(mode)}${yield* ids.randomHex(24)}`
          const signingSecret = yield* newSigningSecret
          const now = yield* nowIso
          const account: Account.Account = {
            id,
            name: trimmed,
            mode,
            status: "active",
            secret_keys: [
              { hash: issued.secretKeyHash, hint: Account.hintOf(issued.secretKey), created_at: now, revoked_at: null }
            ],
            publishable_key: publishableKey,
            signing_secret: signingSecret,
            ip_allowlist: [],
            processing_profiles: [],
            vault_enabled: false,
            rate_limit: null,
            payout_limits: [],
            three_ds_display_mode: "inline",
            created_at: now,
            updated_at: now,
            version: 1
          }
          yield* repo.insert(account)
          return {
            account_id: id,
            mode,
            secret_key: issued.secretKey,
            publishable_key: publishableKey,
            signing_secret: signingSecret
          }
        }),
        get: Effect.fn("Accounts.get")(function*(id) {
          return yield* load(id)
        }),
        list: () => repo.list(),
        authenticate: Effect.fnUntraced(function*(key) {
          if (/^pk_(test|live)_/.test(key)) {
            const byPk = yield* repo.findByPublishableKey(key)
            if (Option.isSome(byPk)) {
              return yield* new PublishableApiKeyNotAllowed({
                message: "A publishable key cannot call the server API; use a secret key (sk_…)"
              })
            }
          }
          if (!/^sk_(test|live)_[0-9a-f]{16,128}$/.test(key)) {
            return yield* new InvalidApiKey({ message: "The API key is unknown or revoked" })
          }
          const hash = yield* hasher.hash(key)
          const found = yield* repo.findBySecretKeyHash(hash)
          if (Option.isNone(found)) return yield* new InvalidApiKey({ message: "The API key is unknown or revoked" })
          const account = found.value
          const entry = account.secret_keys.find((k) => k.hash === hash)
          if (entry === undefined || entry.revoked_at !== null) {
            return yield* new InvalidApiKey({ message: "The API key is unknown or revoked" })
          }
          return account
        }),
        suspend: (id) => change(id, Account.suspend),
        activate: (id) => change(id, Account.activate),
        setAllowlist: (id, cidrs) => change(id, (a, now) => Account.setAllowlist(a, cidrs, now)),
        addProfile: (id, code, name) => change(id, (a, now) => Account.addProfile(a, code, name, now)),
        disableProfile: (id, code) => change(id, (a, now) => Account.disableProfile(a, code, now)),
        pinProfileChannels: (id, code, channels) => change(id, (a, now) => Account.pinChannels(a, code, channels, now)),
        enableVault: (id) => change(id, Account.enableVault),
        rollKeys: Effect.fn("Accounts.rollKeys")(function*(id) {
          const account = yield* load(id)
          const issued = yield* issueSecretKey(account.mode)
          const next = yield* change<never>(id, (a, now) => Account.rollKeys(a, issued, now))
          return { account: next, secret_key: issued.secretKey }
        }),
        rollSigningSecret: Effect.fn("Accounts.rollSigningSecret")(function*(id, overlapSeconds) {
          const secret = yield* newSigningSecret
          const account = yield* change(id, (a, now) => Account.rollSigningSecret(a, secret, overlapSeconds, now))
          return { account, signing_secret: secret }
        }),
        setRateLimit: (id, perSecond, burst) => change(id, (a, now) => Account.setRateLimit(a, perSecond, burst, now)),
        setThreeDsDisplayMode: (id, mode) => change(id, (a, now) => Account.setThreeDsDisplayMode(a, mode, now)),
        setPayoutLimit: (id, limit) => change(id, (a, now) => Account.setPayoutLimit(a, limit, now)),
        clearPayoutLimit: (id, currency) => change(id, (a, now) => Account.clearPayoutLimit(a, currency, now)),
        authenticatePublishable: Effect.fnUntraced(function*(key) {
          const found = /^pk_(test|live)_/.test(key) ? yield* repo.findByPublishableKey(key) : Option.none()
          if (Option.isNone(found)) return yield* new InvalidApiKey({ message: "The publishable key is unknown: send Authorization: Bearer pk_…" })
          return found.value
        })
      })
    })
  )
}

