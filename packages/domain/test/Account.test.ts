import { Result } from "effect"
import { describe, expect, it } from "vitest"
import * as Account from "../src/accounts/Account.ts"
import * as Keys from "../src/accounts/AccountKeys.ts"
import type { AccountRepo } from "../src/accounts/AccountPorts.ts"
import * as Settings from "../src/accounts/AccountSettings.ts"
import * as Profile from "../src/accounts/ProcessingProfile.ts"
import { Conflict, ValidationFailed } from "../src/kernel/Errors.ts"
import type { AccountId } from "../src/kernel/Ids.ts"
import { isFinal, step } from "../src/kernel/StateMachine.ts"

const base: Account.Account = {
  id: "acct_abcdefgh12345678" as AccountId,
  name: "demo",
  mode: "test",
  status: "active",
  secret_keys: [{ hash: "h1", hint: "sk_test_abcd…", created_at: "t0", revoked_at: null }],
  publishable_key: "pk_test_x",
  signing_secret: "whsec_x",
  ip_allowlist: [],
  processing_profiles: [],
  vault_enabled: false,
  three_ds_display_mode: "inline",
  rate_limit: null,
  created_at: "t0",
  updated_at: "t0",
  version: 1
}

const next = <E>(decision: Account.Decision<E>) => Result.getOrThrow(decision)
const refusal = <E>(decision: Account.Decision<E>): E => {
  if (Result.isSuccess(decision)) throw new Error("expected a refusal")
  return decision.failure
}

describe("Account status (contract.md: accounts suspend|activate ID; spec: writes refused while the account is not active)", () => {
  it("the table: active → suspended on suspend, suspended → active on activate, nothing else; no final status", () => {
    expect(step(Account.AccountMachine, "active", "suspend")).toBe("suspended")
    expect(step(Account.AccountMachine, "suspended", "activate")).toBe("active")
    expect(step(Account.AccountMachine, "active", "activate")).toBeUndefined()
    expect(step(Account.AccountMachine, "suspended", "suspend")).toBeUndefined()
    for (const status of Account.ACCOUNT_STATUSES) expect(isFinal(Account.AccountMachine, status)).toBe(false)
  })

  it("suspends and activates through the table, stamping and bumping the version; a repeat is a Conflict and changes nothing", () => {
    const suspended = next(Account.transition(base, "suspend", "t1"))
    expect(suspended).toMatchObject({ status: "suspended", updated_at: "t1", version: 2 })
    const again = refusal(Account.transition(suspended, "suspend", "t2"))
    expect(again).toBeInstanceOf(Conflict)
    expect(again.message).toBe(`Account ${base.id} is already suspended`)
    expect(suspended.status).toBe("suspended")
    expect(next(Account.transition(suspended, "activate", "t2"))).toMatchObject({ status: "active", version: 3 })
    expect(refusal(Account.transition(base, "activate", "t2")).message).toBe(`Account ${base.id} is already active`)
  })

  it("a suspended account collects nothing (409 merchant_operation_not_allowed_status)", () => {
    expect(Account.notCollecting(base)).toBeUndefined()
    expect(Account.notCollecting(next(Account.transition(base, "suspend", "t1")))?.code).toBe("merchant_operation_not_allowed_status")
  })

  it("AccountRepo.update takes only a row the aggregate decided: a record patched by hand does not compile (npx tsc -b)", () => {
    const update = (row: Parameters<AccountRepo["Service"]["update"]>[0]) => row.version
    // @ts-expect-error a status set by hand is not a Decided row
    expect(update({ ...base, status: "suspended", version: 2 })).toBe(2)
    expect(update(next(Account.transition(base, "suspend", "t1")))).toBe(2)
  })

  it("is born active at version 1 with its first key", () => {
    const key = Keys.storedKey({ secretKey: "sk_test_abcdef0123", secretKeyHash: "h" }, "t0")
    const born = Account.born({ id: base.id, name: "n", mode: "live", secret_key: key, publishable_key: "pk_live_x", signing_secret: "whsec_y", created_at: "t0" })
    expect(born).toMatchObject({ status: "active", version: 1, updated_at: "t0", secret_keys: [{ hash: "h", hint: "sk_test_abcd…", revoked_at: null }] })
  })
})

