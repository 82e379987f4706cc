/**
 * Every search and list costs a constant number of SQL statements per page, whatever its size: a
 * page's children (an order's transactions, a transaction's order) are read in one query for the
 * page, not one per row. Counted on PostgreSQL by a statement transformer installed on the calling
 * fiber only, so the server's workers running meanwhile are not counted.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { AccountRepo, Payments, Sessions, Webhooks } from "@tender/domain"
import type { Account } from "@tender/domain/accounts/Account"
import type { AccountId } from "@tender/domain/kernel/Ids"
import { Effect, Option } from "effect"
import { Statement } from "effect/sql"
import { type Credentials, send } from "@tender/client/Testing"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { fileStorage } from "@tender/adapters/test/PgTestDatabase"

const storage = await fileStorage()
let server: TestServer
let merchant: Credentials & { account_id: string }
let account: Account

const post = (path: string, body: unknown) => send(server, merchant, "POST", path, { body: JSON.stringify(body) })

beforeAll(async () => {
  server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, storage)
  merchant = await Effect.runPromise(server.accounts.create({ name: "search queries", mode: "test" }))
  account = await server.run(Effect.gen(function*() {
    return Option.getOrThrow(yield* (yield* AccountRepo).findById(merchant.account_id as AccountId))
  }))
  // Deliveries for every event, to a receiver that is not there (they stay queued or failed).
  expect((await post("/v1/webhook_endpoints", { url: "http://127.0.0.1:9/hook", enabled_events: ["*"] })).status).toBe(201)
  // 100 payments with a transaction each, and 100 checkout sessions (each with its order): page
  // sizes 10 and 100 both come back full.
  for (let i = 0; i < 100; i++) {
    const payment = await post("/v1/payments", {
      amount: "10.00",
      currency: "USD",
      country: "US",
      merchant_reference: `search-${i}`,
      payment_method: { code: "paypal" },
      success_url: "https://shop.example/ok",
      cancel_url: "https://shop.example/cancel"
    })
    expect(payment.status).toBe(200)
    const session = await post("/v1/checkout/sessions", {
      amount: "10.00",
      currency: "USD",
      merchant_reference: `session-${i}`,
      success_url: "https://shop.example/ok",
      cancel_url: "https://shop.example/cancel"
    })
    expect(session.status).toBe(201)
  }
}, 240_000)
afterAll(async () => {
  await server?.close()
})

/** Runs `effect` in the server's context, counting the SQL statements it executes. */
const counted = <A>(effect: Effect.Effect<A, unknown, Payments | Sessions | Webhooks>) =>
  server.run(Effect.gen(function*() {
    let statements = 0
    const count: Statement.Transformer = (statement) =>
      Effect.sync(() => {
        statements++
        return statement
      })
    const result = yield* effect.pipe(Effect.provideService(Statement.CurrentTransformer, count))
    return { result, statements }
  }))

const pages = async <A extends { readonly data: ReadonlyArray<unknown> }>(
  search: (limit: number) => Effect.Effect<A, unknown, Payments | Sessions | Webhooks>
) => {
  const small = await counted(search(10))
  const large = await counted(search(100))
  expect(small.result.data).toHaveLength(10)
  expect(large.result.data).toHaveLength(100)
  return { small: small.statements, large: large.statements }
}

it.each([
  ["orders", "the page's transactions"],
  ["transactions", "the page's orders"]
] as const)("%s: a page of 100 costs what a page of 10 does (%s in one query)", async (resource, _children) => {
  const { large, small } = await pages((limit) =>
    Effect.gen(function*() {
      const payments = yield* Payments
      return yield* (resource === "orders" ? payments.searchOrders(account, { limit }) : payments.searchTransactions(account, { limit }))
    })
  )
  expect(large).toBe(small)
  expect(small).toBeLessThanOrEqual(2)
})

it("checkout sessions: one statement per page", async () => {
  const { large, small } = await pages((limit) => Effect.gen(function*() { return yield* (yield* Sessions).search(account, { limit }) }))
  expect(large).toBe(small)
  expect(small).toBe(1)
})

it("webhook deliveries, events (the CLI's list) and endpoints: one statement per page", async () => {
  const { large, small } = await pages((limit) => Effect.gen(function*() { return yield* (yield* Webhooks).listDeliveries(account, { limit }) }))
  expect(large).toBe(small)
  expect(small).toBe(1)
  const events = await pages((limit) => Effect.gen(function*() { return yield* (yield* Webhooks).listEvents({ account_id: account.id, limit }) }))
  expect([events.small, events.large]).toEqual([1, 1])
  const endpoints = await counted(Effect.gen(function*() { return yield* (yield* Webhooks).listEndpoints(account) }))
  // None when the process holds the account's list already (ListCachesPg, issue 24), else one.
  expect(endpoints.statements).toBeLessThanOrEqual(1)
})
