/**
 * Operations endpoints (issue 13, item 5) over real HTTP on embedded PostgreSQL and memory storage:
 * /healthz, /readyz (database, migrations current; 503 with a reason otherwise), /metrics (route
 * templates, not paths; payments by outcome; backlogs from the database; the optional bearer token),
 * and the probes' exemption from the per-IP limit of keyless routes.
 */
import { execFileSync, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import type { HealthOutcome } from "@tender/domain/channels/RoutingModel"
import { ChannelHealth } from "@tender/domain/channels/RoutingPorts"
import { observeRoutingDecision } from "@tender/domain/kernel/OperationalMetrics"
import { SqlClient } from "effect/sql"
import { type Credentials, send } from "@tender/client/Testing"
import { freePort, startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { type TenderPromiseClient, typedClient } from "./support/Typed.ts"

const CARD = "4242424242424242"

/** One sample's value from an exposition text (undefined when absent). */
const sample = (text: string, name: string, labels: Record<string, string> = {}): number | undefined => {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    const has = Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))
    if (has) return Number(line.slice(line.lastIndexOf(" ") + 1))
  }
  return undefined
}

/**
 * How much a counter grew since `before`: the metric registry is the process's, and the test files
 * share their worker's process (vitest.config.ts: no isolation), so totals include other files'.
 */
const grew = (before: string, after: string, name: string, labels: Record<string, string> = {}) =>
  (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0)

const scrape = async (server: TestServer, headers: Record<string, string> = {}) => {
  const response = await fetch(`${server.baseUrl}/metrics`, { headers })
  return { status: response.status, type: response.headers.get("content-type"), text: await response.text() }
}

