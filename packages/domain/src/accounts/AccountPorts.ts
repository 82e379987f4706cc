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
  insert(account: Account): Effect.Effect<void>
  findById(id: AccountId): Effect.Effect<Option.Option<Account>>
  findBySecretKeyHash(hash: string): Effect.Effect<Option.Option<Account>>
  findByPublishableKey(key: string): Effect.Effect<Option.Option<Account>>
  /** Writes `next` when the stored version is `next.version - 1`; otherwise `Conflict`. */
  update(next: Decided<Account>): Effect.Effect<void, Conflict>
  list(): Effect.Effect<ReadonlyArray<Account>>
}>()("@tender/domain/AccountRepo") {}
