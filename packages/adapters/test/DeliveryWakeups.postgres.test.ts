/**
 * Issue 24: an idle webhook dispatcher is woken by storage when deliveries are stored, rather than
 * finding them at its next poll. Each test runs the dispatcher with an idle wait of 30 s, so an
 * event that reaches its receiver within a second was announced. PostgreSQL announces through
 * LISTEN/NOTIFY (migration 0039's trigger, WebhookDeliveryRepoPg's listener); memory in process.
 * With the listener's connection lost, the dispatcher polls (`pollMs`) until it listens again.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Accounts, Outbox, WebhookDeliveryRepo, Webhooks } from "@tender/domain"
import { Effect, Fiber, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import type { TenderConfig } from "../src/Config.ts"
import * as Infrastructure from "../src/Infrastructure.ts"
import * as PgDatabase from "../src/storage/postgres/PgDatabase.ts"
import * as WebhookDeliveryRepoPg from "../src/storage/postgres/WebhookDeliveryRepoPg.ts"
import { sharedConfig } from "./PgTestDatabase.ts"

/** A dispatcher that never claims by the clock within a test: only a wake-up (or the poll) finds work. */
const IDLE_MS = 30_000

/** A loopback receiver answering 200, with when each event's first POST arrived (Date.now()). */
const receiver = Effect.acquireRelease(
  Effect.promise(async () => {
    const arrivals = new Map<string, number>()
    const server = http.createServer((request, response) => {
      const id = request.headers["x-event-id"]
      if (typeof id === "string" && !arrivals.has(id)) arrivals.set(id, Date.now())
      request.resume()
      response.writeHead(200).end()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return { server, arrivals, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` }
  }),
  ({ server }) =>
    Effect.promise(() => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    })
)

/** The use cases over `config`'s storage; `deliveries` in place of its own WebhookDeliveryRepo when given. */
const useCases = Layer.mergeAll(Accounts.layer, Webhooks.layer, Outbox.layer)

const memory = useCases.pipe(Layer.provideMerge(Infrastructure.layer({ storage: "memory", dataDir: ".tender-unused" })))

/**
 * The use cases over `config`'s PostgreSQL, with `deliveries` in place of its WebhookDeliveryRepo
 * when given; a client of the database of the test's own, to watch and break the listener.
 */
const postgres = (config: TenderConfig, deliveries: Layer.Layer<WebhookDeliveryRepo, never, PgClient.PgClient | SqlClient.SqlClient> = WebhookDeliveryRepoPg.layer) =>
  useCases.pipe(
    Layer.provideMerge(deliveries),
    Layer.provideMerge(Infrastructure.layer(config)),
    Layer.provideMerge(PgDatabase.client(config))
  )

/** An account with one endpoint at `url`; `record` commits one event of it and its delivery. */
const merchant = (url: string) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const account = yield* accounts.get((yield* accounts.create({ name: "woken", mode: "test" })).account_id)
    yield* (yield* Webhooks).createEndpoint(account, { url })
    const outbox = yield* Outbox
    return {
      record: outbox.record({
        account_id: account.id,
        type: "payment.succeeded",
        livemode: false,
        processing_profile: null,
        order_id: null,
        data: { order_id: "ord_woken" }
      })
    }
  })

/** Commits an event and waits (at most `withinMs`) for its POST; how long it took, or `undefined`. */
const deliveredWithin = (record: Effect.Effect<{ readonly id: string }>, arrivals: Map<string, number>, withinMs: number) =>
  Effect.gen(function*() {
    const started = Date.now()
    const event = yield* record
    while (!arrivals.has(event.id) && Date.now() - started < withinMs) yield* Effect.sleep("10 millis")
    const at = arrivals.get(event.id)
    return at === undefined ? undefined : at - started
  })

/** This database's backends listening for deliveries (the dispatcher's listener). */
const listeners = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  const rows = yield* sql<{ pid: number }>`
    SELECT pid FROM pg_stat_activity
    WHERE datname = current_database() AND query = ${`LISTEN "${WebhookDeliveryRepoPg.CHANNEL}"`}`.pipe(Effect.orDie)
  return rows.map((row) => row.pid)
})

const untilListening = Effect.gen(function*() {
  for (let i = 0; i < 500 && (yield* listeners).length === 0; i++) yield* Effect.sleep("10 millis")
  expect((yield* listeners).length).toBe(1)
  // Listening wakes the dispatcher once (what was stored before went unheard): let that claim pass.
  yield* Effect.sleep("300 millis")
})

describe("an idle dispatcher is woken when deliveries are stored", () => {
  it.live("memory: an event committed while the dispatcher waits out a 30 s idle is attempted within a second", () =>
    Effect.gen(function*() {
      const { arrivals, url } = yield* receiver
      const { record } = yield* merchant(url)
      const dispatcher = yield* Effect.forkChild((yield* Webhooks).runDispatcher({ idleMs: IDLE_MS, pollMs: IDLE_MS }))
      // Past the dispatcher's first claim: it waits.
      yield* Effect.sleep("300 millis")
      for (let i = 0; i < 3; i++) {
        const took = yield* deliveredWithin(record, arrivals, 5_000)
        expect(took).toBeLessThan(1_000)
        yield* Effect.sleep("200 millis")
      }
      yield* Fiber.interrupt(dispatcher)
    }).pipe(Effect.scoped, Effect.provide(memory)), 30_000)

  it.live("PostgreSQL: an event committed while the dispatcher waits out a 30 s idle is attempted within a second (LISTEN/NOTIFY)", () =>
    Effect.gen(function*() {
      const config = yield* sharedConfig
      yield* Effect.gen(function*() {
        const { arrivals, url } = yield* receiver
        const { record } = yield* merchant(url)
        const dispatcher = yield* Effect.forkChild((yield* Webhooks).runDispatcher({ idleMs: IDLE_MS, pollMs: IDLE_MS }))
        yield* untilListening
        for (let i = 0; i < 3; i++) {
          const took = yield* deliveredWithin(record, arrivals, 5_000)
          expect(took).toBeLessThan(1_000)
          yield* Effect.sleep("200 millis")
        }
        yield* Fiber.interrupt(dispatcher)
        // The listener's connection ends with the dispatcher.
        for (let i = 0; i < 100 && (yield* listeners).length > 0; i++) yield* Effect.sleep("20 millis")
        expect(yield* listeners).toEqual([])
      }).pipe(Effect.provide(postgres(config)))
    }).pipe(Effect.scoped), 60_000)

  it.live("PostgreSQL: with the listener's connection lost the dispatcher polls (pollMs) and still delivers; listening again, it is woken again", () =>
    Effect.gen(function*() {
      const config = yield* sharedConfig
      // Listening again only after 2 s: long enough to see the poll deliver meanwhile.
      const repo = WebhookDeliveryRepoPg.layerWith({ listenRetryMs: 2_000 })
      yield* Effect.gen(function*() {
        const sql = yield* PgClient.PgClient
        const { arrivals, url } = yield* receiver
        const { record } = yield* merchant(url)
        const dispatcher = yield* Effect.forkChild((yield* Webhooks).runDispatcher({ idleMs: IDLE_MS, pollMs: 200 }))
        yield* untilListening
        const [listener] = yield* listeners
        yield* sql`SELECT pg_terminate_backend(${listener})`.pipe(Effect.orDie)
        yield* Effect.sleep("100 millis")
        expect(yield* listeners).toEqual([])

        // Unheard: nothing announces this event, and the idle wait is 30 s; the 200 ms poll finds it.
        const polled = yield* deliveredWithin(record, arrivals, 1_500)
        expect(polled).toBeLessThan(1_000)
        expect(yield* listeners).toEqual([])

        // Listening again (2 s after the loss): woken by the next event again, not polled.
        yield* untilListening
        const woken = yield* deliveredWithin(record, arrivals, 5_000)
        expect(woken).toBeLessThan(1_000)
        yield* Fiber.interrupt(dispatcher)
      }).pipe(Effect.provide(postgres(config, repo)))
    }).pipe(Effect.scoped), 60_000)
})
