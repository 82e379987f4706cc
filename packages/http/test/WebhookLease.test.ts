/**
 * Lease fencing of webhook attempts, with two dispatcher rounds driven by hand (no background
 * worker): an attempt that outlives its lease while another worker claims and delivers the same
 * delivery records nothing over it. The endpoint is a real loopback server.
 */
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option } from "effect"
import { Accounts, Outbox, UseCases, WebhookDeliveryRepo, Webhooks } from "@tender/domain"
import { Infrastructure } from "@tender/adapters"

let receiver: Server
let url = ""
let hits = 0

beforeAll(async () => {
  // The first attempt is slow and fails; any later one succeeds at once.
  receiver = createServer((_req, res) => {
    if (++hits === 1) setTimeout(() => res.writeHead(503).end(), 1_000)
    else res.writeHead(200).end()
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const address = receiver.address()
  url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/hooks`
})
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())))

const TestLayer = UseCases.layer.pipe(Layer.provideMerge(Infrastructure.layer({ storage: "memory", dataDir: ".tender-test" })))

describe("webhook lease fencing", () => {
  it.live("a worker whose lease ran out, the delivery claimed and delivered by another, records nothing", () =>
    Effect.gen(function*() {
      const created = yield* (yield* Accounts).create({ name: "fenced", mode: "test" })
      const account = yield* (yield* Accounts).get(created.account_id)
      const webhooks = yield* Webhooks
      yield* webhooks.createEndpoint(account, { url })
      yield* (yield* Outbox).record({
        account_id: account.id,
        type: "payment.succeeded",
        livemode: false,
        processing_profile: null,
        order_id: null,
        data: { order_id: "ord_x" }
      })
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
    }).pipe(Effect.provide(TestLayer)), 30_000)
})
