import { describe, expect, it } from "vitest"
import * as Account from "../src/accounts/Account.ts"
import { Conflict, ValidationFailed } from "../src/kernel/Errors.ts"
import type { AccountId } from "../src/kernel/Ids.ts"

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

describe("Account", () => {
  it("suspends and activates, refusing a repeat", () => {
    const suspended = Account.suspend(base, "t1") as Account.Account
    expect(suspended.status).toBe("suspended")
    expect(Account.suspend(suspended, "t2")).toBeInstanceOf(Conflict)
    expect((Account.activate(suspended, "t2") as Account.Account).status).toBe("active")
    expect(Account.activate(base, "t2")).toBeInstanceOf(Conflict)
  })

  it("replaces the allowlist, validates every CIDR, and lifts it with 0.0.0.0/0 ::/0", () => {
    const set = Account.setAllowlist(base, ["10.0.0.0/8", "::1"], "t1") as Account.Account
    expect(set.ip_allowlist).toEqual(["10.0.0.0/8", "::1"])
    const bad = Account.setAllowlist(base, ["10.0.0.0/8", "nope", "1.2.3.4/40"], "t1") as ValidationFailed
    expect(bad.errors?.map((e) => e.field)).toEqual(["cidrs[1]", "cidrs[2]"])
    expect((Account.setAllowlist(set, ["0.0.0.0/0", "::/0"], "t2") as Account.Account).ip_allowlist).toEqual([])
  })

  it("adds and disables processing profiles", () => {
    const added = Account.addProfile(base, "brand-a", "Brand A", "t1") as Account.Account
    expect(Account.activeProfile(added, "brand-a")?.name).toBe("Brand A")
    expect(Account.addProfile(added, "brand-a", null, "t2")).toBeInstanceOf(Conflict)
    expect(Account.addProfile(base, "Bad Code", null, "t2")).toBeInstanceOf(ValidationFailed)
    const disabled = Account.disableProfile(added, "brand-a", "t2") as Account.Account
    expect(Account.activeProfile(disabled, "brand-a")).toBeUndefined()
    expect(Account.disableProfile(disabled, "brand-a", "t3")).toBeInstanceOf(Conflict)
    expect(Account.disableProfile(base, "ghost", "t3")).toBeInstanceOf(ValidationFailed)
  })

  it("rolls keys: every live key revoked, the new one live", () => {
    const rolled = Account.rollKeys(base, { secretKey: "sk_test_ffffffff00", secretKeyHash: "h2" }, "t1")
    expect(rolled.secret_keys.map((k) => [k.hash, k.revoked_at])).toEqual([["h1", "t1"], ["h2", null]])
  })

  it("an account's next change drops a previous signing secret whose overlap has ended, and keeps one still overlapping", () => {
    const rolled = Account.rollSigningSecret(base, "whsec_new", 60, "2026-01-01T00:00:00.000Z") as Account.Account
    expect(rolled.previous_signing_secret).toBe("whsec_x")
    const during = Account.suspend(rolled, "2026-01-01T00:00:59.000Z") as Account.Account
    expect(during.previous_signing_secret).toBe("whsec_x")
    const after = Account.activate(during, "2026-01-01T00:01:00.000Z") as Account.Account
    expect([after.previous_signing_secret, after.previous_signing_secret_expires_at]).toEqual([null, null])
    expect(Account.signingSecrets(after, Date.parse("2026-01-01T00:01:00.000Z"))).toEqual(["whsec_new"])
  })

  it("validates rate limits", () => {
    expect((Account.setRateLimit(base, 5, 10, "t1") as Account.Account).rate_limit).toEqual({ per_second: 5, burst: 10 })
    expect(Account.setRateLimit(base, 0, 10, "t1")).toBeInstanceOf(ValidationFailed)
    expect(Account.setRateLimit(base, 10, 5, "t1")).toBeInstanceOf(ValidationFailed)
  })
})
