/**
 * On PostgreSQL the sandbox answers inside Tender's unit of work (PaymentProvider.answersInUnitOfWork):
 * a create's claim, call and record, and a capture's reserve, call and record, each commit as one
 * transaction, the sandbox's ledger (the provider's records) with them. A defect after the record
 * (a Faults point that dies, in-process) must therefore leave nothing behind: no order, no capture,
 * no provider record, the merchant's reference free again. With the steps in separate units of work
 * the record would have committed before the defect.
 */
import { type Account, Faults, OrderRepo, Payments, TransactionRepo } from "@tender/domain"
import { Effect, Exit, Option } from "effect"
import pg from "pg"
import { afterAll, beforeAll, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../src/testing/TestServer.ts"
import { send } from "@tender/client/Testing"
import { fileStorage } from "@tender/adapters/test/PgTestDatabase"

const storage = await fileStorage()
let server: TestServer
let db: pg.Client
let account: Account.Account
let token = ""
let seq = 0

/** Faults that die at `point`: a defect there, as a bug would raise. */
const dieAt = (point: string) => ({ at: (p: string) => (p === point ? Effect.die(new Error(`fault at ${p}`)) : Effect.void) })

const charge = (reference: string, manual: boolean) => ({
  amount: "10.00",
  currency: "USD",
  country: "US",
  merchant_reference: reference,
  ...(manual ? { capture_method: "manual" as const } : {}),
  payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" as const, reason: "unscheduled" as const } } }
})

const payments = Effect.gen(function*() {
  return yield* Payments
})
const orders = Effect.gen(function*() {
  return yield* OrderRepo
})
const transactions = Effect.gen(function*() {
  return yield* TransactionRepo
})

const ledgerRows = async () => Number((await db.query("SELECT count(*) AS n FROM sandbox_ledger")).rows[0].n)

beforeAll(async () => {
  server = await startTestServer({ rateLimit: { perSecond: 10_000, burst: 10_000 } }, undefined, storage)
  const created = await Effect.runPromise(server.accounts.create({ name: "one unit of work", mode: "test" }))
  account = await Effect.runPromise(server.accounts.get(created.account_id))
  const card = await send(server, created, "POST", "/v1/test_helpers/card_tokens", {
    body: JSON.stringify({ number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
  })
  token = card.json.token
  db = new pg.Client({ connectionString: storage.databaseUrl })
  await db.connect()
}, 120_000)

afterAll(async () => {
  await db?.end()
  await server?.close()
})

it("a defect after a charge's record rolls back the order, its attempt and the provider's record; the reference is free again", async () => {
  const reference = `uow-${++seq}`
  const before = await ledgerRows()
  const exit = await server.run(Effect.exit(Effect.flatMap(payments, (p) => p.create(account, charge(reference, false))).pipe(
    Effect.provideService(Faults, dieAt("create.after_record"))
  )))
  expect(Exit.hasDies(exit)).toBe(true)
  const found = await server.run(Effect.flatMap(orders, (o) => o.findByReference(account.id, reference)))
  expect(Option.isNone(found)).toBe(true)
  expect(await ledgerRows()).toBe(before)

  // Nothing was charged, so the merchant's retry charges once.
  const retried = await server.run(Effect.flatMap(payments, (p) => p.create(account, charge(reference, false))))
  expect(retried.status).toBe("completed")
  expect(await ledgerRows()).toBe(before + 1)
})

it("a defect after a capture's record rolls back the capture and the provider's record; the authorization stands whole", async () => {
  const authorized = await server.run(Effect.flatMap(payments, (p) => p.create(account, charge(`uow-${++seq}`, true))))
  expect(authorized.status).toBe("authorized")
  const before = await ledgerRows()
  const exit = await server.run(Effect.exit(Effect.flatMap(payments, (p) =>
    p.capture(account, { order_id: authorized.order_id })).pipe(Effect.provideService(Faults, dieAt("capture.after_record")))))
  expect(Exit.hasDies(exit)).toBe(true)
  const txns = await server.run(Effect.flatMap(transactions, (t) => t.listByOrder(authorized.order_id)))
  expect(txns.map((t) => t.kind)).toEqual(["authorization"])
  expect(await ledgerRows()).toBe(before)

  const captured = await server.run(Effect.flatMap(payments, (p) => p.capture(account, { order_id: authorized.order_id })))
  expect(captured.status).toBe("completed")
  expect(captured.captured_amount).toBe(authorized.amount)
})
