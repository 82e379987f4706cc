/**
 * Operation: an operator's change of one account (`tender accounts suspend|activate|allowlist|
 * profiles|vault|rate-limit|payouts|three-ds|channels pin`), in the rhythm load → decide (the
 * aggregate's pure transition or revision) → persist (the `Decided` row, version-checked: a
 * concurrent change makes this one `Conflict`) → respond with the account as stored.
 */
import { Effect, Option, Result } from "effect"
import * as Account from "../Account.ts"
import { AccountRepo } from "../AccountPorts.ts"
import * as Settings from "../AccountSettings.ts"
import { AccountNotFound } from "../../kernel/Errors.ts"
import type { AccountId } from "../../kernel/Ids.ts"
import { UnitOfWork } from "../../kernel/Ports.ts"
import { nowIso } from "../../kernel/Time.ts"

export const load = (id: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* AccountRepo).findById(id as AccountId)
    if (Option.isNone(found)) return yield* new AccountNotFound({ message: `No account ${id}` })
    return found.value
  })

/** Load, decide, persist under the version check, in one unit of work. */
export const change = <E>(id: string, decide: (account: Account.Account, now: string) => Account.Decision<E>) =>
  Effect.gen(function*() {
    const uow = yield* UnitOfWork
    return yield* uow.transaction(Effect.gen(function*() {
      const decided = decide(yield* load(id), yield* nowIso)
      if (Result.isFailure(decided)) return yield* Effect.fail(decided.failure)
      yield* (yield* AccountRepo).update(decided.success)
      return decided.success
    }))
  })

export const suspend = (id: string) => change(id, (a, now) => Account.transition(a, "suspend", now))
export const activate = (id: string) => change(id, (a, now) => Account.transition(a, "activate", now))
export const setAllowlist = (id: string, cidrs: ReadonlyArray<string>) => change(id, (a, now) => Settings.setAllowlist(a, cidrs, now))
export const addProfile = (id: string, code: string, name: string | null) => change(id, (a, now) => Settings.addProfile(a, code, name, now))
export const disableProfile = (id: string, code: string) => change(id, (a, now) => Settings.disableProfile(a, code, now))
export const pinProfileChannels = (id: string, code: string, channels: ReadonlyArray<string>) =>
  change(id, (a, now) => Settings.pinChannels(a, code, channels, now))
export const enableVault = (id: string) => change(id, Settings.enableVault)
export const setRateLimit = (id: string, perSecond: number, burst: number) => change(id, (a, now) => Settings.setRateLimit(a, perSecond, burst, now))
export const setThreeDsDisplayMode = (id: string, mode: string) => change(id, (a, now) => Settings.setThreeDsDisplayMode(a, mode, now))
export const setPayoutLimit = (id: string, limit: Parameters<typeof Settings.setPayoutLimit>[1]) =>
  change(id, (a, now) => Settings.setPayoutLimit(a, limit, now))
export const clearPayoutLimit = (id: string, currency: string | undefined) => change(id, (a, now) => Settings.clearPayoutLimit(a, currency, now))
