/**
 * Webhooks with more than one thing happening at once, on PostgreSQL over real HTTP: the endpoint
 * cap under concurrent creates, a manual retry while an attempt holds the lease, a disabled
 * endpoint's deliveries paused and resumed, and one tenant's hanging endpoints not delaying
 * another's deliveries (noisy neighbour). Receivers are real loopback servers.
 */
import type { ServerResponse } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Outbox } from "@tender/domain"
import { type Credentials, send } from "@tender/client/Testing"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { fileStorage } from "@tender/adapters/test/PgTestDatabase"
import { expectError, loopbackReceiver as receiver, until } from "./support/Webhooks.ts"

const storage = await fileStorage()

let server: TestServer

const post = (path: string, body: unknown, creds: Credentials) => send(server, creds, "POST", path, { body: JSON.stringify(body) })
const get = (path: string, creds: Credentials) => send(server, creds, "GET", path)

const newAccount = (name: string) => Effect.runPromise(server.accounts.create({ name, mode: "test" }))

/** One event of the account, fanned out to its endpoints as any recorded event is. */
const record = (accountId: string) =>
  server.run(Outbox.use((outbox) =>
    outbox.record({
      account_id: accountId,
      type: "payment.succeeded",
      livemode: false,
      processing_profile: null,
      order_id: null,
      data: { order_id: `ord_${Math.random().toString(36).slice(2)}` }
    })))

/** The endpoint's (only) delivery, once its first attempt failed. */
const firstFailed = (creds: Credentials, endpointId: string) =>
  until(async () => {
    const [delivery] = (await get(`/v1/webhook_deliveries?endpoint_id=${endpointId}`, creds)).json.data
    return delivery?.status === "failed" ? delivery : undefined
  })

const detail = async (creds: Credentials, id: string) => (await get(`/v1/webhook_deliveries/${id}`, creds)).json

/**
 * A new account's endpoint on a loopback receiver answering `answer()`: its delivery's first attempt
 * fails, the endpoint is disabled and the delivery retried (due at once, but its endpoint is
 * disabled: it waits). `then` goes on from there; the receiver closes after it.
 */
const retriedWhileDisabled = async (
  name: string,
  answer: () => number,
  then: (scene: { acct: Credentials; endpoint: { id: string }; failed: { id: string }; hits: Array<number> }) => Promise<void>
) => {
  const acct = await newAccount(name)
  const hits: Array<number> = []
  const hooks = await receiver((_request, response) => {
    const status = answer()
    hits.push(status)
    response.writeHead(status).end()
  })
  try {
    const endpoint = (await post("/v1/webhook_endpoints", { url: hooks.url("/hooks") }, acct)).json
    await record(acct.account_id)
    const failed = await firstFailed(acct, endpoint.id)
    expect((await post(`/v1/webhook_endpoints/${endpoint.id}`, { status: "disabled" }, acct)).status).toBe(200)
    expect((await post(`/v1/webhook_deliveries/${failed.id}/retry`, {}, acct)).json.status).toBe("pending")
    await then({ acct, endpoint, failed, hits })
  } finally {
    await hooks.close()
  }
}

beforeAll(async () => {
  server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, storage)
}, 120_000)
afterAll(async () => {
  await server.close()
})

describe("webhook endpoints under concurrency", () => {
  it("32 creates at once: exactly 16 endpoints, the rest webhook_limit_exceeded", async () => {
    const acct = await newAccount("racing creates")
    const replies = await Promise.all(
      Array.from({ length: 32 }, (_, i) => post("/v1/webhook_endpoints", { url: `https://hooks.example/${i}` }, acct))
    )
    expect(replies.filter((r) => r.status === 201)).toHaveLength(16)
    for (const refused of replies.filter((r) => r.status !== 201)) expectError(refused, 400, "webhook_limit_exceeded")
    expect((await get("/v1/webhook_endpoints", acct)).json.data).toHaveLength(16)
  }, 60_000)
})