describe("on PostgreSQL", () => {
  let server: TestServer
  let merchant: Credentials & { account_id: string }
  let tender: TenderPromiseClient

  beforeAll(async () => {
    server = await startTestServer(
      { rateLimit: { perSecond: 10_000, burst: 10_000 } },
      undefined,
      await fileStorage()
    )
    merchant = await Effect.runPromise(server.accounts.create({ name: "operations", mode: "test" }))
    tender = typedClient(server, merchant)
  })
  afterAll(async () => {
    await server?.close()
  })

  it("/healthz answers 200 without a key", async () => {
    const response = await fetch(`${server.baseUrl}/healthz`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ status: "ok" })
  })

  it("/readyz is 200 with the database reachable and every migration applied", async () => {
    const response = await fetch(`${server.baseUrl}/readyz`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      status: "ready",
      checks: [{ name: "database", ok: true }, { name: "migrations", ok: true }]
    })
  })

  it("/readyz is 503 with the reason while a migration is missing", async () => {
    const sql = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
      server.run(Effect.gen(function*() {
        return yield* f(yield* SqlClient.SqlClient)
      }) as Effect.Effect<A, unknown, never>)
    const [removed] = await sql((s) => s<{ name: string; applied_at: Date }>`DELETE FROM tender_migrations WHERE name = (SELECT max(name) FROM tender_migrations) RETURNING name, applied_at`)
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_100)) // past the readiness cache
      const response = await fetch(`${server.baseUrl}/readyz`)
      expect(response.status).toBe(503)
      const body = await response.json() as { status: string; reason: string }
      expect(body.status).toBe("not_ready")
      expect(body.reason).toBe(`migrations: 1 migration(s) not applied: ${removed.name} (run tender migrate)`)
    } finally {
      await sql((s) => s`INSERT INTO tender_migrations (name, applied_at) VALUES (${removed.name}, ${removed.applied_at})`)
    }
  })

  it("/metrics: requests by route template and status, payments by outcome, backlogs, process basics; no ids or card data", async () => {
    const before = (await scrape(server)).text
    const token = (await tender.testHelpers.createCardToken({ number: CARD, exp_month: 12, exp_year: 2035, cvc: "123", holder_name: "Ada" })).token
    const payment = await tender.payments.create({
      amount: "25.00",
      currency: "USD",
      country: "US",
      merchant_reference: `ops-${Date.now()}`,
      payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
    })
    await tender.orders.get({ params: { id: payment.order_id } })
    const missing = await send(server, merchant, "GET", "/v1/orders/ord_doesnotexist")
    expect(missing.status).toBe(404)
    const refused = await send(server, merchant, "POST", "/v1/payments", {
      body: JSON.stringify({ amount: "1.00", currency: "USD", country: "US", merchant_reference: `ops-x-${Date.now()}`, payment_method: { code: "sofort" } })
    })
    expect(refused.status).toBe(400)

    const { status, type, text } = await scrape(server)
    expect(status).toBe(200)
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(text).toContain("# TYPE tender_http_requests_total counter")
    expect(grew(before, text, "tender_http_requests_total", { method: "GET", route: "/v1/orders/:id", status: "200" })).toBe(1)
    expect(grew(before, text, "tender_http_requests_total", { method: "GET", route: "/v1/orders/:id", status: "404" })).toBe(1)
    expect(grew(before, text, "tender_http_request_duration_seconds_bucket", { route: "/v1/orders/:id", le: "+Inf" })).toBe(2)
    expect(grew(before, text, "tender_http_request_duration_seconds_count", { method: "POST", route: "/v1/payments" })).toBe(2)
    expect(grew(before, text, "tender_payments_total", { operation: "create", status: payment.status, method: "card" })).toBe(1)
    expect(grew(before, text, "tender_payments_total", { operation: "create", status: "unknown_payment_method", method: "other" })).toBe(1)
    // From the database (memory storage has none): present, and zero on an idle one.
    expect(sample(text, "tender_webhook_backlog")).toBeGreaterThanOrEqual(0)
    expect(sample(text, "tender_webhook_oldest_unattempted_seconds")).toBeGreaterThanOrEqual(0)
    expect(sample(text, "tender_reconciliation_backlog")).toBe(0)
    expect(sample(text, "tender_db_connections")).toBeGreaterThan(0)
    expect(sample(text, "tender_processes")).toBe(1)
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0)
    expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0)
    // Labels are templates: no order id, reference, token or card number anywhere.
    for (const secret of [payment.order_id, "ord_doesnotexist", token, CARD, "4242"]) expect(text).not.toContain(secret)
  })

  it("webhook lag: a delivery's first attempt is observed, commit to attempt", async () => {
    const receiver = await import("node:http").then(({ createServer }) => {
      const srv = createServer((_, res) => res.end("ok"))
      return new Promise<{ url: string; close: () => void }>((resolve) =>
        srv.listen(0, "127.0.0.1", () => {
          const address = srv.address() as { port: number }
          resolve({ url: `http://127.0.0.1:${address.port}/hook`, close: () => srv.close() })
        }))
    })
    try {
      const before = (await scrape(server)).text
      const endpoint = await send(server, merchant, "POST", "/v1/webhook_endpoints", { body: JSON.stringify({ url: receiver.url }) })
      expect(endpoint.status).toBe(201)
      const token = (await tender.testHelpers.createCardToken({ number: CARD, exp_month: 12, exp_year: 2035, cvc: "123", holder_name: "Ada" })).token
      await tender.payments.create({
        amount: "5.00", currency: "USD", country: "US", merchant_reference: `lag-${Date.now()}`,
        payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
      })
      await expect.poll(async () => grew(before, (await scrape(server)).text, "tender_webhook_first_attempt_lag_seconds_count"), { timeout: 10_000 })
        .toBeGreaterThan(0)
    } finally {
      receiver.close()
    }
  })
})

