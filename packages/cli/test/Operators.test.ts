/**
 * `tender operators add|list|grant|role|disable|reinvite` and `tender audit list` (issue 26), run as
 * processes against the database a running `serve` owns: the enrolment link opens that server's
 * console (its recorded port, or TENDER_PUBLIC_URL), bad input is one error line and exit 1, and
 * the audit log lists what the console recorded through the Operators use case.
 */
import { configFromEnv } from "@tender/adapters/Config"
import { Operators } from "@tender/domain"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Services from "../src/Services.ts"
import { makeHome, runTender, type Served } from "./support/Tender.ts"

const home = makeHome("tender-operators-cli-")
let served: Served
let shop = ""

const LINK = /\/console\/enrol\/[A-Za-z0-9_-]{43}$/

/** One line on stderr, exit 1, nothing on stdout. */
const refused = async (...args: ReadonlyArray<string>) => {
  const result = await home.run(...args)
  expect(result.code).toBe(1)
  expect(result.stdout).toBe("")
  expect(result.stderr.trim().split("\n")).toHaveLength(1)
  return result.stderr.trim()
}

beforeAll(async () => {
  served = await home.serve()
  shop = (await home.runJson("accounts", "create", "--name", "Operators shop")).account_id
}, 120_000)

afterAll(async () => {
  if (served !== undefined) await served.stop()
  await home.cleanup()
}, 120_000)

describe("tender operators", () => {
  it("add prints a one-time link to the serving console and when it expires; nothing secret", async () => {
    const added = await home.runJson("operators", "add", "ann", "--role", "viewer", "--accounts", shop)
    expect(Object.keys(added).sort()).toEqual(["enrolment_url", "expires_at", "operator"])
    expect(added.enrolment_url.startsWith(`${served.url}/console/enrol/`)).toBe(true)
    expect(added.enrolment_url).toMatch(LINK)
    expect(Date.parse(added.expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000)
    expect(added.operator).toMatchObject({ name: "ann", role: "viewer", accounts: [shop], status: "invited" })
    expect(JSON.stringify(added)).not.toMatch(/totp|hash|password/i)

    // An admin sees every account unless told otherwise; the table names the link.
    const text = await home.run("operators", "add", "root", "--role", "admin")
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toMatch(/accounts\s+all/)
    expect(text.stdout).toMatch(new RegExp(`enrolment link\\s+${served.url}/console/enrol/`))
    expect(text.stdout).toMatch(/expires\s+\d{4}-/)
  })

  it("the link's origin is TENDER_PUBLIC_URL when set", async () => {
    const result = await runTender(["operators", "add", "pat", "--role", "admin", "--json", "--data-dir", home.dataDir], {
      env: { TENDER_PUBLIC_URL: "https://console.example.com/" }
    })
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).enrolment_url).toMatch(/^https:\/\/console\.example\.com\/console\/enrol\/[A-Za-z0-9_-]{43}$/)
  })

  it("bad role, name or account, a missing grant, a taken name or an unknown operator: one error line, exit 1", async () => {
    expect(await refused("operators", "add", "bob", "--role", "superuser", "--accounts", "all")).toMatch(/role/)
    expect(await refused("operators", "add", "Bob Smith", "--role", "viewer", "--accounts", "all")).toMatch(/name/)
    expect(await refused("operators", "add", "bob", "--role", "viewer", "--accounts", "acct_doesnotexist00")).toMatch(/acct_doesnotexist00/)
    expect(await refused("operators", "add", "ann", "--role", "viewer", "--accounts", "all")).toMatch(/already exists/)
    expect(await refused("operators", "disable", "nobody")).toMatch(/No operator named nobody/)
    const json = await home.runJsonError("operators", "grant", "ann", "--accounts", "acct_doesnotexist00")
    expect(json).toMatchObject({ code: "validation_failed", errors: [{ field: "accounts" }] })
  })

  it("without --accounts, as contract.md writes the command, the operator sees every account", async () => {
    expect((await home.runJson("operators", "add", "oli", "--role", "operator")).operator).toMatchObject({ name: "oli", role: "operator", accounts: "all" })
  })

  it("list, grant, role, disable and reinvite", async () => {
    expect((await home.runJson("operators", "grant", "ann", "--accounts", "all")).accounts).toBe("all")
    expect((await home.runJson("operators", "role", "ann", "--role", "operator")).role).toBe("operator")
    expect((await home.runJson("operators", "disable", "ann")).status).toBe("disabled")

    const listed = await home.runJson("operators", "list")
    expect(listed.data.map((o: { name: string }) => o.name)).toEqual(["ann", "oli", "pat", "root"])
    expect(listed.data[0]).toMatchObject({ name: "ann", role: "operator", accounts: "all", status: "disabled" })
    const table = await home.run("operators", "list")
    expect(table.stdout.split("\n")[0]).toMatch(/^NAME\s+ROLE\s+STATUS\s+ACCOUNTS\s+LOCKED UNTIL\s+CREATED$/)
    expect(table.stdout).toMatch(/\nann\s+operator\s+disabled\s+all\s/)

    const again = await home.runJson("operators", "reinvite", "ann")
    expect(again.operator.status).toBe("invited")
    expect(again.enrolment_url).toMatch(LINK)
  })
})

