/**
 * The operator CLI as an operator runs it: `tender` child processes on Node 22, against one
 * temporary data dir. `serve` starts first and owns the embedded PostgreSQL; every other command
 * joins that instance (contract.md, Operator set-up), so the CLI and the running server share one
 * database, and a key rolled by the CLI is refused by the server at once.
 */
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { createTenderClient } from "@tender/client"
import { send } from "@tender/client/Testing"
import { EmbeddedPostgres } from "@tender/adapters"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHome, type Served } from "./support/Tender.ts"

const home = makeHome("tender-cli-")
const tender = home.run
const tenderJson = home.runJson
const tenderJsonError = home.runJsonError
const databaseRunning = home.databaseRunning

let served: Served
let baseUrl = ""

/**
 * A merchant's webhook receiver on loopback: `/ok` answers 200 and anything else 500, so one event
 * makes a delivery that succeeds and one that fails. Counts the requests to each.
 */
const hits = { ok: 0, failing: 0 }
let receiver: Server | undefined
let receiverUrl = ""

beforeAll(async () => {
  receiver = createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      const ok = request.url === "/ok"
      hits[ok ? "ok" : "failing"]++
      response.writeHead(ok ? 200 : 500).end()
    })
  })
  await new Promise<void>((resolve) => receiver!.listen(0, "127.0.0.1", resolve))
  const address = receiver.address()
  receiverUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
  served = await home.serve()
  baseUrl = served.url
}, 120_000)

afterAll(async () => {
  if (served !== undefined) await served.stop()
  await home.cleanup()
  if (receiver !== undefined) await new Promise((resolve) => receiver!.close(resolve))
}, 120_000)

/** A signed GET as a merchant's server sends it (raw: a revoked key's 401 is unsigned, `unsigned` says so). */
const merchantGet = (secretKey: string, signingSecret: string, path: string, unsigned = false) =>
  send({ baseUrl }, { secret_key: secretKey, signing_secret: signingSecret }, "GET", path, { unsigned })

/** The typed client of an account `tender accounts create` printed: signs requests, verifies answers. */
const merchant = (creds: { secret_key: string; signing_secret: string }) =>
  createTenderClient({ baseUrl, secretKey: creds.secret_key, signingSecret: creds.signing_secret })

/** Polls `probe` until it returns a value (the dispatcher works in the background). */
const until = async <A>(probe: () => Promise<A | undefined>, timeoutMs = 45_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error("timed out waiting for the dispatcher")
    await new Promise((r) => setTimeout(r, 300))
  }
}

