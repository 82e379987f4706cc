/**
 * The server's account cache (AccountCachePg, issue 13) against the operator's CLI, each its own
 * process over one PostgreSQL: a known key is answered without reading its account, and every change
 * the CLI makes — keys roll, suspend/activate, allowlist, signing-secret roll, rate limit — is in
 * force on the running server within a second (LISTEN/NOTIFY carries it in milliseconds).
 */
import type pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { requestHeaders } from "@tender/client/Raw"
import { makeHome, type Served, untilAnswered } from "./support/Tender.ts"

const home = makeHome("tender-account-cache-")
let server: Served
let db: pg.Pool
let account: { account_id: string; secret_key: string; signing_secret: string }

/** How soon a change must be in force on the server. */
const PROMPTLY_MS = 1_000

/** Signed as the merchant signs; the answer is not checked (a refused key's answer is unsigned). */
const request = async (method: "GET" | "POST", path: string, body?: unknown) => {
  const text = body === undefined ? "" : JSON.stringify(body)
  const reply = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...requestHeaders({ secretKey: account.secret_key, signingSecret: account.signing_secret }, path, text),
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: text })
  })
  return { status: reply.status, json: await reply.json() as { code?: string } }
}

/** A signed read (answers 404 when the key is good: no such order). */
const read = () => request("GET", "/v1/orders/ord_doesnotexist0000")
let seq = 0
/** A signed write, a new one each time (the same signed write twice is a replay). */
const write = () =>
  request("POST", "/v1/payments", {
    amount: "12.00",
    currency: "USD",
    country: "US",
    merchant_reference: `cache-${++seq}`,
    payment_method: { code: "paypal" },
    success_url: "https://shop.example/ok",
    cancel_url: "https://shop.example/cancel"
  })

/**
 * Reads until the account is cached: the first lookup starts the server's listener, and lookups
 * fill the cache once it listens (a fraction of a second).
 */
const warm = async () => {
  for (let i = 0; i < 5; i++) {
    expect((await read()).status).toBe(404)
    await new Promise((r) => setTimeout(r, 100))
  }
}

beforeAll(async () => {
  server = await home.serve({ TENDER_RATE_LIMIT_PER_SECOND: "100000", TENDER_RATE_LIMIT_BURST: "100000" })
  account = await home.runJson("accounts", "create", "--name", "cached")
  db = home.database()
}, 240_000)

afterAll(async () => {
  await db?.end()
  await server?.stop()
  await home.cleanup()
}, 120_000)

describe("the account cache, with the CLI changing accounts from another process", () => {
  it("a known key is answered without reading its account: the accounts table locked, requests still go through", async () => {
    await warm()
    const locker = await db.connect()
    try {
      await locker.query("BEGIN")
      await locker.query("LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE")
      const started = Date.now()
      const reply = await Promise.race([
        read(),
        new Promise<"blocked">((resolve) => setTimeout(() => resolve("blocked"), 3_000))
      ])
      expect(reply === "blocked" ? reply : reply.status).toBe(404)
      expect(Date.now() - started).toBeLessThan(3_000)
    } finally {
      await locker.query("ROLLBACK")
      locker.release()
    }
  }, 60_000)

  it("keys roll: the old key is refused within a second, the new one accepted", async () => {
    await warm()
    const rolled = await home.runJson("accounts", "keys", "roll", account.account_id)
    const waited = await untilAnswered(() => read(), (r) => r.status === 401)
    expect(waited).toBeLessThan(PROMPTLY_MS)
    expect((await read()).json.code).toBe("invalid_api_key")
    account = { ...account, secret_key: rolled.secret_key }
    expect((await read()).status).toBe(404)
  }, 60_000)

  it("suspend, then activate: writes are refused, then taken, each within a second", async () => {
    await warm()
    expect((await write()).status).toBe(200)
    await home.runJson("accounts", "suspend", account.account_id)
    expect(await untilAnswered(() => write(), (r) => r.status === 409)).toBeLessThan(PROMPTLY_MS)
    expect((await write()).json.code).toBe("merchant_operation_not_allowed_status")
    await home.runJson("accounts", "activate", account.account_id)
    expect(await untilAnswered(() => write(), (r) => r.status === 200)).toBeLessThan(PROMPTLY_MS)
  }, 60_000)

  it("an allowlist without this address refuses it within a second; lifting it lets it in again", async () => {
    await warm()
    await home.runJson("accounts", "allowlist", account.account_id, "10.0.0.0/8")
    expect(await untilAnswered(() => read(), (r) => r.status === 403)).toBeLessThan(PROMPTLY_MS)
    await home.runJson("accounts", "allowlist", account.account_id, "0.0.0.0/0", "::/0")
    expect(await untilAnswered(() => read(), (r) => r.status === 404)).toBeLessThan(PROMPTLY_MS)
  }, 60_000)

  it("signing-secret roll with no overlap: the old secret's signatures are refused within a second", async () => {
    await warm()
    const rolled = await home.runJson("accounts", "signing-secret", "roll", account.account_id, "--overlap", "0")
    expect(await untilAnswered(() => read(), (r) => r.status === 401)).toBeLessThan(PROMPTLY_MS)
    expect((await read()).json.code).toBe("invalid_signature")
    account = { ...account, signing_secret: rolled.signing_secret }
    expect((await read()).status).toBe(404)
  }, 60_000)

  it("a rate limit set through the CLI is in force within a second", async () => {
    await warm()
    await home.runJson("accounts", "rate-limit", account.account_id, "--per-second", "1", "--burst", "1")
    expect(await untilAnswered(() => read(), (r) => r.status === 429)).toBeLessThan(PROMPTLY_MS)
  }, 60_000)
})
