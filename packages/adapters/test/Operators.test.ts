/**
 * The Operators use case on memory storage with the real credential primitives (scrypt, TOTP):
 * enrolment, login with its one answer for every wrong part, single-use codes, lock-out and its end
 * (TestClock), sessions ending on logout, disable and reinvite, grants checked against real
 * accounts, and the audit log's pages.
 */
import { describe, expect, it } from "@effect/vitest"
import { Accounts, Operator, Operators } from "@tender/domain"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { base32Decode, hotp, totpStepOf } from "../src/crypto/OperatorCredentialsNode.ts"
import * as OperatorCredentialsNode from "../src/crypto/OperatorCredentialsNode.ts"
import { memoryStorage } from "../src/Infrastructure.ts"

const START = Date.parse("2026-11-29T05:00:00.000Z")
const PASSWORD = "correct horse battery"

const world = () =>
  Layer.mergeAll(Operators.layer, Accounts.layer).pipe(
    Layer.provideMerge(memoryStorage),
    Layer.provideMerge(Layer.mergeAll(IdsRandom.layer, KeyHasherSha256.layer, OperatorCredentialsNode.layer))
  )

/** The authenticator app: the code of `secret` at the TestClock's now (or `ms`). */
const codeAt = (secret: string, ms: number) => hotp(base32Decode(secret)!, totpStepOf(ms))
const now = Effect.clockWith((clock) => clock.currentTimeMillis)
const code = (secret: string) => Effect.map(now, (ms) => codeAt(secret, ms))
/** Moves to the next 30 s step, so a new code is current (each code is accepted once). */
const nextStep = TestClock.adjust("30 seconds")

/** A new operator, enrolled; returns their secret (to make codes) and the invitation. */
const enrolled = (name: string, role: Operator.OperatorRole = "operator") =>
  Effect.gen(function*() {
    const operators = yield* Operators
    const invitation = yield* operators.add({ name, role, accounts: "all" })
    const shown = yield* operators.enrolment(invitation.enrolment_token)
    const secret = Option.getOrThrow(shown).totp_secret
    yield* operators.enrol(invitation.enrolment_token, PASSWORD, yield* code(secret))
    yield* nextStep
    return { secret, invitation }
  })

const loggedIn = (name: string, secret: string) =>
  Effect.gen(function*() {
    const result = yield* (yield* Operators).login(name, PASSWORD, yield* code(secret))
    if (result._tag !== "LoggedIn") throw new Error(`expected LoggedIn, got ${result._tag}`)
    yield* nextStep
    return result
  })

const run = <A, E>(effect: Effect.Effect<A, E, Operators | Accounts>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(START)
    return yield* effect
  }).pipe(Effect.provide(world()))

