/**
 * The accounts keys resolve to, cached in process (issue 13): every keyed request looked its
 * account up by key hash, one statement each. This layer wraps AccountRepoPg and answers
 * `findBySecretKeyHash` from a notified cache (NotifiedCache.ts: bounded, trusted only while the
 * process listens, emptied by every notice). Only accounts found are kept: an attacker's keys miss
 * every time, and the cache stays bounded whatever is looked up.
 *
 * The operator's CLI changes accounts from another process (`keys roll`, `suspend`/`activate`,
 * `signing-secret roll`, `allowlist`, `rate-limit`): a trigger (migration 0026) NOTIFYs
 * `tender_account_changed` with the account's id when a change to an account or its keys commits.
 * The cache is keyed by key hash, not account, so a notice empties all of it (changes are rare).
 */
import type { PgClient } from "@effect/sql-pg"
import { type Account, AccountRepo } from "@tender/domain"
import { Effect, Layer, Option } from "effect"
import * as NotifiedCache from "./NotifiedCache.ts"

export const CHANNEL = "tender_account_changed"

export const DEFAULT_OPTIONS: NotifiedCache.CacheOptions = { capacity: 10_000, maxAgeMs: 30_000 }

/** Wraps the AccountRepo it is provided with. */
export const layerWith = (
  options: NotifiedCache.CacheOptions
): Layer.Layer<AccountRepo, never, AccountRepo | NotifiedCache.Listener | PgClient.PgClient> =>
  Layer.effect(
    AccountRepo,
    Effect.gen(function*() {
      const repo = yield* AccountRepo
      const cache = yield* NotifiedCache.make<string, Option.Option<Account.Account>>({ ...options, channel: CHANNEL })
      return AccountRepo.of({
        ...repo,
        findBySecretKeyHash: (hash) => cache.read(hash, repo.findBySecretKeyHash(hash), Option.isSome),
        update: (next) => cache.change(undefined, repo.update(next))
      })
    })
  )

export const layer = layerWith(DEFAULT_OPTIONS)
