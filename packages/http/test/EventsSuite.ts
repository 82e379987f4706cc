/**
 * The event feed over real HTTP (issue 25): GET /v1/events, a long poll from a cursor, and GET
 * /v1/events/{id}; every answer signed (`send` verifies each one), each event the envelope
 * webhooks carry.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TenderConfig } from "@tender/adapters/Config"
import { Effect } from "effect"
import * as Limits from "@tender/api/Limits"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type Credentials, type Reply, send } from "@tender/client/Testing"

export const eventsSuite = (storage: Pick<TenderConfig, "storage" | "dataDir">) => {
  let server: TestServer
  let merchant: Credentials & { account_id: string }
  let other: Credentials & { account_id: string }
  let seq = 0

  const get = (path: string, creds: Credentials = merchant) => send(server, creds, "GET", path)
  const post = (path: string, body: unknown, creds: Credentials = merchant) => send(server, creds, "POST", path, { body: JSON.stringify(body) })
  const expectError = (reply: Reply, status: number, code: string, fields: ReadonlyArray<string>) => {
    expect({ status: reply.status, code: reply.json?.code }).toEqual({ status, code })
    expect(reply.json.errors.map((e: { field: string }) => e.field).sort()).toEqual([...fields].sort())
  }

  /** A card payment of the sandbox (`4242…` succeeds, `…0002` is declined): its order id. */
  const pay = async (number: string, creds: Credentials = merchant) => {
    const token = await post("/v1/test_helpers/card_tokens", { number, exp_month: 12, exp_year: 2035, cvc: "123" }, creds)
    const paid = await post("/v1/payments", {
      amount: "10.00",
      currency: "USD",
      country: "US",
      merchant_reference: `feed-${Date.now()}-${++seq}`,
      payment_method: { code: "card", details: { card_token: token.json.token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
    }, creds)
    expect(paid.status).toBeLessThan(300)
    return paid.json.order_id as string
  }

  /**
   * The feed from `after` until `count` events came. Storage may serve a commit a while later (on
   * PostgreSQL, once every older transaction of the server ended: another test file's long
   * statement too), never skip it.
   */
  const readUntil = async (after: string, count: number, query = "", creds: Credentials = merchant) => {
    const events: Array<any> = []
    let cursor = after
    const deadline = Date.now() + 60_000
    while (events.length < count) {
      if (Date.now() > deadline) throw new Error(`only ${events.length} of ${count} events within a minute`)
      const reply = await get(`/v1/events?after=${cursor}&wait=5${query}`, creds)
      expect(reply.status).toBe(200)
      events.push(...reply.json.data)
      cursor = reply.json.next_cursor
    }
    return { events, cursor }
  }

  const head = async (creds: Credentials = merchant) => {
    const reply = await get("/v1/events", creds)
    expect(reply.status).toBe(200)
    expect(reply.json).toEqual({ data: [], next_cursor: expect.stringMatching(/^\d+\.\d+$/), has_more: false })
    return reply.json.next_cursor as string
  }

  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, storage)
    merchant = await Effect.runPromise(server.accounts.create({ name: "events feed", mode: "test" }))
    other = await Effect.runPromise(server.accounts.create({ name: "someone else", mode: "test" }))
  })
  afterAll(() => server.close())

  describe("GET /v1/events: the account's events from a cursor", () => {
    it("from now: only later events, in the order recorded, each the envelope webhooks carry; GET /v1/events/{id} the same", async () => {
      const before = await pay("4242424242424242")
      const start = await head()
      const paid = await pay("4242424242424242")
      const declined = await pay("4000000000000002")
      const recorded = [
        ...await Effect.runPromise(server.events(paid)),
        ...await Effect.runPromise(server.events(declined))
      ]
      expect(recorded.map((e) => e.type)).toEqual(["payment.succeeded", "payment.failed"])
      const { cursor, events } = await readUntil(start, recorded.length)
      expect(events.map((e) => e.id)).toEqual(recorded.map((e) => e.id))
      expect(events.every((e) => !(JSON.stringify(e).includes(before)))).toBe(true)
      for (const [served, stored] of events.map((e, i) => [e, recorded[i]!] as const)) {
        expect(Object.keys(served)).toEqual(["id", "type", "created_at", "livemode", "processing_profile", "data"])
        expect(served).toEqual({
          id: stored.id,
          type: stored.type,
          created_at: stored.created_at,
          livemode: false,
          processing_profile: stored.processing_profile,
          data: stored.data
        })
        expect((await get(`/v1/events/${served.id}`)).json).toEqual(served)
      }
      // Caught up: an empty answer keeps a cursor that still serves what comes next, and only that.
      const idle = await get(`/v1/events?after=${cursor}`)
      expect(idle.json.data).toEqual([])
      const later = await pay("4242424242424242")
      const [next] = await Effect.runPromise(server.events(later))
      expect((await readUntil(idle.json.next_cursor, 1)).events.map((e) => e.id)).toEqual([next!.id])
    })

    it("waits for the first event and answers as soon as it is recorded; empty after `wait`", async () => {
      const start = await head()
      const began = Date.now()
      const waiting = get(`/v1/events?after=${start}&wait=25`)
      await new Promise((resolve) => setTimeout(resolve, 300))
      const order = await pay("4242424242424242")
      const reply = await waiting
      // Well before the wait ran out (a fraction of a second, unless another transaction of the server holds the feed).
      expect(Date.now() - began).toBeLessThan(20_000)
      expect(reply.json.data.map((e: any) => e.data.order_id)).toContain(order)

      const quiet = Date.now()
      const empty = await get(`/v1/events?after=${reply.json.next_cursor}&wait=1`)
      expect(Date.now() - quiet).toBeGreaterThanOrEqual(900)
      expect(empty.json).toEqual({ data: [], next_cursor: expect.any(String), has_more: false })
    })

    it("types filters; limit pages with has_more; another account's events are neither in the feed nor found by id", async () => {
      const start = await head()
      const theirsStart = await head(other)
      await pay("4000000000000002")
      await pay("4242424242424242")
      await pay("4242424242424242")
      const theirs = await pay("4242424242424242", other)
      const failed = await readUntil(start, 1, "&types=payment.failed")
      expect(failed.events.map((e) => e.type)).toEqual(["payment.failed"])
      // All three servable now (and for good): the pages below are exact.
      expect((await readUntil(start, 3, "&types=payment.succeeded,payment.failed")).events).toHaveLength(3)
      const first = await get(`/v1/events?after=${start}&limit=2&types=payment.succeeded,payment.failed`)
      expect(first.json.data.map((e: any) => e.type)).toEqual(["payment.failed", "payment.succeeded"])
      expect(first.json.has_more).toBe(true)
      const rest = await readUntil(first.json.next_cursor, 1, "&types=payment.succeeded")
      expect(rest.events.map((e) => e.type)).toEqual(["payment.succeeded"])

      const [theirEvent] = await Effect.runPromise(server.events(theirs))
      expect((await readUntil(theirsStart, 1, "", other)).events.map((e) => e.id)).toEqual([theirEvent!.id])
      const notMine = await get(`/v1/events/${theirEvent!.id}`)
      expect({ status: notMine.status, code: notMine.json.code }).toEqual({ status: 404, code: "not_found" })
    })

    it(`at most ${Limits.MAX_FEED_WAITERS_PER_ACCOUNT} waiting reads per account: the ones past it answer at once, empty; another account still waits`, async () => {
      const busy = await Effect.runPromise(server.accounts.create({ name: "many listeners", mode: "test" }))
      const calm = await Effect.runPromise(server.accounts.create({ name: "one listener", mode: "test" }))
      const timed = async (creds: Credentials) => {
        const began = Date.now()
        const reply = await get("/v1/events?wait=3", creds)
        expect(reply.status).toBe(200)
        expect(reply.json).toEqual({ data: [], next_cursor: expect.stringMatching(/^\d+\.\d+$/), has_more: false })
        return Date.now() - began
      }
      const [others, ...mine] = await Promise.all([
        timed(calm),
        ...Array.from({ length: Limits.MAX_FEED_WAITERS_PER_ACCOUNT + 2 }, () => timed(busy))
      ])
      const waited = mine.filter((ms) => ms >= 2_900)
      const atOnce = mine.filter((ms) => ms < 1_500)
      expect({ waited: waited.length, atOnce: atOnce.length }).toEqual({ waited: Limits.MAX_FEED_WAITERS_PER_ACCOUNT, atOnce: 2 })
      expect(others).toBeGreaterThanOrEqual(2_900)
      // The places are given back: a read now waits again.
      expect(await timed(busy)).toBeGreaterThanOrEqual(2_900)
    })

    it("refuses what it cannot serve: each field named, 400 validation_failed", async () => {
      expectError(await get("/v1/events?types=payment.succeeded,payment.teleported"), 400, "validation_failed", ["types"])
      expectError(await get("/v1/events?after=evt_123"), 400, "validation_failed", ["after"])
      expectError(await get("/v1/events?after=99999999999999999999.1"), 400, "validation_failed", ["after"])
      expectError(await get("/v1/events?wait=26&limit=0"), 400, "validation_failed", ["limit", "wait"])
      const missing = await get("/v1/events/evt_doesnotexist0000")
      expect({ status: missing.status, code: missing.json.code }).toEqual({ status: 404, code: "not_found" })
    })
  })
}
