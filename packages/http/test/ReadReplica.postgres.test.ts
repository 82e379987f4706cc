/**
 * Reads on a streaming replica through the HTTP API (`TENDER_READ_DATABASE_URL`, ReadRouting.ts),
 * with a replica that lags its primary on purpose by 2 s (`recovery_min_apply_delay`): a search
 * answered from it does not show a payment made just now (so the read endpoints do read it), yet a
 * merchant's read of its own write by id never 404s (the primary's second look), and writes that
 * read what a write just wrote (capture after authorize, refund after capture) read the primary.
 */
import { TEST_VAULT_KEY } from "@tender/adapters/test/PgTestDatabase"
import { replicaPair } from "@tender/adapters/test/ReplicaPair"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { type BodyOf, type TenderPromiseClient, typedClient } from "./support/Typed.ts"

const LAG_MS = 2_000

describe("reads on a replica that lags 2 s", () => {
  const scope = Effect.runSync(Scope.make())
  let pair: Effect.Success<ReturnType<typeof replicaPair>>
  let server: TestServer
  let tender: TenderPromiseClient
  let seq = 0
  const ref = (label: string) => `${label}-${Date.now()}-${++seq}`

  const charge = async (extra: Partial<BodyOf<"payments", "create">> = {}) => {
    const { token } = await tender.testHelpers.createCardToken({ number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
    return tender.payments.create({
      amount: "25.00",
      currency: "USD",
      country: "US",
      merchant_reference: ref("replica"),
      payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } },
      ...extra
    })
  }
  const searchByReference = async (reference: string) => (await tender.orders.search({ merchant_reference: reference })).data.map((o) => o.id)

  beforeAll(async () => {
    pair = await Effect.runPromise(Scope.provide(scope)(replicaPair({ applyDelay: `${LAG_MS}ms` })))
    server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, {
      storage: "postgres",
      dataDir: ".tender-test",
      databaseUrl: pair.primaryUrl,
      readDatabaseUrl: pair.replicaUrl,
      vaultKey: TEST_VAULT_KEY
    })
    const merchant = await Effect.runPromise(server.accounts.create({ name: "replica", mode: "test" }))
    tender = typedClient(server, merchant)
    // The migrations (and the account) reach the replica after its delay; reads start from there.
    await new Promise((resolve) => setTimeout(resolve, LAG_MS + 500))
  }, 120_000)
  afterAll(async () => {
    await server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("a search answered by the replica does not show a payment made just now; GET by id finds it at once (the primary's second look); after the lag the search shows it", async () => {
    const paid = await charge()
    expect(await searchByReference(paid.merchant_reference)).toEqual([])
    expect((await tender.orders.get({ params: { id: paid.order_id } })).id).toBe(paid.order_id)
    expect((await tender.orders.byReference({ params: { merchant_reference: paid.merchant_reference } })).id).toBe(paid.order_id)
    const deadline = Date.now() + LAG_MS * 3
    let found: ReadonlyArray<string> = []
    while (found.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      found = await searchByReference(paid.merchant_reference)
    }
    expect(found).toEqual([paid.order_id])
  })

  it("a merchant's read right after its write never 404s: order, transaction and refund by id", async () => {
    for (let i = 0; i < 5; i++) {
      const paid = await charge()
      const order = await tender.orders.get({ params: { id: paid.order_id } })
      expect({ id: order.id, status: order.status }).toEqual({ id: paid.order_id, status: "succeeded" })
      expect((await tender.transactions.get({ params: { id: paid.transaction_id } })).id).toBe(paid.transaction_id)
      const refund = await tender.refunds.create({ order_id: paid.order_id, reason: "requested_by_customer" })
      expect(await tender.refunds.get({ params: { id: refund.id } })).toEqual(refund)
    }
  })

  it("a write right after a write reads the primary: capture at once after authorize, refund at once after capture", async () => {
    const authorized = await charge({ capture_method: "manual" })
    expect(authorized.status).toBe("authorized")
    const captured = await tender.payments.capture({ order_id: authorized.order_id })
    expect(captured.status).toBe("completed")
    const refund = await tender.refunds.create({ order_id: authorized.order_id, reason: "requested_by_customer" })
    expect(refund.status).toBe("succeeded")
  })

  it("with the replica gone, reads are answered by the primary", async () => {
    await Effect.runPromise(pair.stopReplica)
    const paid = await charge()
    expect((await tender.orders.get({ params: { id: paid.order_id } })).id).toBe(paid.order_id)
    expect(await searchByReference(paid.merchant_reference)).toEqual([paid.order_id])
  })
})