const cardToken = async (creds: { secret_key: string; signing_secret: string }) =>
  (await merchant(creds).testHelpers.createCardToken({ number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).token

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

  it("with DATABASE_URL and no TENDER_VAULT_KEY: says so in one line and exits 1 (contract.md: \"vault key missing\"), though the database answers", async () => {
    // The running server's database, as an external one: reachable, so the refusal is the key's.
    const info = JSON.parse(readFileSync(`${home.dataDir}/pg.json`, "utf8")) as { port: number; password: string }
    const url = `postgres://${EmbeddedPostgres.USER}:${info.password}@${EmbeddedPostgres.HOST}:${info.port}/${EmbeddedPostgres.DATABASE}`
    const migrating = home.start(["migrate"], { DATABASE_URL: url })
    const code = await new Promise<number | null>((resolve) =>
      migrating.process.exitCode !== null ? resolve(migrating.process.exitCode) : migrating.process.once("exit", resolve))
    const lines = migrating.log().trim().split("\n")
    expect({ code, lines }).toEqual({ code: 1, lines: [expect.stringContaining("TENDER_VAULT_KEY is required with DATABASE_URL")] })
    expect(lines[0]).not.toContain(info.password)
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

  it("three-ds sets the browser SDK's 3-D Secure display mode (default inline); an unknown mode is refused", async () => {
    expect(await tenderJson("accounts", "get", acme.account_id)).toMatchObject({ three_ds_display_mode: "inline" })
    expect(await tenderJson("accounts", "three-ds", acme.account_id, "--display-mode", "popup"))
      .toMatchObject({ id: acme.account_id, three_ds_display_mode: "popup" })
    const shown = await tender("accounts", "get", acme.account_id)
    expect(shown.stdout).toMatch(/3-D Secure display\s+popup/)
    const refused = await tender("accounts", "three-ds", acme.account_id, "--display-mode", "modal")
    expect(refused.code).not.toBe(0)
    expect(await tenderJson("accounts", "three-ds", acme.account_id, "--display-mode", "inline"))
      .toMatchObject({ three_ds_display_mode: "inline" })
  })

  it("keys roll prints a new key; the server refuses the old one at once", async () => {
    const path = "/v1/payment-methods?country=US&currency=USD"
    expect((await merchantGet(acme.secret_key, acme.signing_secret, path)).status).toBe(200)
    const rolled = await tenderJson("accounts", "keys", "roll", acme.account_id)
    expect(rolled).toEqual({ account_id: acme.account_id, secret_key: expect.stringMatching(/^sk_test_/) })
    expect(rolled.secret_key).not.toBe(acme.secret_key)
    const old = await merchantGet(acme.secret_key, acme.signing_secret, path, true)
    expect(old.status).toBe(401)
    expect(old.json).toMatchObject({ code: "invalid_api_key" })
    expect((await merchantGet(rolled.secret_key, acme.signing_secret, path)).status).toBe(200)
  })

  it("signing-secret roll prints a new secret once; the old one verifies during the overlap, not after --overlap 0", async () => {
    const shop = await tenderJson("accounts", "create", "--name", "Rotating shop")
    const path = "/v1/payment-methods?country=US&currency=USD"
    const rolled = await tenderJson("accounts", "signing-secret", "roll", shop.account_id, "--overlap", "1h")
    expect(rolled).toEqual({
      account_id: shop.account_id,
      signing_secret: expect.stringMatching(/^whsec_[0-9a-f]{64}$/),
      previous_secret_expires_at: expect.stringMatching(/^\d{4}-/)
    })
    expect(Date.parse(rolled.previous_secret_expires_at) - Date.now()).toBeGreaterThan(3_500_000)
    // `merchantGet` checks the answer verifies under the secret it signed with: both do during the overlap.
    expect((await merchantGet(shop.secret_key, shop.signing_secret, path)).status).toBe(200)
    expect((await merchantGet(shop.secret_key, rolled.signing_secret, path)).status).toBe(200)
    const shown = await tender("accounts", "get", shop.account_id)
    expect(shown.stdout).toContain(`verifies until ${rolled.previous_secret_expires_at}`)
    for (const secret of [shop.signing_secret, rolled.signing_secret]) expect(shown.stdout).not.toContain(secret)

    const text = await tender("accounts", "signing-secret", "roll", shop.account_id, "--overlap", "0")
    expect(text.code).toBe(0)
    const latest = /New signing secret: (whsec_[0-9a-f]{64})/.exec(text.stdout)?.[1]
    expect(latest).toBeDefined()
    expect(text.stdout).toContain("the previous one is revoked")
    const refused = await send({ baseUrl }, { secret_key: shop.secret_key, signing_secret: rolled.signing_secret }, "GET", path)
      .catch((error: Error) => error.message)
    expect(refused).toMatch(/HTTP 401/)
    expect((await merchantGet(shop.secret_key, latest!, path)).status).toBe(200)
    expect(await tenderJsonError("accounts", "signing-secret", "roll", shop.account_id, "--overlap", "45d"))
      .toMatchObject({ code: "validation_failed" })
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
  it("get, capture (partial, then the rest) and void an authorization of any account, by order id", async () => {
    const shop = await tenderJson("accounts", "create", "--name", "Payments shop")
    const token = await cardToken(shop)
    const authorize = (reference: string) =>
      merchant(shop).payments.create({
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
    // Eleven CLI processes at ~3 s of start-up each: 31–51 s in CI runs, and 60 s was hit on a loaded runner.
  }, 120_000)
})

/** The webhooks scenario's merchant and its failing deliveries, for the worker's tests after the server stops. */
let hookShop: { account_id: string; secret_key: string; signing_secret: string }
let failing: Array<string> = []

describe("tender webhooks", () => {
  type Delivery = { id: string; endpoint_id: string; status: string; attempt_count: number; next_attempt_at: string | null }
  const endpoints = { ok: "", failing: "" }
  const orders: Array<string> = []
  let succeeded = ""

  const deliveries = async (...filters: ReadonlyArray<string>): Promise<Array<Delivery>> =>
    (await tenderJson("webhooks", "deliveries", "list", "--account", hookShop.account_id, ...filters)).data
  const failedNow = async () => new Map((await deliveries("--status", "failed")).map((d) => [d.id, d]))

  // Two endpoints, each subscribed to payment.succeeded; two payments, so two deliveries each.
  beforeAll(async () => {
    hookShop = await tenderJson("accounts", "create", "--name", "Webhooks shop")
    for (const path of ["ok", "failing"] as const) {
      const endpoint = await merchant(hookShop).webhookEndpoints.create({ url: `${receiverUrl}/${path}`, enabled_events: ["payment.succeeded"] })
      expect(endpoint).toMatchObject({ id: expect.stringMatching(/^we_/), status: "enabled" })
      endpoints[path] = endpoint.id
    }
    const token = await cardToken(hookShop)
    for (const reference of ["hooks-1", "hooks-2"]) {
      const payment = await merchant(hookShop).payments.create({
        amount: "10.00",
        currency: "USD",
        country: "US",
        merchant_reference: reference,
        payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } }
      })
      expect(payment.status).toBe("completed")
      orders.push(payment.order_id)
    }
  }, 60_000)

  it("events list shows the payments' events; events get gives the envelope and its deliveries", async () => {
    const listed = await tenderJson("events", "list", "--account", hookShop.account_id, "--type", "payment.succeeded")
    expect(listed).toMatchObject({ has_more: false, next_cursor: null })
    expect(listed.data.map((e: any) => e.data.order_id).sort()).toEqual([...orders].sort())
    const [event] = listed.data
    expect(event).toMatchObject({ id: expect.stringMatching(/^evt_/), type: "payment.succeeded", account_id: hookShop.account_id, livemode: false })

    const shown = await tenderJson("events", "get", event.id)
    expect(shown.event).toEqual(event)
    expect(shown.deliveries.map((d: Delivery) => d.endpoint_id).sort()).toEqual([endpoints.ok, endpoints.failing].sort())
    const text = await tender("events", "get", event.id)
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^type\s+payment\.succeeded$/m)
    expect(text.stdout).toContain(`"order_id": "${event.data.order_id}"`)
    expect(text.stdout).toMatch(/^ID\s+EVENT TYPE\s+ENDPOINT\s+STATUS\s+ATTEMPTS\s+NEXT ATTEMPT\s+CREATED$/m)

    expect(await tenderJsonError("events", "get", "evt_doesnotexist0000")).toMatchObject({ code: "not_found" })
    expect(await tenderJsonError("events", "list", "--account", "acct_doesnotexist0000")).toMatchObject({ code: "account_not_found" })
  }, 60_000)

  it("deliveries list --status failed shows the failing endpoint's deliveries once the dispatcher tried them", async () => {
    // Wait out the automatic retry after 5 s as well: the next one is 5 minutes away, so from here
    // on every attempt is one this test asked for.
    const failed = await until(async () => {
      const now = [...(await failedNow()).values()]
      return now.length === 2 && now.every((d) => d.attempt_count === 2) ? now : undefined
    })
    for (const d of failed) {
      expect(d).toMatchObject({ endpoint_id: endpoints.failing, status: "failed", next_attempt_at: expect.any(String) })
    }
    failing = failed.map((d) => d.id)
    const ok = await deliveries("--status", "succeeded")
    expect(ok.map((d) => d.endpoint_id)).toEqual([endpoints.ok, endpoints.ok])
    succeeded = ok[0].id

    const first = await tenderJson("webhooks", "deliveries", "list", "--account", hookShop.account_id, "--limit", "3")
    expect(first).toMatchObject({ has_more: true, next_cursor: expect.any(String) })
    const rest = await tenderJson("webhooks", "deliveries", "list", "--account", hookShop.account_id, "--limit", "3", "--cursor", first.next_cursor)
    expect(rest).toMatchObject({ has_more: false, next_cursor: null })
    expect([...first.data, ...rest.data].map((d: Delivery) => d.id).sort()).toEqual([...failing, ...ok.map((d) => d.id)].sort())

    const text = await tender("webhooks", "deliveries", "list", "--account", hookShop.account_id, "--status", "failed")
    expect(text.code).toBe(0)
    const [header, ...rows] = text.stdout.trim().split("\n")
    expect(header).toMatch(/^ID\s+EVENT TYPE\s+ENDPOINT\s+STATUS\s+ATTEMPTS\s+NEXT ATTEMPT\s+CREATED$/)
    expect(rows.map((row) => row.split(/\s+/).slice(0, 5))).toEqual(
      failing.map((id) => [id, "payment.succeeded", endpoints.failing, "failed", "2"])
    )
    expect(await tenderJsonError("webhooks", "deliveries", "list", "--status", "lost")).toMatchObject({ code: "validation_failed", errors: [{ field: "status" }] })
    expect(await tenderJsonError("webhooks", "deliveries", "list", "--since", "yesterday")).toMatchObject({ code: "validation_failed", errors: [{ field: "since" }] })
  }, 90_000)

  it("deliveries retry ID retries a failed delivery, which the dispatcher attempts at once", async () => {
    const [target] = failing
    expect(await tenderJson("webhooks", "deliveries", "retry", target)).toEqual({ retried: [target], not_retryable: [], not_found: [], in_flight: [] })
    await until(async () => ((await failedNow()).get(target)?.attempt_count === 3 ? true : undefined))
  }, 60_000)

  it("retry of a succeeded delivery reports it not retryable and exits non-zero; so does an unknown id", async () => {
    const run = await tender("webhooks", "deliveries", "retry", succeeded, "--json")
    expect(run.code).not.toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({ retried: [], not_retryable: [succeeded], not_found: [], in_flight: [] })
    expect(JSON.parse(run.stderr)).toMatchObject({ code: "webhook_delivery_not_retryable" })

    const text = await tender("webhooks", "deliveries", "retry", succeeded, "wd_doesnotexist0000")
    expect(text.code).not.toBe(0)
    expect(text.stdout.split("\n")[0]).toBe("retried 0, not retryable 1, not found 1")
    expect(text.stderr.trim()).toBe(
      `error: 2 of 2 deliveries could not be retried: ${succeeded} (not retryable), wd_doesnotexist0000 (not found)`
    )
  }, 60_000)

  it("retry takes ids or --all-failed, and --since only with --all-failed", async () => {
    expect(await tenderJsonError("webhooks", "deliveries", "retry")).toMatchObject({ code: "validation_failed", errors: [{ field: "id" }] })
    expect(await tenderJsonError("webhooks", "deliveries", "retry", failing[0], "--all-failed"))
      .toMatchObject({ code: "validation_failed", errors: [{ field: "all-failed" }] })
    expect(await tenderJsonError("webhooks", "deliveries", "retry", failing[0], "--since", "2020-01-01T00:00:00Z"))
      .toMatchObject({ code: "validation_failed", errors: [{ field: "since" }] })
  }, 60_000)

  it("retry --all-failed retries every failed delivery of the account, within --since", async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString()
    const none = await tender("webhooks", "deliveries", "retry", "--all-failed", "--account", hookShop.account_id, "--since", future)
    expect(none).toMatchObject({ code: 0, stdout: "retried 0, not retryable 0, not found 0\n", stderr: "" })

    const before = await failedNow()
    const all = await tenderJson("webhooks", "deliveries", "retry", "--all-failed", "--account", hookShop.account_id)
    expect(all.retried.sort()).toEqual([...failing].sort())
    expect(all).toMatchObject({ not_retryable: [], not_found: [], in_flight: [] })
    // Attempted again at once, each one (and only once).
    await until(async () => {
      const after = await failedNow()
      return failing.every((id) => after.get(id)?.attempt_count === before.get(id)!.attempt_count + 1) ? true : undefined
    })
  }, 90_000)
})

describe("tender worker", () => {
  it("joins the running server's database, runs until SIGTERM, then exits cleanly", async () => {
    const worker = home.start(["worker"])
    // The signal must reach the program, not a process still loading its modules (on a loaded machine
    // that takes seconds): wait until it catches SIGTERM, then long enough to have joined the database
    // and started both loops; a failure would end it.
    await catchesSigterm(worker.process.pid!)
    await new Promise((r) => setTimeout(r, 5_000))
    expect(worker.process.exitCode, worker.log()).toBeNull()
    // Interrupted by the signal: the exit code of an interrupted Effect program, nothing logged.
    expect(await worker.stop()).toEqual({ code: 130, signal: null })
    expect(worker.log()).toBe("")
    // The database belongs to the server, which the worker leaves running.
    expect(await databaseRunning()).toBe(true)
  }, 60_000)
})

/** Waits (up to 60 s) until the process has a SIGTERM handler: Linux's /proc/<pid>/status SigCgt mask, bit 15. */
const catchesSigterm = async (pid: number) => {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const mask = BigInt(`0x${/^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1] ?? "0"}`)
    if ((mask & (1n << 14n)) !== 0n) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`process ${pid} never installed a SIGTERM handler`)
}

describe("tender sessions", () => {
  it("get, list and cancel a checkout session of any account; a final one cannot be canceled", async () => {
    const shop = await tenderJson("accounts", "create", "--name", "Sessions shop")
    const created = await merchant(shop).checkoutSessions.create({
      amount: "12.00", currency: "USD", merchant_reference: "cli-session", success_url: "https://s.example/ok", cancel_url: "https://s.example/no"
    })
    expect(await tenderJson("sessions", "get", created.id)).toMatchObject({ id: created.id, status: "open", merchant_reference: "cli-session" })
    const listed = await tenderJson("sessions", "list", "--account", shop.account_id)
    expect(listed.data.map((s: { id: string }) => s.id)).toEqual([created.id])
    expect(await tenderJson("sessions", "cancel", created.id)).toMatchObject({ status: "canceled" })
    expect(await tenderJsonError("sessions", "cancel", created.id)).toMatchObject({ code: "invalid_session_state" })
    expect((await tender("sessions", "get", created.id)).stdout).toMatch(/status\s+canceled/)
    expect(await tenderJsonError("sessions", "get", "cs_doesnotexist00000000")).toMatchObject({ code: "checkout_session_not_found" })
  }, 120_000)
})

describe("tender transfers", () => {
  it("get shows a transfer of any account, as a table or one JSON document (contract.md, Operator set-up)", async () => {
    const shop = await tenderJson("accounts", "create", "--name", "Transfers shop")
    const created = await merchant(shop).transfers.create({
      amount: "30.00",
      currency: "EUR",
      country: "DE",
      merchant_reference: "cli-transfer",
      payment_method: { code: "bank_transfer", details: { iban: "DE89370400440532013000", holder_name: "Ada Lovelace" } }
    })
    expect(created).toMatchObject({ id: expect.stringMatching(/^tr_/), status: "succeeded" })
    expect(await tenderJson("transfers", "get", created.id)).toEqual(created)
    const text = await tender("transfers", "get", created.id)
    expect(text.stdout).toMatch(/status\s+succeeded/)
    expect(text.stdout).toMatch(/destination\s+bank_transfer \(bank_account, DE\)/)
    expect(await tenderJsonError("transfers", "get", "tr_doesnotexist00000000")).toMatchObject({ code: "transfer_not_found" })
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

  it("worker alone starts the embedded database, delivers what is due, and stops it on SIGTERM", async () => {
    // Retried with no server running: due now, and the worker is the only one to attempt it.
    const [target] = failing
    expect(await tenderJson("webhooks", "deliveries", "retry", target)).toEqual({ retried: [target], not_retryable: [], not_found: [], in_flight: [] })
    const before = hits.failing
    const worker = home.start(["worker"])
    await until(async () => (hits.failing > before ? true : undefined), 90_000)
    // Recorded as well (the CLI joins the worker's database): failed again, one attempt more.
    await until(async () => {
      const listed = await tenderJson("webhooks", "deliveries", "list", "--account", hookShop.account_id, "--status", "failed")
      return listed.data.some((d: { id: string }) => d.id === target) ? true : undefined
    })
    expect(await worker.stop()).toEqual({ code: 130, signal: null })
    expect(await databaseRunning()).toBe(false)
  }, 180_000)
})