describe("Account settings", () => {
  it("a setting keeps the status, stamps and bumps the version", () => {
    const suspended = next(Account.transition(base, "suspend", "t1"))
    expect(next(Settings.setRateLimit(suspended, 5, 10, "t2"))).toMatchObject({ status: "suspended", updated_at: "t2", version: 3 })
  })

  it("replaces the allowlist, validates every CIDR, and lifts it with 0.0.0.0/0 ::/0", () => {
    const set = next(Settings.setAllowlist(base, ["10.0.0.0/8", "::1"], "t1"))
    expect(set.ip_allowlist).toEqual(["10.0.0.0/8", "::1"])
    const bad = refusal(Settings.setAllowlist(base, ["10.0.0.0/8", "nope", "1.2.3.4/40"], "t1"))
    expect(bad.errors?.map((e) => e.field)).toEqual(["cidrs[1]", "cidrs[2]"])
    expect(next(Settings.setAllowlist(set, ["0.0.0.0/0", "::/0"], "t2")).ip_allowlist).toEqual([])
  })

  it("adds and disables processing profiles; a disabled profile stays disabled", () => {
    const added = next(Settings.addProfile(base, "brand-a", "Brand A", "t1"))
    expect(Account.activeProfile(added, "brand-a")?.name).toBe("Brand A")
    expect(refusal(Settings.addProfile(added, "brand-a", null, "t2"))).toBeInstanceOf(Conflict)
    expect(refusal(Settings.addProfile(base, "Bad Code", null, "t2"))).toBeInstanceOf(ValidationFailed)
    const disabled = next(Settings.disableProfile(added, "brand-a", "t2"))
    expect(disabled.processing_profiles[0]?.status).toBe("disabled")
    expect(Account.activeProfile(disabled, "brand-a")).toBeUndefined()
    expect(refusal(Settings.disableProfile(disabled, "brand-a", "t3")).message).toBe("Processing profile brand-a is already disabled")
    expect(refusal(Settings.disableProfile(base, "ghost", "t3"))).toBeInstanceOf(ValidationFailed)
    expect(Profile.ProfileMachine.finals).toEqual(["disabled"])
  })

  it("validates rate limits", () => {
    expect(next(Settings.setRateLimit(base, 5, 10, "t1")).rate_limit).toEqual({ per_second: 5, burst: 10 })
    expect(refusal(Settings.setRateLimit(base, 0, 10, "t1"))).toBeInstanceOf(ValidationFailed)
    expect(refusal(Settings.setRateLimit(base, 10, 5, "t1"))).toBeInstanceOf(ValidationFailed)
  })
})

describe("Account keys", () => {
  it("rolls keys: every live key revoked, the new one live", () => {
    const rolled = next(Keys.rollKeys(base, { secretKey: "sk_test_ffffffff00", secretKeyHash: "h2" }, "t1"))
    expect(rolled.secret_keys.map((k) => [k.hash, k.revoked_at])).toEqual([["h1", "t1"], ["h2", null]])
  })

  it("a temporary key lives until its expiry, beside the merchant's key; revoking it, or rolling the keys, ends it; spent ones are not kept", () => {
    const t0 = "2026-01-01T00:00:00.000Z"
    const expires = "2026-01-02T00:00:00.000Z"
    const withTemporary = next(Keys.addTemporaryKey(base, { secretKey: "sk_test_ffffffff00", secretKeyHash: "h2" }, t0, expires))
    const temporary = withTemporary.secret_keys.find((k) => k.hash === "h2")!
    expect(temporary).toMatchObject({ revoked_at: null, expires_at: expires })
    expect(withTemporary.secret_keys.find((k) => k.hash === "h1")!.revoked_at).toBeNull()
    expect(Keys.isLive(temporary, Date.parse(t0))).toBe(true)
    expect(Keys.isLive(temporary, Date.parse(expires))).toBe(false)

    // Revoked: a temporary key goes; the merchant's own key stays as it was.
    const revoked = next(Keys.revokeKey(withTemporary, "h2", "2026-01-01T01:00:00.000Z"))
    expect(revoked.secret_keys.map((k) => [k.hash, k.revoked_at])).toEqual([["h1", null]])

    // Rolled: the merchant's key is revoked (and kept, as history), the temporary one goes.
    const rolled = next(Keys.rollKeys(withTemporary, { secretKey: "sk_test_eeeeeeee00", secretKeyHash: "h3" }, "2026-01-01T02:00:00.000Z"))
    expect(rolled.secret_keys.map((k) => [k.hash, k.revoked_at])).toEqual([["h1", "2026-01-01T02:00:00.000Z"], ["h3", null]])
    expect(Keys.isLive(rolled.secret_keys[0]!, Date.parse("2026-01-01T02:00:00.000Z"))).toBe(false)

    // Expired: the next temporary key's issue drops it.
    const later = next(Keys.addTemporaryKey(withTemporary, { secretKey: "sk_test_dddddddd00", secretKeyHash: "h4" }, "2026-01-03T00:00:00.000Z", "2026-01-04T00:00:00.000Z"))
    expect(later.secret_keys.map((k) => k.hash)).toEqual(["h1", "h4"])
  })

  it("an account's next change drops a previous signing secret whose overlap has ended, and keeps one still overlapping", () => {
    const rolled = next(Keys.rollSigningSecret(base, "whsec_new", 60, "2026-01-01T00:00:00.000Z"))
    expect(rolled.previous_signing_secret).toBe("whsec_x")
    const during = next(Account.transition(rolled, "suspend", "2026-01-01T00:00:59.000Z"))
    expect(during.previous_signing_secret).toBe("whsec_x")
    const after = next(Account.transition(during, "activate", "2026-01-01T00:01:00.000Z"))
    expect([after.previous_signing_secret, after.previous_signing_secret_expires_at]).toEqual([null, null])
    expect(Account.signingSecrets(after, Date.parse("2026-01-01T00:01:00.000Z"))).toEqual(["whsec_new"])
  })
})