describe("on memory storage", () => {
  let server: TestServer
  let guarded: TestServer
  let limited: TestServer
  beforeAll(async () => {
    server = await startTestServer()
    guarded = await startTestServer({ metricsToken: "scrape-secret-1" })
    limited = await startTestServer({ ipLimits: { perIp: { perSecond: 0.001, burst: 1 } } })
  })
  afterAll(async () => {
    await server?.close()
    await guarded?.close()
    await limited?.close()
  })

  it("probes spend from no per-IP bucket (load balancers poll), while other keyless routes do", async () => {
    for (let i = 0; i < 5; i++) {
      expect((await fetch(`${limited.baseUrl}/healthz`)).status).toBe(200)
    }
    const docs = [await fetch(`${limited.baseUrl}/docs`), await fetch(`${limited.baseUrl}/docs`)]
    expect(docs.map((r) => r.status)).toContain(429)
  })


  it("/readyz is 200 (nothing to reach) and /metrics has no database figures", async () => {
    const ready = await fetch(`${server.baseUrl}/readyz`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({ status: "ready", checks: [{ name: "database", ok: true }] })
    const { status, text } = await scrape(server)
    expect(status).toBe(200)
    expect(text).not.toContain("tender_webhook_backlog")
    expect(sample(text, "tender_http_requests_total", { route: "/readyz", status: "200" })).toBeGreaterThanOrEqual(1)
  })

  it("/metrics: a channel's breaker is 1 while open or half open and 0 once closed with failures; routing decisions by reason", async () => {
    const channel = `ch_metrics${Date.now().toString(36)}`
    const observe = (outcome: HealthOutcome, at: number) =>
      server.run(Effect.flatMap(ChannelHealth, (health) => health.observe({ channel_id: channel, segment: { method: "card", currency: "EUR", brand: "visa" }, outcome, at })))
    const before = (await scrape(server)).text
    expect(sample(before, "tender_channel_breaker_open", { channel })).toBeUndefined()
    const t0 = Date.now()
    for (let i = 0; i < 5; i++) await observe("unavailable", t0 + i)
    await server.run(Effect.all([observeRoutingDecision("breaker"), observeRoutingDecision("breaker"), observeRoutingDecision("exploration")]))
    const open = (await scrape(server)).text
    expect(open).toContain("# TYPE tender_channel_breaker_open gauge")
    expect(sample(open, "tender_channel_breaker_open", { channel })).toBe(1)
    expect(grew(before, open, "tender_routing_decisions_total", { reason: "breaker" })).toBe(2)
    expect(grew(before, open, "tender_routing_decisions_total", { reason: "exploration" })).toBe(1)
    // A probe's answer closes it (gone: a breaker back where it started); a failure since is a closed one's count.
    await observe("approved", t0 + 10)
    await observe("unavailable", t0 + 11)
    expect(sample((await scrape(server)).text, "tender_channel_breaker_open", { channel })).toBe(0)
  })

  it("with TENDER_METRICS_TOKEN set, a scrape needs it as a bearer token", async () => {
    expect((await scrape(guarded)).status).toBe(401)
    expect((await scrape(guarded, { authorization: "Bearer wrong-secret-1" })).status).toBe(401)
    const ok = await scrape(guarded, { authorization: "Bearer scrape-secret-1" })
    expect(ok.status).toBe(200)
    expect(ok.text).toContain("tender_http_requests_total")
  })
})

/** A Redis of the test's own (it is stopped mid-test), when the machine has redis-server. */
const redisServer = (() => {
  try {
    return execFileSync("which", ["redis-server"], { encoding: "utf8" }).trim() || undefined
  } catch {
    return undefined
  }
})()

describe.skipIf(redisServer === undefined)("with Redis (REDIS_URL set)", () => {
  it("/readyz checks Redis: ready while it answers, 503 naming it once it stops", async () => {
    const port = await freePort()
    const redis = spawn(redisServer!, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" })
    let server: TestServer | undefined
    try {
      await expect.poll(async () => {
        try {
          return await fetch(`http://127.0.0.1:${port}`).then(() => true, (e) => String(e.cause?.code) !== "ECONNREFUSED")
        } catch {
          return false
        }
      }, { timeout: 10_000 }).toBe(true)
      server = await startTestServer({}, undefined, { storage: "memory", dataDir: ".tender-test", redisUrl: `redis://127.0.0.1:${port}` })
      const ready = await fetch(`${server.baseUrl}/readyz`)
      expect(await ready.json()).toEqual({ status: "ready", checks: [{ name: "database", ok: true }, { name: "redis", ok: true }] })
      redis.kill("SIGKILL")
      await new Promise((resolve) => setTimeout(resolve, 1_100)) // past the readiness cache
      const down = await fetch(`${server.baseUrl}/readyz`)
      expect(down.status).toBe(503)
      expect((await down.json() as { reason: string }).reason).toMatch(/^redis: /)
    } finally {
      redis.kill("SIGKILL")
      await server?.close()
    }
  })
})
