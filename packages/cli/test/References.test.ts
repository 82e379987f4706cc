/**
 * contract.md, Idempotency, across processes: two `tender serve` processes share one PostgreSQL
 * (the embedded one) and requests race on both at once.
 *
 * - "Orders of every kind (direct payments, transfers, and checkout sessions with their orders)
 *   share one reference space per account": a direct payment, a transfer and a checkout session
 *   created with one reference at once on different processes → exactly one is created.
 * - "a create answered 502 provider_unavailable … may be retried": a channel's provider that
 *   refused connections for the first create is reachable again; the same request, sent ten times
 *   at once to both processes, attempts once on the same order. Transfers alike: a third process
 *   whose sandbox refuses payouts (TENDER_SANDBOX_UNREACHABLE=payout, a simulated outage: no
 *   destination makes the sandbox unreachable) answers the first create, or a card transfer's
 *   execute, 502; the retries race on the other two.
 */
import * as Fakes from "@tender/adapters/providers/fake/Fakes"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import type pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHome, type Merchant, merchantClient, type Reply, type Served } from "./support/Tender.ts"

const home = makeHome("tender-references-")
const servers: Array<Served> = []
let fakes: Fakes.Fakes
/** A shop on the sandbox (no channels), and one whose only channel is Stripe's (the fake). */
type Shop = Merchant & { readonly account_id: string }
let sandboxShop: Shop
let stripeShop: Shop
let db: pg.Pool
let seq = 0
let env: Record<string, string>

const sandbox = merchantClient(() => sandboxShop)
const stripe = merchantClient(() => stripeShop)

/** Request i goes to server i mod 2. */
const on = (i: number) => servers[i % servers.length]

const ref = (label: string) => `${label}-${Date.now()}-${++seq}`

/** "200", or "409 duplicate_merchant_reference_id": what a reply was, in one word. */
const said = (reply: Reply) => (reply.status < 300 ? String(reply.status) : `${reply.status} ${reply.json?.code}`)

/** The order's events, in the order they were recorded (no endpoint lists them). */
const eventsOf = async (orderId: string) =>
  (await db.query<{ type: string }>("SELECT type FROM events WHERE order_id = $1 ORDER BY created_at, seq", [orderId])).rows.map((r) => r.type)

beforeAll(async () => {
  fakes = await Fakes.start()
  env = { TENDER_RATE_LIMIT_PER_SECOND: "100000", TENDER_RATE_LIMIT_BURST: "100000", ...fakes.env }
  servers.push(await home.serve(env))
  servers.push(await home.serve(env))
  sandboxShop = await home.runJson("accounts", "create", "--name", "reference racer")
  stripeShop = await home.runJson("accounts", "create", "--name", "retrying shop")
  const credentials = join(home.dataDir, "stripe.json")
  writeFileSync(credentials, JSON.stringify({ secret_key: "sk_test_references", webhook_secret: "whsec_references" }))
  await home.runJson("accounts", "channels", "add", stripeShop.account_id, "--provider", "stripe", "--mode", "test", "--credentials-file", credentials)
  db = home.database()
}, 240_000)

afterAll(async () => {
  await db?.end()
  // The joiner first, then the owner of the embedded PostgreSQL.
  for (const server of [...servers].reverse()) await server.stop()
  await fakes?.close()
  await home.cleanup()
}, 120_000)