describe("deliveries and their lease", () => {
  it("a retry while an attempt is under way is 409 conflict; the attempt's outcome stands", async () => {
    const acct = await newAccount("retry in flight")
    let hits = 0
    const held: Array<ServerResponse> = []
    const hooks = await receiver((_request, response) => {
      if (++hits === 1) response.writeHead(503).end()
      else held.push(response) // the second attempt hangs until the test answers it
    })
    try {
      const endpoint = (await post("/v1/webhook_endpoints", { url: hooks.url("/hooks") }, acct)).json
      await record(acct.account_id)
      const failed = await firstFailed(acct, endpoint.id)
      // Its scheduled attempt (5 s on) starts and hangs: the delivery is still `failed`, and leased.
      await until(async () => (held.length > 0 ? true : undefined), 15_000)
      expectError(await post(`/v1/webhook_deliveries/${failed.id}/retry`, {}, acct), 409, "conflict")
      held[0].writeHead(200).end()
      const done = await until(async () => {
        const d = await detail(acct, failed.id)
        return d.status === "succeeded" ? d : undefined
      })
      expect(done.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 200])
      expect(hits).toBe(2)
    } finally {
      await hooks.close()
    }
  }, 60_000)

  it("disabling an endpoint pauses its deliveries (not attempted, not exhausted); enabling it delivers them", async () => {
    let answer = 503
    await retriedWhileDisabled("paused", () => answer, async ({ acct, endpoint, failed, hits }) => {
      await new Promise((r) => setTimeout(r, 1_000))
      const paused = await detail(acct, failed.id)
      expect({ status: paused.status, attempts: paused.attempts.length }).toEqual({ status: "pending", attempts: 1 })
      expect(hits).toEqual([503])

      answer = 200
      expect((await post(`/v1/webhook_endpoints/${endpoint.id}`, { status: "enabled" }, acct)).status).toBe(200)
      const done = await until(async () => {
        const d = await detail(acct, failed.id)
        return d.status === "succeeded" ? d : undefined
      })
      expect(done.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 200])
      expect(hits).toEqual([503, 200])
    })
  }, 60_000)

  it("decisions.md: deleting an endpoint ends its pending deliveries exhausted (\"endpoint deleted\"), a disabled one's too (not paused for ever)", async () => {
    await retriedWhileDisabled("disabled then deleted", () => 503, async ({ acct, endpoint, failed, hits }) => {
      expect((await send(server, acct, "DELETE", `/v1/webhook_endpoints/${endpoint.id}`)).status).toBe(200)
      const done = await until(async () => {
        const d = await detail(acct, failed.id)
        return d.status === "exhausted" ? d : undefined
      })
      expect(done.attempts.map((a: { error: string }) => a.error)).toEqual(["HTTP 503", "endpoint deleted"])
      expect(hits).toEqual([503])
    })
  }, 60_000)
})

describe("noisy neighbour", () => {
  it("tenant A's 16 endpoints never answer; tenant B's event is delivered within 2 s", async () => {
    const noisy = await newAccount("noisy")
    const quiet = await newAccount("quiet")
    let hanging = 0
    // Accepts every request and never answers: each attempt holds its slot for the full timeout.
    const sink = await receiver(() => {
      hanging++
    })
    const arrived: Array<number> = []
    const hooks = await receiver((_request, response) => {
      arrived.push(Date.now())
      response.writeHead(200).end()
    })
    try {
      for (let i = 0; i < 16; i++) {
        expect((await post("/v1/webhook_endpoints", { url: sink.url(`/a${i}`) }, noisy)).status).toBe(201)
      }
      expect((await post("/v1/webhook_endpoints", { url: hooks.url("/b") }, quiet)).status).toBe(201)
      // A backlog: 4 events × 16 endpoints, more than every dispatcher slot.
      for (let i = 0; i < 4; i++) await record(noisy.account_id)
      await until(async () => (hanging >= 8 ? true : undefined))
      await new Promise((r) => setTimeout(r, 300))

      const sent = Date.now()
      await record(quiet.account_id)
      await until(async () => (arrived.length > 0 ? true : undefined), 5_000)
      expect(arrived[0] - sent).toBeLessThan(2_000)
    } finally {
      await sink.close()
      await hooks.close()
    }
  }, 60_000)
})
