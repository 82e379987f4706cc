/**
 * Payouts bounded (issue 21; contract.md, Payouts and Operator set-up): the operator's
 * `tender accounts payouts` command, and payouts racing on two `tender serve` processes that share
 * one PostgreSQL: together they never pay out more than the allowance — the original's balance by
 * default, the operator's daily limit across every order of the account when set.
 */
import { describe, expect, it } from "vitest"
import { makeHome, type Merchant, merchantClient, type Reply, twoServers } from "./support/Tender.ts"

const home = makeHome("tender-payouts-")
let merchant: Merchant & { readonly account_id: string }

// Provider calls take 40 ms, as a real provider's would: a payout is still at the provider while the
// other process decides the next one.
const SERVER_ENV = { TENDER_RATE_LIMIT_PER_SECOND: "100000", TENDER_RATE_LIMIT_BURST: "100000", TENDER_SANDBOX_LATENCY_MS: "40" }

const { get, post } = merchantClient(() => merchant)
const { database, on } = twoServers(home, SERVER_ENV)

let seq = 0
const charge = async (amount: string) => {
  const token = (await post(on(0), "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
  const reply = await post(on(0), "/v1/payments", {
    amount,
    currency: "USD",
    country: "US",
    merchant_reference: `payout-race-${Date.now()}-${++seq}`,
    payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
  })
  expect(reply.json.status, JSON.stringify(reply.json)).toBe("completed")
  return reply.json.order_id as string
}

const namesAmount = (reply: Reply) => {
  expect(reply.status, JSON.stringify(reply.json)).toBe(400)
  expect(reply.json.code).toBe("validation_failed")
  expect(reply.json.errors.map((e: { field: string }) => e.field)).toEqual(["amount"])
}

/** What the account paid out (pending or succeeded), in minor units, as the payouts table holds it. */
const paidOut = async (where: string, value: string) =>
  Number((await database().query(`SELECT COALESCE(SUM(amount), 0) AS total FROM payouts WHERE ${where} = $1 AND status <> 'failed'`, [value])).rows[0].total)

describe("tender accounts payouts ID --max-per-payout A --max-per-day A (contract.md, Operator set-up)", () => {
  it("shows, sets per currency (decimal amounts in its units), and clears; a readable table by default, one JSON document with --json", async () => {
    const account = await home.runJson("accounts", "create", "--name", "payout limits")
    const usd = { currency: "USD", replaces_balance_rule_in: "USD", unit: "USD", max_per_payout: 500, max_per_day: 2000 }
    expect(await home.runJson("accounts", "payouts", account.account_id)).toEqual({ account_id: account.account_id, payout_limits: [] })
    const shown = await home.run("accounts", "payouts", account.account_id)
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain("No limits: every payout is at most the original payment's settled amount less its refunds and earlier payouts.")

    // contract.md: limits are set "instead" of the balance rule; the JSON's fields say so, and in what unit.
    expect(await home.runJson("accounts", "payouts", account.account_id, "--currency", "usd", "--max-per-payout", "500.00", "--max-per-day", "2000")).toEqual({
      account_id: account.account_id,
      payout_limits: [usd]
    })
    const set = await home.run("accounts", "payouts", account.account_id, "--currency", "CLP", "--max-per-payout", "90000", "--max-per-day", "250000")
    expect(set.code, set.stderr).toBe(0)
    expect(set.stdout).toMatch(/CURRENCY\s+MAX PER PAYOUT\s+MAX PER DAY\s+UNIT\s+REPLACES THE BALANCE RULE IN/)
    expect(set.stdout).toMatch(/CLP\s+90000\s+250000\s+CLP\s+CLP/)
    expect(set.stdout).toMatch(/USD\s+500\.00\s+2000\.00\s+USD\s+USD/)
    expect(set.stdout).toContain("CLP: at most 90000 per payout and 250000 per UTC day; USD: at most 500.00 per payout and 2000.00 per UTC day; " +
      "other currencies: at most the original payment's settled amount less its refunds and earlier payouts. The limits replace the balance rule " +
      "(at most the original payment's settled amount less its refunds and earlier payouts) where they apply: a payout may then exceed what its payment took.")
    // `accounts get` shows the rule too.
    const clp = { currency: "CLP", replaces_balance_rule_in: "CLP", unit: "CLP", max_per_payout: 90000, max_per_day: 250000 }
    expect((await home.runJson("accounts", "get", account.account_id)).payout_limits).toEqual([clp, usd])
    expect((await home.run("accounts", "get", account.account_id)).stdout).toMatch(/payouts\s+CLP: at most 90000 per payout .* The limits replace the balance rule/)

    expect(await home.runJson("accounts", "payouts", account.account_id, "--currency", "CLP", "--clear")).toEqual({
      account_id: account.account_id,
      payout_limits: [usd]
    })
  }, 120_000)

  it("contract.md's form as written, without --currency: the account's default for every currency (whole units, read in each payout's currency); --currency C overrides it for C; shown and cleared each on its own", async () => {
    const account = await home.runJson("accounts", "create", "--name", "payout default")
    const set = await home.run("accounts", "payouts", account.account_id, "--max-per-payout", "300", "--max-per-day", "1000.00")
    expect(set.code, set.stderr).toBe(0)
    // The default replaces the balance rule in every currency without its own limits, its amounts whole units of each.
    expect(set.stdout).toMatch(/\(default\)\s+300\s+1000\s+whole units of each currency\s+every currency without its own limits/)
    expect(set.stdout).toContain("every currency without its own limits: at most 300 per payout and 1000 per UTC day, in whole units of each currency " +
      "(300 JPY, 300 USD and 300 KWD alike, not converted). The limits replace the balance rule")
    const fallback = { currency: null, replaces_balance_rule_in: "every currency without its own limits", unit: "whole units of each currency", max_per_payout: 300, max_per_day: 1000 }
    const usd = { currency: "USD", replaces_balance_rule_in: "USD", unit: "USD", max_per_payout: 50.5, max_per_day: 75 }
    expect(await home.runJson("accounts", "payouts", account.account_id, "--currency", "USD", "--max-per-payout", "50.50", "--max-per-day", "75")).toEqual({
      account_id: account.account_id,
      payout_limits: [fallback, usd]
    })
    const shown = await home.run("accounts", "payouts", account.account_id)
    expect(shown.stdout).toMatch(/\(default\)\s+300\s+1000/)
    expect(shown.stdout).toMatch(/USD\s+50\.50\s+75\.00\s+USD\s+USD/)
    expect((await home.runJson("accounts", "get", account.account_id)).payout_limits).toEqual([fallback, usd])
    // --clear without --currency removes the default only; with it, the currency's own.
    expect(await home.runJson("accounts", "payouts", account.account_id, "--clear")).toEqual({
      account_id: account.account_id,
      payout_limits: [usd]
    })
    expect((await home.runJsonError("accounts", "payouts", account.account_id, "--clear")).code).toBe("conflict")
    expect(await home.runJson("accounts", "payouts", account.account_id, "--currency", "usd", "--clear")).toEqual({ account_id: account.account_id, payout_limits: [] })
  }, 120_000)

  it("refuses what it cannot apply (exit 1, the field named, nothing changed)", async () => {
    const account = await home.runJson("accounts", "create", "--name", "payout limits refused")
    const refused = async (args: ReadonlyArray<string>, field: string) => {
      const error = await home.runJsonError("accounts", "payouts", account.account_id, ...args)
      expect(error.code).toBe("validation_failed")
      expect(error.errors.map((e: { field: string }) => e.field)).toContain(field)
    }
    // Without --currency A is read in every currency, JPY's too: whole units only.
    await refused(["--max-per-payout", "5.50", "--max-per-day", "10"], "max_per_payout")
    await refused(["--max-per-payout", "5", "--max-per-day", "10.01"], "max_per_day")
    await refused(["--max-per-payout", "123456789012", "--max-per-day", "123456789012"], "max_per_payout")
    await refused(["--max-per-payout", "20", "--max-per-day", "10"], "max_per_payout")
    await refused(["--currency", "USD", "--max-per-payout", "5.00"], "max_per_day")
    await refused(["--currency", "XXX", "--max-per-payout", "5.00", "--max-per-day", "10.00"], "currency")
    await refused(["--currency", "USD", "--max-per-payout", "5.001", "--max-per-day", "10.00"], "max_per_payout")
    await refused(["--currency", "USD", "--max-per-payout", "0", "--max-per-day", "10.00"], "max_per_payout")
    await refused(["--currency", "USD", "--max-per-payout", "20.00", "--max-per-day", "10.00"], "max_per_payout")
    await refused(["--currency", "JPY", "--max-per-payout", "5.5", "--max-per-day", "10"], "max_per_payout")
    const conflict = await home.runJsonError("accounts", "payouts", account.account_id, "--currency", "USD", "--clear")
    expect(conflict.code).toBe("conflict")
    expect(await home.runJson("accounts", "payouts", account.account_id)).toEqual({ account_id: account.account_id, payout_limits: [] })
  }, 120_000)
})

describe("two payouts at once never exceed the allowance together (two server processes, one PostgreSQL)", () => {
  it("default rule: concurrent payouts of one payment never pay out more than it settled", async () => {
    merchant = await home.runJson("accounts", "create", "--name", "payout racer")
    for (let round = 0; round < 4; round++) {
      const orderId = await charge("10.00")
      // Each fits alone; two do not.
      const replies = await Promise.all([0, 1, 2, 3].map((i) => post(on(i), "/v1/payouts", { order_id: orderId, amount: "6.00" })))
      const won = replies.filter((r) => r.status === 201)
      expect(won.length, JSON.stringify(replies.map((r) => r.json))).toBe(1)
      for (const lost of replies.filter((r) => r.status !== 201)) {
        if (lost.status === 400) namesAmount(lost)
        else expect({ status: lost.status, code: lost.json.code }).toEqual({ status: 409, code: "payout_in_progress" })
      }
      expect(await paidOut("order_id", orderId)).toBe(600)
    }
  }, 120_000)

  it("operator limits: payouts on 60 orders at once, two processes, stop at --max-per-day (the account's payout lock, after the order's)", async () => {
    merchant = await home.runJson("accounts", "create", "--name", "daily limit racer")
    // Set before the servers first see the account, so neither serves it from a cache.
    await home.runJson("accounts", "payouts", merchant.account_id, "--currency", "USD", "--max-per-payout", "3.00", "--max-per-day", "90.00")
    const orders = await Promise.all(Array.from({ length: 60 }, () => charge("1.00")))
    // 3.00 each on 1.00 payments (the limits replace the balance): 60 of them would be 180.00. (Without the
    // account's lock, a run of this test paid out 108.00.)
    const replies = await Promise.all(orders.map((orderId, i) => post(on(i), "/v1/payouts", { order_id: orderId, amount: "3.00" })))
    expect(replies.filter((r) => r.status === 201).length, JSON.stringify(replies.map((r) => r.status))).toBe(30)
    for (const refused of replies.filter((r) => r.status !== 201)) namesAmount(refused)
    expect(await paidOut("account_id", merchant.account_id)).toBe(9000)
    // The day is spent: even a small one is refused now, on either process.
    namesAmount(await post(on(1), "/v1/payouts", { order_id: orders[0], amount: "0.01" }))
  }, 120_000)
})

describe("limits changed through the CLI bind the next payout at once (read from storage under the order's lock, not the server's account cache)", () => {
  it("a server holding the account in its cache, the change's notice held back: the CLI's limits apply to the very next payout", async () => {
    merchant = await home.runJson("accounts", "create", "--name", "limits at once")
    const orderId = await charge("10.00")
    // The server now serves the account from its cache (entries are kept once its listener is up).
    await new Promise((r) => setTimeout(r, 500))
    for (let i = 0; i < 2; i++) expect((await get(on(0), `/v1/orders/${orderId}`)).status).toBe(200)
    // The notice of a change reaches servers milliseconds after its commit; stand for a request
    // decided within those milliseconds by not sending it at all (the triggers that send it, off:
    // an account's update rewrites its keys' rows too).
    const triggers = async (on: "ENABLE" | "DISABLE") => {
      await database().query(`ALTER TABLE accounts ${on} TRIGGER tender_account_changed`)
      await database().query(`ALTER TABLE account_secret_keys ${on} TRIGGER tender_account_key_changed`)
    }
    await triggers("DISABLE")
    try {
      await home.runJson("accounts", "payouts", merchant.account_id, "--currency", "USD", "--max-per-payout", "2.00", "--max-per-day", "5.00")
      // Within the balance (10.00), above the limit just set.
      namesAmount(await post(on(0), "/v1/payouts", { order_id: orderId, amount: "2.01" }))
      expect((await post(on(0), "/v1/payouts", { order_id: orderId, amount: "2.00" })).status).toBe(201)
    } finally {
      await triggers("ENABLE")
    }
  }, 120_000)
})