describe("Operators (memory)", () => {
  it.effect("enrol → login → authenticate → logout: the token no longer authenticates", () =>
    run(Effect.gen(function*() {
      const operators = yield* Operators
      const invitation = yield* operators.add({ name: "ann", role: "viewer", accounts: "all" })
      expect(invitation.operator.status).toBe("invited")
      expect(Date.parse(invitation.expires_at) - START).toBe(Operator.ENROLMENT_TTL_MS)
      const shown = Option.getOrThrow(yield* operators.enrolment(invitation.enrolment_token))
      expect(shown.totp_secret).toMatch(/^[A-Z2-7]{32}$/)
      expect(shown.operator).not.toHaveProperty("totp_secret")

      // A short password and a wrong code are refused by name; the link stays open.
      const short = yield* Effect.flip(operators.enrol(invitation.enrolment_token, "short", yield* code(shown.totp_secret)))
      expect(short.errors?.[0]?.field).toBe("password")
      const wrong = yield* Effect.flip(operators.enrol(invitation.enrolment_token, PASSWORD, "000000"))
      expect(wrong.errors?.[0]?.field).toBe("code")

      const active = yield* operators.enrol(invitation.enrolment_token, PASSWORD, yield* code(shown.totp_secret))
      expect(active.status).toBe("active")
      // The link is spent.
      expect(Option.isNone(yield* operators.enrolment(invitation.enrolment_token))).toBe(true)
      expect((yield* Effect.flip(operators.enrol(invitation.enrolment_token, PASSWORD, "123456")))._tag).toBe("NotFound")

      yield* nextStep
      const login = yield* loggedIn("ann", shown.totp_secret)
      expect(login.operator.name).toBe("ann")
      expect(login.session.csrf_token.length).toBeGreaterThanOrEqual(43)
      const session = Option.getOrThrow(yield* operators.authenticate(login.session_token))
      expect(session.operator.id).toBe(active.id)
      expect(session.session.csrf_token).toBe(login.session.csrf_token)

      yield* operators.logout(login.session_token)
      expect(Option.isNone(yield* operators.authenticate(login.session_token))).toBe(true)
    })))

  it.effect("an expired enrolment link is refused", () =>
    run(Effect.gen(function*() {
      const operators = yield* Operators
      const invitation = yield* operators.add({ name: "late", role: "viewer", accounts: "all" })
      const secret = Option.getOrThrow(yield* operators.enrolment(invitation.enrolment_token)).totp_secret
      yield* TestClock.adjust(Operator.ENROLMENT_TTL_MS + 1)
      expect(Option.isNone(yield* operators.enrolment(invitation.enrolment_token))).toBe(true)
      expect((yield* Effect.flip(operators.enrol(invitation.enrolment_token, PASSWORD, yield* code(secret))))._tag).toBe("NotFound")
    })))

  it.effect("one answer for every wrong part; a code is accepted once", () =>
    run(Effect.gen(function*() {
      const operators = yield* Operators
      const { secret } = yield* enrolled("bob")
      const current = yield* code(secret)
      expect(yield* operators.login("nobody", PASSWORD, current)).toEqual({ _tag: "Refused" })
      expect(yield* operators.login("bob", "wrong password!!", current)).toEqual({ _tag: "Refused" })
      const wrongCode = current === "000000" ? "111111" : "000000"
      expect(yield* operators.login("bob", PASSWORD, wrongCode)).toEqual({ _tag: "Refused" })
      expect((yield* operators.login("bob", PASSWORD, current))._tag).toBe("LoggedIn")
      // The same code again, inside its window: a replay.
      expect(yield* operators.login("bob", PASSWORD, current)).toEqual({ _tag: "Refused" })
      // A code one step old is still in the window, but not after a later one was used.
      yield* nextStep
      expect(yield* operators.login("bob", PASSWORD, current)).toEqual({ _tag: "Refused" })
      expect((yield* operators.login("bob", PASSWORD, yield* code(secret)))._tag).toBe("LoggedIn")
      // An invited operator cannot log in, whatever they send.
      yield* operators.add({ name: "carl", role: "viewer", accounts: "all" })
      expect(yield* operators.login("carl", "", "")).toEqual({ _tag: "Refused" })
    })))

  it.effect("5 failures lock the operator out for 15 minutes; only the right password hears Locked, a wrong one counts", () =>
    run(Effect.gen(function*() {
      const operators = yield* Operators
      const { secret } = yield* enrolled("dora")
      const fail = (name = "dora") => Effect.flatMap(code(secret), (c) => operators.login(name, "not the password", c))
      // Every failure answers Refused, the locking one too: a stranger cannot tell a locked name.
      for (let i = 1; i <= Operator.LOCKOUT_THRESHOLD; i++) expect(yield* fail()).toEqual({ _tag: "Refused" })
      const until = new Date(START + 30_000 + Operator.LOCKOUT_MS).toISOString()
      expect((yield* operators.list()).find((o) => o.name === "dora")?.locked_until).toBe(until)
      // The right password (whatever the code) hears Locked; not even a right code gets in.
      expect(yield* operators.login("dora", PASSWORD, "000000")).toEqual({ _tag: "Locked", until })
      expect(yield* operators.login("dora", PASSWORD, yield* code(secret))).toEqual({ _tag: "Locked", until })
      // An unknown name, and a name no operator can have (storage never sees it), are Refused however often.
      for (let i = 1; i <= Operator.LOCKOUT_THRESHOLD + 1; i++) {
        expect(yield* fail("nobody")).toEqual({ _tag: "Refused" })
        expect(yield* fail("do\u0000ra")).toEqual({ _tag: "Refused" })
      }
      expect(yield* operators.login("do\u0000ra", PASSWORD, yield* code(secret))).toEqual({ _tag: "Refused" })

      yield* TestClock.adjust(Operator.LOCKOUT_MS - 1_000)
      expect((yield* operators.login("dora", PASSWORD, yield* code(secret)))._tag).toBe("Locked")
      yield* TestClock.adjust(31_000)
      expect((yield* operators.login("dora", PASSWORD, yield* code(secret)))._tag).toBe("LoggedIn")
    })))

  it.effect("lock-outs in a row double (15 min, 30, 60… up to 24 h); wrong passwords while locked count; a login resets it", () =>
    run(Effect.gen(function*() {
      const operators = yield* Operators
      const { secret } = yield* enrolled("gus")
      const lockedUntil = Effect.map(operators.list(), (all) => Date.parse(all.find((o) => o.name === "gus")!.locked_until!))
      const lockOut = Effect.gen(function*() {
        for (let i = 1; i <= Operator.LOCKOUT_THRESHOLD; i++) yield* operators.login("gus", "not the password", "000000")
        return (yield* lockedUntil) - (yield* now)
      })
      expect(yield* lockOut).toBe(Operator.LOCKOUT_MS)
      // Guessing on while locked: five more wrong passwords lock again, from now, for twice as long.
      expect(yield* lockOut).toBe(2 * Operator.LOCKOUT_MS)
      yield* TestClock.adjust(2 * Operator.LOCKOUT_MS)
      expect(yield* lockOut).toBe(4 * Operator.LOCKOUT_MS)
      expect([3, 4, 5, 6, 7, 20].map(Operator.lockoutMs)).toEqual([8, 16, 32, 64, 96, 96].map((n) => n * Operator.LOCKOUT_MS))
      yield* TestClock.adjust(4 * Operator.LOCKOUT_MS)
      yield* loggedIn("gus", secret)
      expect(yield* lockOut).toBe(Operator.LOCKOUT_MS)
    })))

  it.effect("a success resets the count of failures", () =>
    run(Effect.gen(function*() {
      const operators = yield* Operators
      const { secret } = yield* enrolled("erin")
      for (let i = 1; i < Operator.LOCKOUT_THRESHOLD; i++) yield* operators.login("erin", "nope nope nope", "000000")
      yield* loggedIn("erin", secret)
      for (let i = 1; i < Operator.LOCKOUT_THRESHOLD; i++) {
        expect(yield* operators.login("erin", "nope nope nope", "000000")).toEqual({ _tag: "Refused" })
      }
    })))

  it.effect("sessions end when idle 30 minutes, and 12 hours after login however busy", () =>
    run(Effect.gen(function*() {
      const operators = yield* Operators
      const { secret } = yield* enrolled("fay")
      const idle = yield* loggedIn("fay", secret)
      yield* TestClock.adjust(Operator.SESSION_IDLE_MS + 1_000)
      expect(Option.isNone(yield* operators.authenticate(idle.session_token))).toBe(true)

      const busy = yield* loggedIn("fay", secret)
      for (let spent = 0; spent < Operator.SESSION_ABSOLUTE_MS - 20 * 60_000; spent += 20 * 60_000) {
        yield* TestClock.adjust("20 minutes")
        expect(Option.isSome(yield* operators.authenticate(busy.session_token))).toBe(true)
      }
      yield* TestClock.adjust("20 minutes")
      expect(Option.isNone(yield* operators.authenticate(busy.session_token))).toBe(true)
    })))

  it.effect("disable ends the operator's sessions and logins; reinvite starts them over", () =>
    run(Effect.gen(function*() {
      const operators = yield* Operators
      const { secret } = yield* enrolled("gus")
      const login = yield* loggedIn("gus", secret)
      const disabled = yield* operators.disable("gus")
      expect(disabled.status).toBe("disabled")
      expect(Option.isNone(yield* operators.authenticate(login.session_token))).toBe(true)
      expect(yield* operators.login("gus", PASSWORD, yield* code(secret))).toEqual({ _tag: "Refused" })
      expect((yield* Effect.flip(operators.disable("gus")))._tag).toBe("Conflict")

      const again = yield* operators.reinvite("gus")
      expect(again.operator.status).toBe("invited")
      const fresh = Option.getOrThrow(yield* operators.enrolment(again.enrolment_token)).totp_secret
      expect(fresh).not.toBe(secret)
      yield* operators.enrol(again.enrolment_token, "a new password!", yield* code(fresh))
      yield* nextStep
      // The old password and authenticator no longer work; the new ones do.
      expect(yield* operators.login("gus", PASSWORD, yield* code(secret))).toEqual({ _tag: "Refused" })
      expect((yield* operators.login("gus", "a new password!", yield* code(fresh)))._tag).toBe("LoggedIn")
    })))

  it.effect("reinvite ends a live session", () =>
    run(Effect.gen(function*() {
      const operators = yield* Operators
      const { secret } = yield* enrolled("hal")
      const login = yield* loggedIn("hal", secret)
      yield* operators.reinvite("hal")
      expect(Option.isNone(yield* operators.authenticate(login.session_token))).toBe(true)
    })))

  it.effect("names, roles and grants are checked: unique names, existing accounts", () =>
    run(Effect.gen(function*() {
      const operators = yield* Operators
      const account = yield* (yield* Accounts).create({ name: "Shop", mode: "test" })
      const bad = yield* Effect.flip(operators.add({ name: "Not A Name", role: "viewer", accounts: "all" }))
      expect(bad.errors?.[0]?.field).toBe("name")
      const unknown = yield* Effect.flip(operators.add({ name: "ivy", role: "viewer", accounts: ["acct_doesnotexist1"] }))
      expect(unknown.errors?.[0]?.field).toBe("accounts")
      const none = yield* Effect.flip(operators.add({ name: "ivy", role: "viewer", accounts: [] }))
      expect(none.errors?.[0]?.field).toBe("accounts")
      const ivy = yield* operators.add({ name: "ivy", role: "viewer", accounts: [account.account_id, account.account_id] })
      expect(ivy.operator.accounts).toEqual([account.account_id])
      expect((yield* Effect.flip(operators.add({ name: "ivy", role: "admin", accounts: "all" })))._tag).toBe("Conflict")

      expect((yield* operators.grant("ivy", "all")).accounts).toBe("all")
      expect((yield* operators.setRole("ivy", "admin")).role).toBe("admin")
      expect((yield* Effect.flip(operators.setRole("nobody", "admin")))._tag).toBe("NotFound")
      expect((yield* operators.list()).map((o) => [o.name, o.role])).toEqual([["ivy", "admin"]])
    })))

  it.effect("the audit log: newest first, in pages, by operator and by granted accounts", () =>
    run(Effect.gen(function*() {
      const operators = yield* Operators
      const ann = (yield* operators.add({ name: "ann", role: "operator", accounts: "all" })).operator
      const bob = (yield* operators.add({ name: "bob", role: "operator", accounts: "all" })).operator
      const entry = (operator: typeof ann, target: string, account: string) =>
        Effect.andThen(TestClock.adjust("1 second"), operators.record({ operator, action: "capture", target, account_id: account, outcome: "succeeded", detail: "capture 10.00 USD" }))
      yield* entry(ann, "ord_1", "acct_a")
      yield* entry(bob, "ord_2", "acct_b")
      yield* entry(ann, "ord_3", "acct_b")

      const first = yield* operators.audit({ limit: 2 })
      expect(first.data.map((e) => e.target)).toEqual(["ord_3", "ord_2"])
      expect(first.has_more).toBe(true)
      const second = yield* operators.audit({ limit: 2, cursor: first.next_cursor! })
      expect(second.data.map((e) => e.target)).toEqual(["ord_1"])
      expect(second.has_more).toBe(false)

      expect((yield* operators.audit({ operator: "ann" })).data.map((e) => e.target)).toEqual(["ord_3", "ord_1"])
      expect((yield* operators.audit({ accounts: ["acct_b"] })).data.map((e) => e.target)).toEqual(["ord_3", "ord_2"])
      // An unknown or malformed name is an empty page: the answer does not tell which names exist.
      const empty = { data: [], has_more: false, next_cursor: null }
      expect(yield* operators.audit({ operator: "nobody" })).toEqual(empty)
      expect(yield* operators.audit({ operator: "no\u0000body" })).toEqual(empty)
      expect(yield* operators.audit({ operator: "Ann" })).toEqual(empty)
      expect((yield* Effect.flip(operators.audit({ cursor: "junk" }))).errors?.[0]?.field).toBe("cursor")
    })))

  it("each role may do what the console offers it, and no more", () => {
    const table = Object.fromEntries(Operator.OPERATOR_ROLES.map((role) => [role, Operator.CONSOLE_ACTIONS.filter((a) => Operator.mayAct(role, a))]))
    expect(table).toEqual({
      viewer: [],
      operator: ["capture", "void", "refund", "redeliver_event"],
      admin: ["capture", "void", "refund", "redeliver_event", "disable_webhook_endpoint", "suspend_account", "activate_account"]
    })
    expect(Operator.isGranted(["acct_a"], "acct_a")).toBe(true)
    expect(Operator.isGranted(["acct_a"], "acct_b")).toBe(false)
    expect(Operator.isGranted("all", "acct_b")).toBe(true)
  })
})
