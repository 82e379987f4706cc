/**
 * Ports of the Accounts feature: account storage. `update` takes only a `Decided` row (the
 * aggregate's transition or revision made it), so no caller patches a stored account by hand.
 */
import { Context, type Effect, type Option } from "effect"
import type { Conflict } from "../kernel/Errors.ts"
import type { AccountId } from "../kernel/Ids.ts"
import type { Decided } from "../kernel/StateMachine.ts"
import type { Account } from "./Account.ts"

/** Port: where accounts are stored, read by id or key, updated under a version check. */
export class AccountRepo extends Context.Service<AccountRepo, {
  /** Stores a new account. */
  insert(account: Account): Effect.Effect<void>
  /** The account with this id, if any. */
  findById(id: AccountId): Effect.Effect<Option.Option<Account>>
  /** The account holding a secret key with this hash (revoked ones included: the caller checks). */
  findBySecretKeyHash(hash: string): Effect.Effect<Option.Option<Account>>
  /** The account whose publishable key this is. */
  findByPublishableKey(key: string): Effect.Effect<Option.Option<Account>>
  /** Writes `next` when the stored version is `next.version - 1`; otherwise `Conflict`. */
  update(next: Decided<Account>): Effect.Effect<void, Conflict>
  /** Every account (operator access). */
  list(): Effect.Effect<ReadonlyArray<Account>>
}>()("@tender/domain/AccountRepo") {}