describe("tender audit list", () => {
  it("empty, then the console's entries newest first, by operator and account, in pages", async () => {
    expect(await home.runJson("audit", "list")).toEqual({ data: [], has_more: false, next_cursor: null })
    expect((await home.run("audit", "list")).stdout.trim()).toBe("No audit entries.")

    // As the console records its actions: through the use case, on the database the server owns.
    await Effect.runPromise(
      Effect.gen(function*() {
        const operators = yield* Operators
        const all = yield* operators.list()
        const by = (name: string) => all.find((o) => o.name === name)!
        // Entries of one millisecond have no order among them (the log reads by `at`, then by random
        // id), so each is recorded a few milliseconds after the one before.
        const later = Effect.sleep("3 millis")
        yield* operators.record({ operator: by("ann"), action: "capture", target: "ord_first0001", account_id: shop, outcome: "succeeded", detail: "capture 10.00 USD" })
        yield* later
        yield* operators.record({ operator: by("root"), action: "suspend_account", target: "acct_other00001", account_id: "acct_other00001", outcome: "failed", detail: "conflict: already suspended" })
        yield* later
        yield* operators.record({ operator: by("ann"), action: "refund", target: "ord_first0001", account_id: shop, outcome: "succeeded", detail: "refund 4.00 USD" })
      }).pipe(Effect.provide(Services.layer(configFromEnv({ dataDir: home.dataDir }, {}))))
    )

    const all = await home.runJson("audit", "list")
    expect(all.data.map((e: { action: string }) => e.action)).toEqual(["refund", "suspend_account", "capture"])
    expect(all.data[0]).toMatchObject({ operator_name: "ann", target: "ord_first0001", account_id: shop, outcome: "succeeded", detail: "refund 4.00 USD" })
    expect((await home.runJson("audit", "list", "--operator", "root")).data.map((e: { action: string }) => e.action)).toEqual(["suspend_account"])
    expect((await home.runJson("audit", "list", "--account", shop)).data.map((e: { action: string }) => e.action)).toEqual(["refund", "capture"])

    const first = await home.runJson("audit", "list", "--limit", "2")
    expect(first.has_more).toBe(true)
    const second = await home.runJson("audit", "list", "--limit", "2", "--cursor", first.next_cursor)
    expect(second.data.map((e: { action: string }) => e.action)).toEqual(["capture"])

    const text = await home.run("audit", "list", "--limit", "2")
    expect(text.stdout.split("\n")[0]).toMatch(/^TIME\s+OPERATOR\s+ACTION\s+TARGET\s+ACCOUNT\s+OUTCOME\s+DETAIL$/)
    expect(text.stdout).toMatch(/ann\s+refund\s+ord_first0001\s+acct_\S+\s+succeeded\s+refund 4\.00 USD/)
    expect(text.stdout).toContain(`--cursor ${first.next_cursor}`)
    // An unknown name lists nothing (no answer tells which names exist).
    expect((await home.runJson("audit", "list", "--operator", "nobody")).data).toEqual([])
  })
})
