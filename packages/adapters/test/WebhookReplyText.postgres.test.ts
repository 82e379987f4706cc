/**
 * Review B1: a receiver's answer is the receiver's doing. A gzip body (`1f 8b 08 00 …`) holds NUL
 * bytes, which PostgreSQL refuses in jsonb: the attempt and the delivery's state went unrecorded and
 * the event was sent again every 30 s. The domain makes the kept text storable (Text.ts `storable`),
 * so both storages record the same attempt, once, with the cleaned text.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Accounts, Outbox, WebhookDeliveryRepo, Webhooks } from "@tender/domain"
import { Effect, Layer } from "effect"
import type { TenderConfig } from "../src/Config.ts"
import * as Infrastructure from "../src/Infrastructure.ts"
import { sharedConfig } from "./PgTestDatabase.ts"

/** A gzip header (NULs), a C0 control, a lone continuation byte (invalid UTF-8), then text. */
const REPLY = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x07]), Buffer.from([0xff]), Buffer.from("ok\tdone\n")])
/**
 * REPLY as kept: 1f, 08, 00 and 07 (C0 controls) and 8b, ff (not UTF-8) each U+FFFD; tab and
 * newline stay.
 */
const KEPT = `${"\ufffd".repeat(6)}ok\tdone\n`

/** A loopback receiver answering 200 with REPLY; how many POSTs it had. */
const receiver = Effect.acquireRelease(
  Effect.promise(async () => {
    const seen = { posts: 0 }
    const server = http.createServer((request, response) => {
      seen.posts++
      request.resume()
      response.writeHead(200, { "content-type": "application/octet-stream" }).end(REPLY)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return { server, seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` }
  }),
  ({ server }) =>
    Effect.promise(() => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    })
)

const useCases = Layer.mergeAll(Accounts.layer, Webhooks.layer, Outbox.layer)

const recordsOnce = (config: TenderConfig) =>
  Effect.gen(function*() {
    const { seen, url } = yield* receiver
    const accounts = yield* Accounts
    const account = yield* accounts.get((yield* accounts.create({ name: "gzip", mode: "test" })).account_id)
    const webhooks = yield* Webhooks
    yield* webhooks.createEndpoint(account, { url })
    const event = yield* (yield* Outbox).record({
      account_id: account.id,
      type: "payment.succeeded",
      livemode: false,
      processing_profile: null,
      order_id: null,
      data: { order_id: "ord_gzip" }
    })
    expect(yield* webhooks.dispatchDue()).toBe(1)
    const [delivery] = (yield* webhooks.getEvent(event.id)).deliveries
    const recorded = yield* webhooks.getDelivery(account, delivery!.id)
    expect(recorded.status).toBe("succeeded")
    expect(recorded.attempts.map((a) => a.status_code)).toEqual([200])
    const attempts = yield* (yield* WebhookDeliveryRepo).attempts(delivery!.id)
    expect(attempts.map((a) => a.response)).toEqual([KEPT])
    // Recorded as succeeded: nothing is due, nothing is sent again.
    expect(yield* webhooks.dispatchDue()).toBe(0)
    expect(seen.posts).toBe(1)
  }).pipe(Effect.scoped, Effect.provide(useCases.pipe(Layer.provideMerge(Infrastructure.layer(config)))))

describe("a receiver's answer with NUL bytes and invalid UTF-8 is recorded once, cleaned", () => {
  it.live("memory", () => recordsOnce({ storage: "memory", dataDir: ".tender-unused" }), 30_000)
  it.live("PostgreSQL", () => Effect.scoped(Effect.flatMap(sharedConfig, recordsOnce)), 60_000)
})
