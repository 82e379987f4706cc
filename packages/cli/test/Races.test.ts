/**
 * Races across processes: two `tender serve` processes share one PostgreSQL (the embedded one; the
 * second joins the first's), and requests hit both at once. Correctness rests on the database (unique
 * references, row locks), so it holds with or without Redis.
 */
import { beforeAll, describe, expect, it } from "vitest"
import { makeHome, type Merchant, merchantClient, type Reply, twoServers } from "./support/Tender.ts"

const home = makeHome("tender-races-")
let merchant: Merchant
let token = ""

// Provider calls take 40 ms, as a real provider's would: captures stay in flight long enough that
// the other process reserves while they are, which is the case the remainder rule must get right.
const SERVER_ENV = { TENDER_RATE_LIMIT_PER_SECOND: "100000", TENDER_RATE_LIMIT_BURST: "100000", TENDER_SANDBOX_LATENCY_MS: "40" }

const { post, get } = merchantClient(() => merchant)
const { database, on } = twoServers(home, SERVER_ENV)

/** A merchant-initiated card payment of 100.00 USD: authorized (manual) or settled at once (automatic). */
const pay = async (reference: string, captureMethod: "manual" | "automatic", cardToken = token) => {
  const reply = await post(on(0), "/v1/payments", {
    amount: "100.00",
    currency: "USD",
    country: "US",
    merchant_reference: reference,
    capture_method: captureMethod,
    payment_method: { code: "card", details: { card_token: cardToken, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
  })
  expect(reply.status, JSON.stringify(reply.json)).toBe(200)
  return reply.json as { order_id: string; transaction_id: string; merchant_reference: string; status: string }
}

const authorize = async (reference: string) => {
  const paid = await pay(reference, "manual")
  expect(paid.status).toBe("authorized")
  return paid.order_id
}

beforeAll(async () => {
  merchant = await home.runJson("accounts", "create", "--name", "racer")
  const tokenized = await post(on(0), "/v1/test_helpers/card_tokens", { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" })
  token = tokenized.json.token
}, 240_000)

describe("two server processes, one PostgreSQL", () => {
  it("50 concurrent creates with one reference → exactly one order, one attempt, one provider outcome", async () => {
    const reference = `race-${Date.now()}`
    const body = {
      amount: "12.00",
      currency: "USD",
      country: "US",
      merchant_reference: reference,
      payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant" } } }
    }
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => post(on(i), "/v1/payments", body)))
    const statuses = replies.map((r) => r.status).sort()
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s === 409)).toHaveLength(49)
    expect(replies.filter((r) => r.status === 409).every((r) => r.json.code === "duplicate_merchant_reference_id")).toBe(true)
    const winner = replies.find((r) => r.status === 200)!.json
    const orders = await post(on(1), "/v1/orders/search", { merchant_reference: reference })
    expect(orders.json.data.map((o: { id: string }) => o.id)).toEqual([winner.order_id])
    // The provider is called only by the request whose insert claimed the reference, once per attempt.
    const attempts = await post(on(1), "/v1/transactions/search", { merchant_reference: reference })
    expect(attempts.json.data).toHaveLength(1)
    expect(attempts.json.data[0]).toMatchObject({ id: winner.transaction_id, status: "completed" })
  }, 120_000)

  it("20 concurrent partial captures never exceed the authorized amount", async () => {
    const orderId = await authorize(`captures-${Date.now()}`)
    // Uneven amounts (7.00 on one process, 6.00 on the other) so that a round of captures can
    // straddle the limit: a remainder that forgot captures in flight would let both through.
    const amountOf = (i: number) => (i % 2 === 0 ? 700 : 600)
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      post(on(i), "/v1/payments/capture", { order_id: orderId, amount: (amountOf(i) / 100).toFixed(2), final: false })))
    const accepted = replies.flatMap((r, i) => (r.status === 200 && r.json.status !== "failed" ? [amountOf(i)] : []))
    const refused = replies.filter((r) => r.status !== 200)
    expect(accepted.length + refused.length).toBe(20)
    for (const r of refused) expect(r.json.code).toBe("capture_amount_exceeds_remaining")
    const total = accepted.reduce((s, a) => s + a, 0)
    expect(total).toBeLessThanOrEqual(10_000)
    // and nothing was refused while enough remained for it
    expect(total).toBeGreaterThan(10_000 - 700)
    const order = await get(on(1), `/v1/orders/${orderId}`)
    expect(order.json.captured_amount).toBe(total / 100)
    const captures = (await post(on(0), "/v1/transactions/search", { merchant_reference: order.json.merchant_reference, limit: 100 }))
      .json.data.filter((t: { kind: string }) => t.kind === "capture")
    expect(captures).toHaveLength(accepted.length)
    expect(captures.every((t: { status: string }) => t.status === "completed")).toBe(true)
  }, 120_000)

  it("concurrent capture and void leave one consistent outcome", async () => {
    for (let round = 0; round < 6; round++) {
      const orderId = await authorize(`capture-void-${Date.now()}-${round}`)
      const [capture, voided] = await Promise.all([
        post(on(round), "/v1/payments/capture", { order_id: orderId }),
        post(on(round + 1), "/v1/payments/void", { order_id: orderId })
      ])
      const order = (await get(on(0), `/v1/orders/${orderId}`)).json
      if (capture.status === 200) {
        // the capture won: the void was refused, the whole amount settled
        expect(capture.json).toMatchObject({ status: "completed", captured_amount: 100 })
        expect(voided.status).toBe(409)
        expect(order).toMatchObject({ status: "succeeded", captured_amount: 100 })
      } else {
        expect(voided.json).toMatchObject({ status: "canceled", voided_amount: 100 })
        expect(capture.status).toBe(409)
        expect(order).toMatchObject({ status: "canceled", captured_amount: 0 })
      }
    }
  }, 120_000)
})

