/**
 * The operator CLI as an operator runs it: `tender` child processes on Node 22, against one
 * temporary data dir. `serve` starts first and owns the embedded PostgreSQL; every other command
 * joins that instance (contract.md, Operator set-up), so the CLI and the running server share one
 * database, and a key rolled by the CLI is refused by the server at once.
 */
import { merchantHeaders } from "@tender/adapters/Signature"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHome, type Served } from "./support/Tender.ts"

const home = makeHome("tender-cli-")
const tender = home.run
const tenderJson = home.runJson
const tenderJsonError = home.runJsonError
const databaseRunning = home.databaseRunning

let served: Served
let baseUrl = ""

beforeAll(async () => {
  served = await home.serve()
  baseUrl = served.url
}, 120_000)

afterAll(async () => {
  if (served !== undefined) await served.stop()
  await home.cleanup()
}, 120_000)

/** A signed GET as a merchant's server sends it. */
const merchantGet = (secretKey: string, signingSecret: string, path: string) =>
  fetch(baseUrl + path, { headers: merchantHeaders({ secret_key: secretKey, signing_secret: signingSecret }, path) })

describe("tender serve", () => {
  it("answers on its port with the OpenAPI document", async () => {
    const response = await fetch(`${baseUrl}/v1/openapi.json`)
    expect(response.status).toBe(200)
    expect(await response.json()).toHaveProperty("openapi")
  })
})

describe("tender migrate", () => {
  it("finds the schema up to date once the server has migrated it", async () => {
    expect(await tenderJson("migrate")).toEqual({ applied: [] })
  })
})

describe("--storage memory", () => {
  it("runs a command without any database", async () => {
    expect(await tenderJson("--storage", "memory", "accounts", "list")).toEqual({ data: [] })
  })
})

describe("tender accounts", () => {
  let acme: { account_id: string; secret_key: string; signing_secret: string }

  it("create --json prints exactly the documented keys, test keys by default", async () => {
    const run = await tender("accounts", "create", "--name", "Acme", "--json")
    expect(run.stderr).toBe("")
    expect(run.stdout.trim().split("\n")).toHaveLength(1)
    const created = JSON.parse(run.stdout)
    expect(Object.keys(created)).toEqual(["account_id", "mode", "secret_key", "publishable_key", "signing_secret"])
    expect(created).toMatchObject({
      account_id: expect.stringMatching(/^acct_/),
      mode: "test",
      secret_key: expect.stringMatching(/^sk_test_/),
      publishable_key: expect.stringMatching(/^pk_test_/),
      signing_secret: expect.any(String)
    })
    acme = created
  })

  it("create --mode live issues live keys; without --json it warns the secret key is shown once", async () => {
    const run = await tender("accounts", "create", "--name", "Live shop", "--mode", "live")
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/sk_live_[0-9a-f]+/)
    expect(run.stdout).toMatch(/pk_live_[0-9a-f]+/)
    expect(run.stdout).toMatch(/shown only this once/)
  })

  it("create refuses a bad mode with a validation error", async () => {
    const error = await tenderJsonError("accounts", "create", "--name", "Nope", "--mode", "sandbox")
    expect(error).toMatchObject({ code: "validation_failed", errors: [{ field: "mode" }] })
  })

  it("suspend, then suspend again: a conflict, a one-line message and a non-zero exit", async () => {
    expect(await tenderJson("accounts", "suspend", acme.account_id)).toMatchObject({ status: "suspended" })
    const again = await tender("accounts", "suspend", acme.account_id)
    expect(again.code).not.toBe(0)
    expect(again.stdout).toBe("")
    expect(again.stderr.trim()).toBe(`error: Account ${acme.account_id} is already suspended`)
  })

  it("activate restores the account", async () => {
    const run = await tender("accounts", "activate", acme.account_id)
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^Activated acct_/)
    expect(run.stdout).toMatch(/status\s+active/)
  })

  it("allowlist replaces the list, refuses an invalid CIDR, and 0.0.0.0/0 ::/0 lifts it", async () => {
    expect(await tenderJson("accounts", "allowlist", acme.account_id, "10.0.0.0/8", "2001:db8::/32"))
      .toMatchObject({ ip_allowlist: ["10.0.0.0/8", "2001:db8::/32"] })
    const invalid = await tenderJsonError("accounts", "allowlist", acme.account_id, "10.0.0.0/8", "10.0.0.300/8")
    expect(invalid).toMatchObject({ code: "validation_failed", errors: [{ field: "cidrs[1]" }] })
    expect(await tenderJson("accounts", "allowlist", acme.account_id, "0.0.0.0/0", "::/0"))
      .toMatchObject({ ip_allowlist: [] })
  })

  it("profiles add and disable", async () => {
    expect(await tenderJson("accounts", "profiles", "add", acme.account_id, "--code", "eu", "--name", "Europe"))
      .toMatchObject({ processing_profiles: [{ code: "eu", name: "Europe", status: "active" }] })
    expect(await tenderJson("accounts", "profiles", "disable", acme.account_id, "eu"))
      .toMatchObject({ processing_profiles: [{ code: "eu", status: "disabled" }] })
  })

  it("vault enable and rate-limit", async () => {
    expect(await tenderJson("accounts", "vault", "enable", acme.account_id)).toMatchObject({ vault_enabled: true })
    expect(await tenderJson("accounts", "rate-limit", acme.account_id, "--per-second", "50", "--burst", "80"))
      .toMatchObject({ rate_limit: { per_second: 50, burst: 80 } })
  })

  it("keys roll prints a new key; the server refuses the old one at once", async () => {
    const path = "/v1/payment-methods?country=US&currency=USD"
    expect((await merchantGet(acme.secret_key, acme.signing_secret, path)).status).toBe(200)
    const rolled = await tenderJson("accounts", "keys", "roll", acme.account_id)
    expect(rolled).toEqual({ account_id: acme.account_id, secret_key: expect.stringMatching(/^sk_test_/) })
    expect(rolled.secret_key).not.toBe(acme.secret_key)
    const old = await merchantGet(acme.secret_key, acme.signing_secret, path)
    expect(old.status).toBe(401)
    expect(await old.json()).toMatchObject({ code: "invalid_api_key" })
    expect((await merchantGet(rolled.secret_key, acme.signing_secret, path)).status).toBe(200)
  })

  it("list and get show the account but never a key hash, a secret key or the signing secret", async () => {
    const listed = await tenderJson("accounts", "list")
    expect(listed.data.map((a: { id: string }) => a.id)).toContain(acme.account_id)
    const got = await tenderJson("accounts", "get", acme.account_id)
    expect(got).toMatchObject({ id: acme.account_id, status: "active", secret_keys: [{ revoked_at: expect.any(String) }, { revoked_at: null }] })
    const shown = await tender("accounts", "get", acme.account_id)
    expect(shown.code).toBe(0)
    expect(shown.stdout).toMatch(/vault\s+enabled/)
    for (const output of [JSON.stringify(listed), JSON.stringify(got), shown.stdout]) {
      expect(output).not.toContain(acme.signing_secret)
      expect(output).not.toMatch(/sk_(test|live)_[0-9a-f]{16,}/)
      expect(output).not.toMatch(/"hash"|[0-9a-f]{64}/)
    }
  })

  it("an unknown account id fails with account_not_found", async () => {
    expect(await tenderJsonError("accounts", "get", "acct_doesnotexist0000")).toMatchObject({ code: "account_not_found" })
  })
})

