/**
 * The retry schedule under a test clock (no sleeping for hours): attempt now, then after 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 10 h (±10% jitter), then exhausted; every attempt recorded. The endpoint
 * is a real loopback server answering 500.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { Webhook, WebhookDeliveryRepo, Webhooks } from "@tender/domain"
import { accountWithOneEvent, domainWithoutWorkers, loopbackReceiver } from "./support/Webhooks.ts"

let receiver: Awaited<ReturnType<typeof loopbackReceiver>>
let hits = 0

beforeAll(async () => {
  receiver = await loopbackReceiver((_req, res) => {
    hits++
    res.writeHead(500).end("nope")
  })
})
afterAll(() => receiver.close())

describe("webhook retry schedule", () => {
  it.effect("attempts at 0, +5 s, +5 min, +30 min, +2 h, +5 h, +10 h, +10 h, then exhausted", () =>
    Effect.gen(function*() {
      // Recorded at the test clock's start (epoch 0).
      const account = yield* accountWithOneEvent("scheduled", receiver.url("/hooks"))
      const webhooks = yield* Webhooks
      const repo = yield* WebhookDeliveryRepo
      const [delivery] = (yield* repo.search({ account_id: account.id, limit: 10 })).data
      const due = () => Effect.map(repo.findAny(delivery.id), (d) => Option.getOrThrow(d))

      expect(yield* webhooks.dispatchDue()).toBe(1)
      let elapsed = 0
      for (const [i, base] of Webhook.RETRY_DELAYS_MS.entries()) {
        const state = yield* due()
        expect(state).toMatchObject({ status: "failed", attempts: i + 1 })
        const wait = Date.parse(state.next_attempt_at!) - elapsed
        // the jitter keeps each wait within ±10% of the schedule
        expect(wait).toBeGreaterThanOrEqual(base * 0.9)
        expect(wait).toBeLessThanOrEqual(base * 1.1)
        // just before it is due: nothing happens
        yield* TestClock.adjust(wait - 1)
        expect(yield* webhooks.dispatchDue()).toBe(0)
        yield* TestClock.adjust(1)
        elapsed += wait
        expect(yield* webhooks.dispatchDue()).toBe(1)
      }
      const final = yield* due()
      expect(final).toMatchObject({ status: "exhausted", attempts: Webhook.MAX_ATTEMPTS, next_attempt_at: null })
      const attempts = yield* repo.attempts(delivery.id)
      expect(attempts).toHaveLength(8)
      expect(attempts.every((a) => a.status_code === 500 && a.error === "HTTP 500")).toBe(true)
      // about 27.5 hours in all
      expect(elapsed / 3_600_000).toBeGreaterThan(24)
      expect(elapsed / 3_600_000).toBeLessThan(31)
      // nothing more, however long we wait
      yield* TestClock.adjust("48 hours")
      expect(yield* webhooks.dispatchDue()).toBe(0)
      expect(hits).toBe(8)
      // a manual retry of the exhausted delivery: one more attempt, due at once; failing, exhausted again
      const retried = yield* webhooks.retryDelivery(account, delivery.id)
      expect(retried).toMatchObject({ status: "pending", attempt_count: Webhook.MAX_ATTEMPTS - 1 })
      expect(yield* webhooks.dispatchDue()).toBe(1)
      expect(yield* due()).toMatchObject({ status: "exhausted", next_attempt_at: null })
      expect(yield* repo.attempts(delivery.id)).toHaveLength(9)
      const again = yield* Effect.flip(webhooks.retryDelivery(account, "wd_doesnotexist000000"))
      expect(again.code).toBe("webhook_delivery_not_found")
    }).pipe(Effect.provide(domainWithoutWorkers)))
})