describe("two server processes, one PostgreSQL: voids and captures while a capture settles (card 0341)", () => {
  /** What became of an order once its captures settled: the order, its events, and the provider's ledger of captures and voids. */
  const closedOrder = async (orderId: string) => {
    const deadline = Date.now() + 20_000
    let order = (await get(on(1), `/v1/orders/${orderId}`)).json
    while (order.status === "authorized" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250))
      order = (await get(on(0), `/v1/orders/${orderId}`)).json
    }
    const events = (await database().query(`SELECT type, data FROM events WHERE order_id = $1 ORDER BY created_at, seq`, [orderId])).rows as Array<{ type: string; data: any }>
    const txns = (await database().query(`SELECT id, kind, status, amount FROM transactions WHERE order_id = $1`, [orderId])).rows as Array<{ id: string; kind: string; status: string; amount: string }>
    const calls = (await database().query(
      `SELECT l.operation, l.result, l.order_reference FROM sandbox_ledger l JOIN transactions t ON t.id = l.order_reference WHERE t.order_id = $1 AND l.operation IN ('capture', 'void')`,
      [orderId]
    )).rows as Array<{ operation: string; result: { _tag: string }; order_reference: string }>
    const sum = (kind: string, status: string) => txns.filter((t) => t.kind === kind && t.status === status).reduce((s, t) => s + Number(t.amount), 0)
    // The provider's ledger and Tender's records tell one story: every capture it accepted settled
    // here (the sandbox settles each one), every void it applied is a void that released the hold.
    expect(calls.filter((c) => c.operation === "capture").map((c) => c.order_reference).sort())
      .toEqual(txns.filter((t) => t.kind === "capture" && t.status === "completed").map((t) => t.id).sort())
    expect(calls.filter((c) => c.operation === "void" && c.result._tag === "Voided").map((c) => c.order_reference).sort())
      .toEqual(txns.filter((t) => t.kind === "void" && t.status === "canceled").map((t) => t.id).sort())
    return { order, types: events.map((e) => e.type), events, captured: sum("capture", "completed"), voided: sum("void", "canceled") }
  }

  it("contract.md: \"a void while a capture is `settling` releases what is neither captured nor settling\" — a void racing a partial capture: whichever lands first, captured + voided is the authorization, payment.succeeded or payment.canceled once", async () => {
    const card = (await post(on(0), "/v1/test_helpers/card_tokens", { number: "4000000000000341", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
    const rounds = await Promise.all(Array.from({ length: 6 }, async (_, round) => {
      const orderId = (await pay(`void-settling-${Date.now()}-${round}`, "manual", card)).order_id
      const [capture, voided] = await Promise.all([
        post(on(round), "/v1/payments/capture", { order_id: orderId, amount: "30.00", final: false }),
        post(on(round + 1), "/v1/payments/void", { order_id: orderId })
      ])
      expect(voided.status, JSON.stringify(voided.json)).toBe(200)
      const closed = await closedOrder(orderId)
      if (capture.status === 200) {
        // The capture landed first: the void released the rest, and the capture settled on its own.
        expect(capture.json).toMatchObject({ status: "settling" })
        expect(voided.json).toMatchObject({ status: "settling", voided_amount: 70 })
        expect(closed.order).toMatchObject({ status: "succeeded", captured_amount: 30 })
        expect(closed.types).toEqual(["payment.authorized", "payment.succeeded"])
        expect(closed.events[1]!.data).toMatchObject({ captured_amount: 30, voided_amount: 70 })
      } else {
        expect(`${capture.status} ${capture.json.code}`).toBe("409 payment_unexpected_state")
        expect(voided.json).toMatchObject({ status: "canceled", voided_amount: 100 })
        expect(closed.order).toMatchObject({ status: "canceled" })
        expect(closed.types).toEqual(["payment.authorized", "payment.canceled"])
      }
      expect(closed.captured + closed.voided).toBe(10_000)
      return capture.status === 200 ? "capture first" : "void first"
    }))
    console.log(`Races.test: void vs settling capture: ${rounds.join(", ")}`)
  }, 180_000)

  it("contract.md: \"A final capture while another capture settles is accepted when the amounts fit\" — racing a void beside a settling capture: one of the two closes it, never both", async () => {
    const card = (await post(on(0), "/v1/test_helpers/card_tokens", { number: "4000000000000341", exp_month: 12, exp_year: 2035, cvc: "123" })).json.token
    const rounds = await Promise.all(Array.from({ length: 6 }, async (_, round) => {
      const orderId = (await pay(`final-settling-${Date.now()}-${round}`, "manual", card)).order_id
      const first = await post(on(round + 1), "/v1/payments/capture", { order_id: orderId, amount: "30.00", final: false })
      expect(first.json, JSON.stringify(first.json)).toMatchObject({ status: "settling" })
      const [final, voided] = await Promise.all([
        post(on(round), "/v1/payments/capture", { order_id: orderId }),
        post(on(round + 1), "/v1/payments/void", { order_id: orderId })
      ])
      const closed = await closedOrder(orderId)
      expect(closed.order.status).toBe("succeeded")
      expect(closed.types.filter((t) => t === "payment.succeeded")).toHaveLength(1)
      if (final.status === 200) {
        expect(final.json).toMatchObject({ status: "settling" })
        expect(`${voided.status} ${voided.json.code}`).toBe("409 payment_unexpected_state")
        expect(closed).toMatchObject({ captured: 10_000, voided: 0 })
      } else {
        expect(`${final.status} ${final.json.code}`).toBe("409 payment_unexpected_state")
        expect(voided.json).toMatchObject({ status: "settling", voided_amount: 70 })
        expect(closed).toMatchObject({ captured: 3_000, voided: 7_000 })
      }
      return final.status === 200 ? "final capture first" : "void first"
    }))
    console.log(`Races.test: final capture vs void beside a settling capture: ${rounds.join(", ")}`)
  }, 180_000)
})

describe("two server processes, one PostgreSQL: money out", () => {
  const tokenize = async (number: string) =>
    (await post(on(0), "/v1/test_helpers/card_tokens", { number, exp_month: 12, exp_year: 2035, cvc: "123" })).json.token as string

  /** The provider's own log of calls of `operation` for the order's transactions (the sandbox ledger). */
  const ledger = async (orderId: string, operation: "refund" | "payout") =>
    (await database().query(
      `SELECT l.order_reference, l.result FROM sandbox_ledger l JOIN transactions t ON t.id = l.order_reference
       WHERE t.order_id = $1 AND l.operation = $2 ORDER BY l.order_reference`,
      [orderId, operation]
    )).rows as Array<{ order_reference: string; result: { _tag: string } }>

  const REFUND_REFUSALS = [
    "400 refund_amount_exceeds_refundable",
    "409 refund_in_progress",
    "409 refund_already_fully_refunded"
  ]
  /** 7.00, 9.00 or 13.00 by i mod 3: uneven, so that a round of refunds can straddle the balance. */
  const refundAmountOf = (i: number) => [700, 900, 1300][i % 3]!

  /**
   * Sends the refunds at once (request i to server i mod 2) and checks every reply is a success or
   * a refusal the spec names; answers, per original, the sum and transactions of those that succeeded.
   */
  const refundRace = async (originalOf: (i: number) => string, count: number) => {
    const replies = await Promise.all(Array.from({ length: count }, (_, i) =>
      post(on(i), "/v1/refunds", { transaction_id: originalOf(i), amount: (refundAmountOf(i) / 100).toFixed(2) })))
    const succeeded = new Map<string, { total: number; txns: Array<string> }>()
    replies.forEach((r: Reply, i) => {
      if (r.status === 201) {
        expect(r.json, JSON.stringify(r.json)).toMatchObject({ status: "succeeded", amount: refundAmountOf(i) / 100, original_transaction_id: originalOf(i) })
        const entry = succeeded.get(originalOf(i)) ?? { total: 0, txns: [] }
        succeeded.set(originalOf(i), { total: entry.total + refundAmountOf(i), txns: [...entry.txns, r.json.transaction_id] })
      } else {
        expect(REFUND_REFUSALS, JSON.stringify(r.json)).toContain(`${r.status} ${r.json.code}`)
      }
    })
    const outcomes = replies.map((r) => (r.status === 201 ? "201" : `${r.status} ${r.json.code}`))
    console.log(`Races.test: refunds: ${JSON.stringify(Object.fromEntries([...new Set(outcomes)].map((o) => [o, outcomes.filter((x) => x === o).length])))}`)
    return succeeded
  }

  /**
   * What the order, its transactions and the provider's ledger say after a race: the order's
   * refunded_amount is the sum that succeeded; its refund transactions are exactly those, completed
   * (a refused request made none); the ledger holds one Paid refund for each and no other.
   */
  const expectRefundsAgree = async (orderId: string, succeededTxns: ReadonlyArray<string>, total: number) => {
    const order = (await get(on(1), `/v1/orders/${orderId}`)).json
    expect(order.refunded_amount ?? 0).toBe(total / 100)
    const found = (await post(on(0), "/v1/transactions/search", { merchant_reference: order.merchant_reference, limit: 100 })).json.data
      .filter((t: { kind: string }) => t.kind === "refund")
    expect(found.map((t: { id: string }) => t.id).sort()).toEqual([...succeededTxns].sort())
    expect(found.every((t: { status: string }) => t.status === "completed")).toBe(true)
    expect(Math.round(found.reduce((s: number, t: { amount: number }) => s + t.amount * 100, 0))).toBe(total)
    const calls = await ledger(orderId, "refund")
    expect(calls.map((c) => c.order_reference)).toEqual([...succeededTxns].sort())
    expect(calls.every((c) => c.result._tag === "Paid")).toBe(true)
  }

  /**
   * The lower bound: a refund is refused only when its amount exceeds what is free at that moment
   * (the settlement minus refunds succeeded and in flight). Every refund here succeeds (card 4242
   * refunds are Paid), so those counted then all end succeeded: the final sum is at least that,
   * i.e. more than settlement − 13.00. And the requests ask for more than the settlement (190.00
   * against 100.00, or ≥ 94.00 against each capture of 60.00 and 40.00), so some are refused.
   */
  it("20 concurrent refunds of one settlement (various amounts) never exceed it (the over-refund race of juspay/hyperswitch#13182)", async () => {
    const paid = await pay(`refunds-${Date.now()}`, "automatic")
    expect(paid.status).toBe("completed")
    const succeeded = (await refundRace(() => paid.transaction_id, 20)).get(paid.transaction_id) ?? { total: 0, txns: [] }
    expect(succeeded.total).toBeLessThanOrEqual(10_000)
    expect(succeeded.total).toBeGreaterThan(10_000 - 1300)
    await expectRefundsAgree(paid.order_id, succeeded.txns, succeeded.total)
  }, 120_000)

  it("concurrent refunds of a payment captured in two parts, each by its capture's transaction_id, never exceed that capture", async () => {
    const orderId = await authorize(`refund-captures-${Date.now()}`)
    const captures: Array<{ id: string; amount: number }> = []
    for (const amount of [6000, 4000]) {
      const captured = await post(on(0), "/v1/payments/capture", { order_id: orderId, amount: (amount / 100).toFixed(2), final: false })
      expect(captured.status, JSON.stringify(captured.json)).toBe(200)
      captures.push({ id: captured.json.transaction_id, amount })
    }
    const succeeded = await refundRace((i) => captures[i % 2]!.id, 20)
    for (const capture of captures) {
      const total = succeeded.get(capture.id)?.total ?? 0
      expect(total, capture.id).toBeLessThanOrEqual(capture.amount)
      expect(total, capture.id).toBeGreaterThan(capture.amount - 1300)
    }
    const all = [...succeeded.values()]
    await expectRefundsAgree(orderId, all.flatMap((s) => s.txns), all.reduce((s, e) => s + e.total, 0))
  }, 120_000)

  it("a refund and a payout of one settlement at once, on two processes, never send out more than it took (one balance per settlement for refunds and payouts, decided under the order's lock)", async () => {
    // Each of 60.00 fits 100.00 alone; two do not, whatever their kinds. Without the shared balance a
    // refund after a payout ignored it (issue 21 review: 200.00 out of 100.00).
    const kinds = ["/v1/refunds", "/v1/payouts", "/v1/payouts", "/v1/refunds"] as const
    const refusals = [...REFUND_REFUSALS, "400 validation_failed", "409 payout_in_progress"]
    for (let round = 0; round < 6; round++) {
      const paid = await pay(`refund-payout-${Date.now()}-${round}`, "automatic")
      expect(paid.status).toBe("completed")
      const replies = await Promise.all(kinds.map((path, i) => post(on(i), path, { transaction_id: paid.transaction_id, amount: "60.00" })))
      const outcomes = replies.map((r, i) => `${kinds[i]} ${r.status} ${r.json.code ?? r.json.status}`)
      expect(replies.filter((r) => r.status === 201), JSON.stringify(outcomes)).toHaveLength(1)
      for (const r of replies.filter((r) => r.status !== 201)) expect(refusals, JSON.stringify(r.json)).toContain(`${r.status} ${r.json.code}`)
      // The provider's own ledger: one call, paid; 60.00 out of 100.00.
      const calls = [...await ledger(paid.order_id, "refund"), ...await ledger(paid.order_id, "payout")]
      expect(calls.map((c) => c.result._tag), JSON.stringify(outcomes)).toEqual(["Paid"])
    }
  }, 240_000)

  it("10 concurrent executes of one card transfer make one provider call (contract.md, Transfers: executed once)", async () => {
    const created = await post(on(0), "/v1/transfers", {
      amount: "25.00",
      currency: "USD",
      country: "US",
      merchant_reference: `transfer-${Date.now()}`,
      // Its BIN has an issuer country in the sandbox, so it is a valid card destination.
      payment_method: { code: "card", details: { card_token: await tokenize("4242424242424242") } }
    })
    expect(created.json, JSON.stringify(created.json)).toMatchObject({ status: "requires_action" })
    const { order_id: orderId, transaction_id: txnId } = created.json
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => post(on(i), `/v1/transfers/${orderId}/execute`, {})))
    console.log(`Races.test: executes: ${replies.map((r) => (r.status === 200 ? "200" : r.json.code)).sort().join(", ")}`)
    const won = replies.filter((r) => r.status === 200)
    expect(won).toHaveLength(1)
    expect(won[0]!.json).toMatchObject({ status: "succeeded", order_id: orderId })
    for (const r of replies.filter((r) => r.status !== 200)) {
      expect(["409 transfer_in_progress", "409 transfer_invalid_order_state"], JSON.stringify(r.json)).toContain(`${r.status} ${r.json.code}`)
    }
    const calls = await ledger(orderId, "payout")
    expect(calls).toEqual([{ order_reference: txnId, result: expect.objectContaining({ _tag: "Paid" }) }])
    const events = await database().query(`SELECT type FROM events WHERE order_id = $1 AND type LIKE 'transfer.%'`, [orderId])
    expect(events.rows.map((e) => e.type)).toEqual(["transfer.succeeded"])
  }, 120_000)

  it("10 concurrent payouts of one original: one goes out (pending, card 0341), the others payout_in_progress; the worker settles it", async () => {
    const paid = await pay(`payouts-${Date.now()}`, "automatic", await tokenize("4000000000000341"))
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => post(on(i), "/v1/payouts", { order_id: paid.order_id, amount: "15.00" })))
    const accepted = replies.filter((r) => r.status === 201)
    expect(accepted).toHaveLength(1)
    expect(accepted[0]!.json).toMatchObject({ status: "pending", amount: 15, original_transaction_id: paid.transaction_id })
    for (const r of replies.filter((r) => r.status !== 201)) expect(`${r.status} ${r.json.code}`, JSON.stringify(r.json)).toBe("409 payout_in_progress")
    const payout = accepted[0]!.json
    const calls = await ledger(paid.order_id, "payout")
    expect(calls).toEqual([{ order_reference: payout.transaction_id, result: expect.objectContaining({ _tag: "Pending" }) }])
    // contract.md, Sandbox: settled ~2 s later, by the settlement worker of either process.
    const deadline = Date.now() + 15_000
    let status = payout.status
    while (status === "pending" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250))
      status = (await get(on(1), `/v1/payouts/${payout.id}`)).json.status
    }
    expect(status).toBe("succeeded")
    expect((await get(on(0), `/v1/transactions/${payout.transaction_id}`)).json.status).toBe("completed")
    expect(await ledger(paid.order_id, "payout")).toHaveLength(1)
  }, 120_000)
})
