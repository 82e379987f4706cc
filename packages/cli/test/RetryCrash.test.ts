/**
 * A smart retry never charges twice (issue 27, "the fault suite kills a server between the two
 * tries"), with real processes: a test account's Stripe channel (priority 10) declines card
 * 4000000000000119 `processing_error`, which is retried once on its Adyen channel, inside the same
 * create. `tender serve` is killed (SIGKILL, through TENDER_FAULT):
 *
 *   - at `create.retry_reserved`: the first try recorded failed and the second reserved, before
 *     the second call was sent;
 *   - at the second call's `create.before_record`: Adyen authorized it, Tender had not recorded it;
 *
 * then a server without the fault is started on the same database and reconciles. From the fakes'
 * own ledgers (Stripe's PaymentIntents, Adyen's payments: real HTTP, the official SDKs) the customer
 * was charged at most once, and Tender's records agree: the order is final, no call is left in
 * doubt (`pending_call`), each transaction's status is what its provider did.
 *
 * The test process owns the embedded PostgreSQL and the fakes, so no server's death takes them.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Fakes from "@tender/adapters/providers/fake/Fakes"
import { EmbeddedPostgres } from "@tender/adapters"
import { send as signedSend } from "@tender/client/Testing"
import { Effect, Exit, Scope } from "effect"
import pg from "pg"
import { afterAll, beforeAll, expect, it } from "vitest"
import { makeHome, type Served } from "./support/Tender.ts"

const home = makeHome("tender-retry-crash-")
const dbScope = Effect.runSync(Scope.make())
let db: pg.Client
let fakes: Fakes.Fakes
let env: Record<string, string>
let clean: Served | undefined
let merchant: { secret_key: string; signing_secret: string; account_id: string }
let stripe = ""
let adyen = ""
let seq = 0

const send = async (server: Served, method: "GET" | "POST", path: string, body?: unknown) => {
  const reply = await signedSend({ baseUrl: server.url }, merchant, method, path, body === undefined ? {} : { body: JSON.stringify(body) })
  return { status: reply.status, json: reply.json }
}

beforeAll(async () => {
  const server = await Effect.runPromise(Scope.provide(dbScope)(EmbeddedPostgres.start(home.dataDir)))
  db = new pg.Client({ host: server.host, port: server.port, user: server.username, password: server.password, database: server.database })
  await db.connect()
  fakes = await Fakes.start()
  env = {
    ...fakes.env,
    TENDER_RATE_LIMIT_PER_SECOND: "10000",
    TENDER_RATE_LIMIT_BURST: "10000",
    // The reconciliation worker leaves calls younger than this alone (they may still be answered).
    TENDER_RECONCILE_GRACE_MS: "500",
    TENDER_PROVIDER_TIMEOUT_MS: "5000"
  }
  clean = await home.serve(env)
  merchant = await home.runJson("accounts", "create", "--name", "retried")
  const channel = async (provider: "stripe" | "adyen", priority: number) => {
    const file = join(home.dataDir, `${provider}.json`)
    writeFileSync(file, JSON.stringify(fakes[provider].credentials("test")))
    return (await home.runJson(
      "accounts", "channels", "add", merchant.account_id, "--provider", provider, "--mode", "test", "--credentials-file", file, "--priority", String(priority)
    )).channel_id as string
  }
  stripe = await channel("stripe", 10)
  adyen = await channel("adyen", 0)
}, 240_000)

afterAll(async () => {
  if (clean !== undefined) await clean.stop()
  await db?.end()
  await fakes?.close()
  await Effect.runPromise(Scope.close(dbScope, Exit.void))
  await home.cleanup()
}, 120_000)

const exited = (server: Served, ms: number) =>
  new Promise<{ readonly signal: string | null } | undefined>((resolve) => {
    const child = server.process
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ signal: child.signalCode })
    const timer = setTimeout(() => resolve(undefined), ms)
    child.once("exit", (_code, signal) => {
      clearTimeout(timer)
      resolve({ signal })
    })
  })

/** A customer-initiated card payment of 0119 (the customer present, CVC on the token): retryable. */
const retriedPayment = async (server: Served) => {
  const token = (await send(server, "POST", "/v1/test_helpers/card_tokens", { number: "4000000000000119", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
  expect(token).toMatch(/^tok_/)
  return {
    amount: "25.00",
    currency: "USD",
    country: "US",
    merchant_reference: `retry-crash-${Date.now()}-${++seq}`,
    payment_method: { code: "card", details: { card_token: token } },
    collect_cvv: false
  }
}

const orderOf = async (reference: string) =>
  (await db.query(`SELECT id, status FROM orders WHERE account_id = $1 AND merchant_reference = $2`, [merchant.account_id, reference])).rows[0] as
    | { id: string; status: string }
    | undefined

const transactionsOf = async (orderId: string) =>
  (await db.query(
    `SELECT id, status, channel_id, decline_code, pending_call, routing FROM transactions WHERE order_id = $1 ORDER BY created_at, id`,
    [orderId]
  )).rows as Array<{ id: string; status: string; channel_id: string; decline_code: string | null; pending_call: unknown; routing: any }>

/** What each fake holds of the order's transactions: Stripe's PaymentIntents and Adyen's payments, by status. */
const ledgers = (transactionIds: ReadonlyArray<string>) => ({
  stripe: fakes.stripe.paymentIntents().filter((pi) => transactionIds.includes(pi.metadata["tender_reference"]!)).map((pi) => [pi.metadata["tender_reference"], pi.status]),
  adyen: fakes.adyen.payments().filter((p) => transactionIds.includes(p.merchantReference)).map((p) => [p.merchantReference, p.status])
})

/**
 * Arms a server with `fault`, stops the clean one (so nothing else can record what the armed one
 * leaves), sends the retried payment until the armed server dies, then starts the clean server
 * again and waits until the order is final and no call of it is in doubt.
 */
const killedBetweenTries = async (fault: string) => {
  const body = await retriedPayment(clean!)
  const armed = await home.serve({ ...env, TENDER_FAULT: fault })
  try {
    await clean!.stop()
    const answered = await send(armed, "POST", "/v1/payments", body).then((r) => r.status, () => "connection lost")
    expect(answered).toBe("connection lost")
    expect((await exited(armed, 15_000))?.signal, `${fault}: the armed server should have died there`).toBe("SIGKILL")
  } finally {
    armed.process.kill("SIGKILL")
  }
  const order = await orderOf(body.merchant_reference)
  expect(order, "the create had claimed its order").toBeDefined()
  // Both tries were reserved before the kill: reconciliation knows both calls.
  const before = await transactionsOf(order!.id)
  expect(before).toHaveLength(2)
  clean = await home.serve(env)
  const deadline = Date.now() + 30_000
  for (;;) {
    const now = await orderOf(body.merchant_reference)
    const left = (await transactionsOf(order!.id)).filter((t) => t.pending_call !== null)
    if (["succeeded", "failed"].includes(now!.status) && left.length === 0) break
    if (Date.now() > deadline) throw new Error(`not recovered: ${JSON.stringify({ order: now, transactions: await transactionsOf(order!.id) })}\n${clean.log().slice(-3000)}`)
    await new Promise((r) => setTimeout(r, 250))
  }
  const transactions = await transactionsOf(order!.id)
  return { order: (await orderOf(body.merchant_reference))!, transactions, held: ledgers(transactions.map((t) => t.id)) }
}

it("killed after the second try was reserved, before it was sent: Adyen never charged; the order failed, the first try's decline recorded", async () => {
  const { held, order, transactions } = await killedBetweenTries("create.retry_reserved@1")
  const [first, second] = transactions
  expect(first).toMatchObject({ channel_id: stripe, status: "failed", decline_code: "processing_error", pending_call: null })
  expect(first!.routing).toMatchObject({ channel: stripe, attempt: 1 })
  expect(second).toMatchObject({ channel_id: adyen, status: "failed", pending_call: null })
  expect(second!.routing).toMatchObject({ channel: adyen, reason: "retry", attempt: 2 })
  // The providers' own ledgers: Stripe declined the first, Adyen never saw the second.
  expect(held).toEqual({ stripe: [[first!.id, "requires_payment_method"]], adyen: [] })
  expect(order.status).toBe("failed")
})

it("killed after Adyen authorized the second try, before Tender recorded it: reconciled to succeeded, exactly one approved charge", async () => {
  const { held, order, transactions } = await killedBetweenTries("create.before_record@2")
  const [first, second] = transactions
  expect(first).toMatchObject({ channel_id: stripe, status: "failed", decline_code: "processing_error", pending_call: null })
  expect(second).toMatchObject({ channel_id: adyen, status: "completed", pending_call: null })
  expect(held.stripe).toEqual([[first!.id, "requires_payment_method"]])
  expect(held.adyen).toEqual([[second!.id, "Authorised"]])
  expect(order.status).toBe("succeeded")
})