describe("one reference space per account, across two server processes", () => {
  it("\"A direct payment or a transfer whose reference is already used by any order or session → 409 … even when both arrive at once on different server processes\": payment, transfer and session with one reference at once, 30 rounds → exactly one created each round", async () => {
    const token = (await sandbox.post(on(0), "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
    const urls = { success_url: "https://shop.example/thanks", cancel_url: "https://shop.example/cart" }
    const creates = {
      payment: (server: Served, reference: string) =>
        sandbox.post(server, "/v1/payments", {
          amount: "12.00", currency: "USD", country: "US", merchant_reference: reference,
          payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
        }),
      transfer: (server: Served, reference: string) =>
        sandbox.post(server, "/v1/transfers", {
          amount: "12.00", currency: "USD", country: "US", merchant_reference: reference, payment_method: { code: "bank_transfer", details: { account_number: "1234" } }
        }),
      session: (server: Served, reference: string) =>
        sandbox.post(server, "/v1/checkout/sessions", { amount: "12.00", currency: "USD", merchant_reference: reference, ...urls })
    }
    const kinds = Object.keys(creates) as Array<keyof typeof creates>
    const winners = new Map<string, number>()
    for (let round = 0; round < 30; round++) {
      const reference = ref("shared")
      // Each kind on a process of its own turn, all three sent at once.
      const replies = await Promise.all(kinds.map((kind, i) => creates[kind](on(round + i), reference)))
      const answers = replies.map(said)
      const created = kinds.filter((_, i) => replies[i]!.status < 300)
      expect(created, `round ${round}: ${answers.join(", ")}`).toHaveLength(1)
      expect(replies.filter((r) => r.status >= 300).map(said), answers.join(", ")).toEqual(["409 duplicate_merchant_reference_id", "409 duplicate_merchant_reference_id"])
      winners.set(created[0]!, (winners.get(created[0]!) ?? 0) + 1)
      // What storage holds agrees: one order with the reference, of the winner's kind, and one claim.
      const orders = await db.query<{ subtype: string }>("SELECT subtype FROM orders WHERE account_id = $1 AND merchant_reference = $2", [sandboxShop.account_id, reference])
      expect(orders.rows.map((o) => o.subtype)).toEqual([{ payment: "direct_payment", transfer: "transfer", session: "checkout" }[created[0]!]])
      const sessions = await db.query("SELECT id FROM checkout_sessions WHERE account_id = $1 AND merchant_reference = $2", [sandboxShop.account_id, reference])
      expect(sessions.rows).toHaveLength(created[0] === "session" ? 1 : 0)
    }
    console.log(`one reference, three creates at once: ${[...winners].map(([kind, n]) => `${kind} won ${n}×`).join(", ")}`)
  }, 240_000)
})

describe("a reference sessions hold, across two server processes", () => {
  it("\"after it ended expired, failed or canceled a new session (only a session) may reuse it\": two sessions and a direct payment at once, 10 rounds → one session created, the rest 409", async () => {
    const urls = { success_url: "https://shop.example/thanks", cancel_url: "https://shop.example/cart" }
    const session = (server: Served, reference: string) =>
      sandbox.post(server, "/v1/checkout/sessions", { amount: "12.00", currency: "USD", merchant_reference: reference, ...urls })
    for (let round = 0; round < 10; round++) {
      const reference = ref("ended")
      const first = await session(on(round), reference)
      expect(first.status).toBe(201)
      expect((await sandbox.post(on(round + 1), `/v1/checkout/sessions/${first.json.id}/cancel`)).json.status).toBe("canceled")
      const replies = await Promise.all([
        session(on(round), reference),
        session(on(round + 1), reference),
        sandbox.post(on(round), "/v1/payments", {
          amount: "12.00", currency: "USD", country: "US", merchant_reference: reference, payment_method: { code: "paypal" }, ...urls
        })
      ])
      const answers = replies.map(said)
      expect(answers.filter((a) => a === "201"), `round ${round}: ${answers.join(", ")}`).toHaveLength(1)
      expect(answers[2], answers.join(", ")).toBe("409 duplicate_merchant_reference_id")
      expect(answers.filter((a) => a !== "201"), answers.join(", ")).toEqual(["409 duplicate_merchant_reference_id", "409 duplicate_merchant_reference_id"])
      const newest = (await sandbox.get(on(round), `/v1/checkout/sessions/by-reference/${encodeURIComponent(reference)}`)).json
      expect(newest).toMatchObject({ id: replies.find((r) => r.status === 201)!.json.id, status: "open" })
      const orders = await db.query<{ subtype: string }>("SELECT subtype FROM orders WHERE account_id = $1 AND merchant_reference = $2", [sandboxShop.account_id, reference])
      expect(orders.rows.map((o) => o.subtype)).toEqual(["checkout", "checkout"])
    }
  }, 240_000)
})

describe("a create answered 502, retried across two server processes", () => {
  it("\"the same body with the same reference attempts again on the same order (a new transaction) and answers as a first create would; no payment.failed is emitted for a 502\": ten retries at once → one attempt, one 200, nine 409", async () => {
    const token = (await stripe.post(on(0), "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
    const body = {
      amount: "42.00", currency: "USD", country: "US", merchant_reference: ref("retry"),
      payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
    }
    await fakes.stripe.refuse()
    let first: Reply
    try {
      first = await stripe.post(on(0), "/v1/payments", body)
    } finally {
      await fakes.stripe.accept()
    }
    expect(said(first)).toBe("502 provider_unavailable")
    const pending = (await stripe.get(on(1), `/v1/orders/by-reference/${encodeURIComponent(body.merchant_reference)}`)).json
    expect(pending).toMatchObject({ status: "pending", transactions: [expect.stringMatching(/^txn_/)] })
    const [unreachable] = pending.transactions as Array<string>
    expect((await stripe.get(on(0), `/v1/transactions/${unreachable}`)).json).toMatchObject({ status: "failed", decline_code: "provider_unavailable" })
    expect(await eventsOf(pending.id)).toEqual([])

    // The provider is back; the merchant's retry arrives ten times at once, on both processes.
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => stripe.post(on(i), "/v1/payments", body)))
    const answers = replies.map(said)
    console.log(`ten retries at once: ${answers.join(", ")}`)
    expect(answers.filter((a) => a === "200"), answers.join(", ")).toHaveLength(1)
    expect(answers.filter((a) => a !== "200"), answers.join(", ")).toEqual(Array(9).fill("409 duplicate_merchant_reference_id"))
    const winner = replies.find((r) => r.status === 200)!.json
    expect(winner).toMatchObject({ order_id: pending.id, status: "completed", merchant_reference: body.merchant_reference })
    expect(winner.transaction_id).not.toBe(unreachable)

    const order = (await stripe.get(on(1), `/v1/orders/${pending.id}`)).json
    expect(order).toMatchObject({ status: "succeeded", transactions: [unreachable, winner.transaction_id] })
    expect(await eventsOf(pending.id)).toEqual(["payment.succeeded"])
    // The provider saw one payment for this order: the winner's transaction, none for the others.
    const intents = fakes.stripe.paymentIntents().filter((pi) => [unreachable, winner.transaction_id].includes(pi.metadata["tender_reference"]!))
    expect(intents.map((pi) => [pi.metadata["tender_reference"], pi.status])).toEqual([[winner.transaction_id, "succeeded"]])
    const rows = await db.query<{ id: string; status: string; decline_code: string | null }>(
      "SELECT id, status, decline_code FROM transactions WHERE order_id = $1 ORDER BY created_at, id", [pending.id])
    expect(rows.rows.map((t) => [t.id, t.status, t.decline_code])).toEqual([[unreachable, "failed", "provider_unavailable"], [winner.transaction_id, "completed", null]])
  }, 240_000)
})

describe("a transfer's create or execute answered 502, retried across two server processes", () => {
  /** A third process, on the same database, whose sandbox cannot be reached for payouts. */
  let outage: Served
  beforeAll(async () => {
    outage = await home.serve({ ...env, TENDER_SANDBOX_UNREACHABLE: "payout" })
  }, 240_000)
  afterAll(async () => {
    await outage?.stop()
  }, 120_000)

  /** The order's transactions as stored: id, status, decline code. */
  const attemptsOf = async (orderId: string) =>
    (await db.query<{ id: string; status: string; decline_code: string | null }>(
      "SELECT id, status, decline_code FROM transactions WHERE order_id = $1 ORDER BY created_at, id", [orderId])).rows.map((t) => [t.id, t.status, t.decline_code])

  /** The payouts the sandbox applied for these transactions (its ledger: what reached the provider). */
  const payoutsFor = async (txnIds: ReadonlyArray<string>) =>
    (await db.query<{ order_reference: string }>(
      "SELECT order_reference FROM sandbox_ledger WHERE operation = 'payout' AND order_reference = ANY($1)", [txnIds])).rows.map((r) => r.order_reference)

  it("\"the same body with the same reference attempts again on the same order (a new transaction) and answers as a first create would\"; no transfer.failed for the 502: ten retries at once → one attempt, one 201, nine 409", async () => {
    const body = {
      amount: "42.00", currency: "USD", country: "US", merchant_reference: ref("transfer-retry"),
      payment_method: { code: "bank_transfer", details: { account_number: "000123456789", holder_name: "Ada Lovelace" } }
    }
    expect(said(await sandbox.post(outage, "/v1/transfers", body))).toBe("502 provider_unavailable")
    const pending = (await sandbox.get(on(1), `/v1/orders/by-reference/${encodeURIComponent(body.merchant_reference)}`)).json
    expect(pending).toMatchObject({ subtype: "transfer", status: "pending", transactions: [expect.stringMatching(/^txn_/)] })
    const [unreachable] = pending.transactions as Array<string>
    expect(await eventsOf(pending.id)).toEqual([])

    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => sandbox.post(on(i), "/v1/transfers", body)))
    const answers = replies.map(said)
    console.log(`ten transfer retries at once: ${answers.join(", ")}`)
    expect(answers.filter((a) => a === "201"), answers.join(", ")).toHaveLength(1)
    expect(answers.filter((a) => a !== "201"), answers.join(", ")).toEqual(Array(9).fill("409 duplicate_merchant_reference_id"))
    const winner = replies.find((r) => r.status === 201)!.json
    expect(winner).toMatchObject({ order_id: pending.id, status: "succeeded", merchant_reference: body.merchant_reference })
    expect(winner.transaction_id).not.toBe(unreachable)

    expect((await sandbox.get(on(0), `/v1/orders/${pending.id}`)).json).toMatchObject({ status: "succeeded", transactions: [unreachable, winner.transaction_id] })
    expect(await eventsOf(pending.id)).toEqual(["transfer.succeeded"])
    expect(await attemptsOf(pending.id)).toEqual([[unreachable, "failed", "provider_unavailable"], [winner.transaction_id, "completed", null]])
    expect(await payoutsFor([unreachable!, winner.transaction_id])).toEqual([winner.transaction_id])
  }, 240_000)

  it("a card transfer's execute answered 502 awaits another execute (requires_action): ten executes at once → one payout, one 200", async () => {
    const token = (await sandbox.post(on(0), "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
    const created = (await sandbox.post(on(0), "/v1/transfers", {
      amount: "42.00", currency: "USD", country: "US", merchant_reference: ref("execute-retry"), payment_method: { code: "card", details: { card_token: token } }
    })).json
    expect(created.status).toBe("requires_action")
    expect(said(await sandbox.post(outage, `/v1/transfers/${created.order_id}/execute`, {}))).toBe("502 provider_unavailable")
    expect((await sandbox.get(on(1), `/v1/transfers/${created.id}`)).json).toMatchObject({ status: "requires_action" })
    expect(await eventsOf(created.order_id)).toEqual([])

    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => sandbox.post(on(i), `/v1/transfers/${created.order_id}/execute`, {})))
    const answers = replies.map(said)
    console.log(`ten executes at once after a 502: ${answers.join(", ")}`)
    expect(answers.filter((a) => a === "200"), answers.join(", ")).toHaveLength(1)
    for (const answer of answers.filter((a) => a !== "200")) expect(["409 transfer_in_progress", "409 transfer_invalid_order_state"], answers.join(", ")).toContain(answer)
    const winner = replies.find((r) => r.status === 200)!.json
    expect(winner).toMatchObject({ id: created.id, status: "succeeded" })
    expect(await eventsOf(created.order_id)).toEqual(["transfer.succeeded"])
    expect(await attemptsOf(created.order_id)).toEqual([[created.transaction_id, "failed", "provider_unavailable"], [winner.transaction_id, "completed", null]])
    expect(await payoutsFor([created.transaction_id, winner.transaction_id])).toEqual([winner.transaction_id])
  }, 240_000)
})
