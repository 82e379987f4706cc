/**
 * `tender serve --workers 2` without Redis: two server processes on one port behind node:cluster's
 * round robin, the primary keeping what they share (ClusterBroker.ts). Requests are sent at once on
 * fresh connections, so they spread over both children; what was per process must hold across them.
 */
import { execFileSync } from "node:child_process"
import { send } from "@tender/client/Testing"
import type pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHome, type Merchant, merchantClient, type Served } from "./support/Tender.ts"

const home = makeHome("tender-workers-")
let served: Served
let merchant: Merchant
let db: pg.Pool
const { post } = merchantClient(() => merchant)

// Provider calls take 40 ms: concurrent captures of one order overlap in both children.
const SERVER_ENV = {
  TENDER_WORKERS: "2",
  TENDER_RATE_LIMIT_PER_SECOND: "100000",
  TENDER_RATE_LIMIT_BURST: "100000",
  TENDER_SANDBOX_LATENCY_MS: "40"
}

/** The node processes the primary forked (the embedded PostgreSQL detaches from whoever started it). */
const children = () =>
  execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(served.process.pid)], { encoding: "utf8" })
    .split("\n").filter((line) => line.includes("tender.js serve"))

/** A merchant-initiated card payment of 100.00 USD, authorized for a manual capture. */
const authorize = async (reference: string) => {
  const tokenized = await post(served, "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
  const paid = await post(served, "/v1/payments", {
    amount: "100.00",
    currency: "USD",
    country: "US",
    merchant_reference: reference,
    capture_method: "manual",
    payment_method: { code: "card", details: { card_token: tokenized.json.token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
  })
  expect(paid.status, JSON.stringify(paid.json)).toBe(200)
  expect(paid.json.status).toBe("authorized")
  return paid.json as { order_id: string }
}

/**
 * 40 requests at once from an account allowed 1/s with a burst of 10: the burst, plus at most a
 * token or two refilled while they are answered, get through; one bucket per worker would let about
 * twice the burst through.
 */
const expectOneBucket = async (server: Served) => {
  const limited: Merchant & { readonly account_id: string } = await home.runJson("accounts", "create", "--name", "limited")
  const set = await home.run("accounts", "rate-limit", limited.account_id, "--per-second", "1", "--burst", "10")
  expect(set.code, set.stderr).toBe(0)
  const replies = await Promise.all(
    Array.from({ length: 40 }, () => send({ baseUrl: server.url }, limited, "GET", "/v1/orders/ord_doesnotexist"))
  )
  const passed = replies.filter((r) => r.status !== 429).length
  expect(passed).toBeGreaterThanOrEqual(10)
  expect(passed).toBeLessThanOrEqual(12)
}

beforeAll(async () => {
  served = await home.serve(SERVER_ENV)
  merchant = await home.runJson("accounts", "create", "--name", "clustered")
  db = home.database()
}, 240_000)

afterAll(async () => {
  await db?.end()
  await served?.stop()
  await home.cleanup()
}, 120_000)

describe("tender serve --workers 2", () => {
  it("runs a primary and two children; a child that dies is replaced", async () => {
    expect(served.log()).toContain("2 worker processes")
    const before = children()
    expect(before).toHaveLength(2)
    process.kill(Number(before[0]!.trim().split(" ")[0]), "SIGKILL")
    const deadline = Date.now() + 60_000
    while (!(children().length === 2 && !children().includes(before[0]!))) {
      if (Date.now() > deadline) throw new Error(`no replacement child:\n${served.log()}`)
      await new Promise((r) => setTimeout(r, 250))
    }
    // The replacement serves: it joined the running PostgreSQL and listens on the shared port.
    const listening = () => served.log().split("Listening on").length - 1
    const deadline2 = Date.now() + 90_000
    while (listening() < 3) {
      if (Date.now() > deadline2) throw new Error(`the replacement did not start:\n${served.log()}`)
      await new Promise((r) => setTimeout(r, 250))
    }
    expect((await fetch(`${served.url}/v1/openapi.json`)).status).toBe(200)
  })

  it("an account's rate limit is one bucket across the workers, not one per worker", () => expectOneBucket(served))

  it("concurrent full captures of one order through both workers: exactly one succeeds, one capture recorded", async () => {
    const paid = await authorize(`captures-${Date.now()}`)
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => post(served, "/v1/payments/capture", { order_id: paid.order_id }))
    )
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1)
    for (const refused of answers.filter((a) => a.status !== 200)) expect(refused.status, JSON.stringify(refused.json)).toBeGreaterThanOrEqual(400)
    const events = await db.query("SELECT count(*)::int AS n FROM events WHERE order_id = $1 AND type = 'payment.succeeded'", [paid.order_id])
    expect(events.rows[0].n).toBe(1)
  })

  it("a signature sent to several workers at once authorises one request; the others are refused as replays", async () => {
    const paid = await authorize(`replay-${Date.now()}`)
    const body = JSON.stringify({ order_id: paid.order_id, amount: "3.00", final: false })
    const timestamp = Math.floor(Date.now() / 1000)
    const answers = await Promise.all(
      [0, 1, 2, 3].map(() => send({ baseUrl: served.url }, merchant, "POST", "/v1/payments/capture", { body, timestamp }))
    )
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409])
    const events = await db.query("SELECT count(*)::int AS n FROM events WHERE order_id = $1 AND type = 'payment.partially_captured'", [paid.order_id])
    expect(events.rows[0].n).toBe(1)
  })
})

// With REDIS_URL the children share Redis, as separate servers do, and the primary keeps nothing.
describe.skipIf(process.env.REDIS_URL === undefined)("tender serve --workers 2 with REDIS_URL", () => {
  it("an account's rate limit is one bucket across the workers", async () => {
    const withRedis = await home.serve({ ...SERVER_ENV, REDIS_URL: process.env.REDIS_URL! })
    try {
      await expectOneBucket(withRedis)
    } finally {
      await withRedis.stop()
    }
  }, 240_000)
})
