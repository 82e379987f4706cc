/**
 * Lease fencing of webhook attempts, with two dispatcher rounds driven by hand (no background
 * worker): an attempt that outlives its lease while another worker claims and delivers the same
 * delivery records nothing over it. The endpoint is a real loopback server.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { WebhookDeliveryRepo, Webhooks } from "@tender/domain"
import { accountWithOneEvent, domainWithoutWorkers, loopbackReceiver } from "./support/Webhooks.ts"

let receiver: Awaited<ReturnType<typeof loopbackReceiver>>
let hits = 0

beforeAll(async () => {
  // The first attempt is slow and fails; any later one succeeds at once.
  receiver = await loopbackReceiver((_req, res) => {
    if (++hits === 1) setTimeout(() => res.writeHead(503).end(), 1_000)
    else res.writeHead(200).end()
  })
})
afterAll(() => receiver.close())

describe("webhook lease fencing", () => {
  it.live("a worker whose lease ran out, the delivery claimed and delivered by another, records nothing", () =>
    Effect.gen(function*() {
      const account = yield* accountWithOneEvent("fenced", receiver.url("/hooks"))
      const webhooks = yield* Webhooks
      const repo = yield* WebhookDeliveryRepo
      const [delivery] = (yield* repo.search({ account_id: account.id, limit: 10 })).data

      // A worker with a short lease: its attempt is still waiting for the answer when the lease ends.
      const stale = yield* Effect.forkChild(webhooks.dispatchDue({ leaseMs: 200 }))
      while (hits === 0) yield* Effect.sleep("10 millis")
      yield* Effect.sleep("300 millis")
      // Another worker claims it again and delivers it.
      expect(yield* webhooks.dispatchDue()).toBe(1)
      expect(Option.getOrThrow(yield* repo.findAny(delivery.id))).toMatchObject({ status: "succeeded", attempts: 1 })

      // The first answer (503) arrives after that: dropped, not written over the success.
      expect(yield* Fiber.join(stale)).toBe(1)
      expect(Option.getOrThrow(yield* repo.findAny(delivery.id))).toMatchObject({
        status: "succeeded",
        attempts: 1,
        lease_token: null
      })
      expect((yield* repo.attempts(delivery.id)).map((a) => a.status_code)).toEqual([200])
      expect(hits).toBe(2)
    }).pipe(Effect.provide(domainWithoutWorkers)), 30_000)
})