describe("tender payments", () => {
  const merchantPost = async (creds: { secret_key: string; signing_secret: string }, path: string, body: unknown) => {
    const text = JSON.stringify(body)
    const response = await fetch(baseUrl + path, { method: "POST", headers: merchantHeaders(creds, path, text), body: text })
    return response.json() as Promise<any>
  }

  it("get, capture (partial, then the rest) and void an authorization of any account, by order id", async () => {
    const shop = await tenderJson("accounts", "create", "--name", "Payments shop")
    const { token } = await merchantPost(shop, "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
    const authorize = (reference: string) =>
      merchantPost(shop, "/v1/payments", {
        amount: "50.00",
        currency: "USD",
        country: "US",
        merchant_reference: reference,
        capture_method: "manual",
        payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } }
      })
    const auth = await authorize("cli-capture")
    expect(auth.status).toBe("authorized")

    expect(await tenderJson("payments", "get", auth.order_id)).toMatchObject({ id: auth.order_id, status: "authorized", captured_amount: 0 })
    const part = await tenderJson("payments", "capture", auth.order_id, "--amount", "20.00", "--final", "false")
    expect(part).toMatchObject({ status: "authorized", captured_amount: 20 })
    const rest = await tenderJson("payments", "capture", auth.order_id)
    expect(rest).toMatchObject({ status: "completed", captured_amount: 50 })
    const text = await tender("payments", "get", auth.order_id)
    expect(text.stdout).toMatch(/status\s+succeeded/)

    const other = await authorize("cli-void")
    expect(await tenderJson("payments", "void", other.order_id)).toMatchObject({ status: "canceled", voided_amount: 50 })
    expect(await tenderJsonError("payments", "void", other.order_id)).toMatchObject({ code: "payment_unexpected_state" })
    expect(await tenderJsonError("payments", "capture", "ord_doesnotexist00000000")).toMatchObject({ code: "order_not_found" })
    expect(await tenderJsonError("payments", "capture", auth.order_id, "--amount", "abc")).toMatchObject({ code: "validation_failed", errors: [{ field: "amount" }] })
  }, 60_000)
})

describe("after the server stops", () => {
  it("serve exits on SIGTERM and stops the embedded database it started", async () => {
    expect((await served.stop()).signal).toBeNull()
    expect(await databaseRunning()).toBe(false)
  }, 60_000)

  it("a command alone starts the embedded database, finds the data, and stops it on exit", async () => {
    const listed = await tenderJson("accounts", "list")
    expect(listed.data.map((a: { name: string }) => a.name)).toEqual(expect.arrayContaining(["Acme", "Live shop"]))
    expect(await databaseRunning()).toBe(false)
  }, 60_000)
})
