/**
 * The checkout session operations' pure decisions (sessions/operations, SessionRequest, SessionViews)
 * and the one Order birth: what a session's create, end and hosted view decide, with no storage.
 * The effectful shells around them are tested over the memory adapters
 * (packages/adapters/test/SessionOperations.test.ts) and through HTTP (packages/http/test/Sessions.test.ts).
 */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import type { Account } from "../src/accounts/Account.ts"
import type { AccountId, CheckoutSessionId, OrderId, TransactionId } from "../src/kernel/Ids.ts"
import * as OrderAggregate from "../src/payments/Order.ts"
import type { Order, Transaction } from "../src/payments/Payment.ts"
import * as Session from "../src/sessions/CheckoutSession.ts"
import { planAttempt } from "../src/sessions/operations/Attempt.ts"
import { planClose } from "../src/sessions/operations/Close.ts"
import { planCreate } from "../src/sessions/operations/Create.ts"
import { isOverdue } from "../src/sessions/operations/ExpireSessions.ts"
import { type CreateSessionInput, validateCreate, type ValidSession } from "../src/sessions/SessionRequest.ts"
import { hostedViewOf } from "../src/sessions/SessionViews.ts"
import { T0, txn } from "./Fixtures.ts"

const T1 = "2026-11-01T10:30:00.000Z"
const NOW = Date.parse(T0)
const PUBLIC_URL = "http://tender.test"

const account = { id: "acct_1" as AccountId, mode: "test", processing_profiles: [], name: "Shop", publishable_key: "pk_test_1", three_ds_display_mode: "inline" } as unknown as Account

const request: CreateSessionInput = {
  amount: "10.00",
  currency: "USD",
  merchant_reference: "cart-1",
  success_url: "https://m.example/ok",
  cancel_url: "https://m.example/no"
}

const valid = (input: CreateSessionInput = request): ValidSession => {
  const checked = validateCreate(account, input, NOW)
  if (checked instanceof Error) throw checked
  return checked
}

/** A session and its order as the create makes them. */
const fresh = (input: CreateSessionInput = request) =>
  planCreate(account, input, valid(input), { session: "cs_1" as CheckoutSessionId, order: "ord_1" as OrderId }, PUBLIC_URL, T0)

/** An attempt under `order` (a fresh id each). */
const attempt = (order: Order, overrides: Partial<Transaction> = {}): Transaction =>
  txn({ id: `txn_${Math.random().toString(36).slice(2)}` as TransactionId, order_id: order.id, browser_flow: true, ...overrides })

describe("the one Order birth (payments/Order.ts born)", () => {
  it("every kind starts pending, version 1, with nothing received, refunded, settled or awaiting a retry; unnamed fields null", () => {
    const order = OrderAggregate.born({
      id: "ord_9" as OrderId,
      owner: { id: "acct_1" as AccountId, mode: "live" },
      subtype: "transfer",
      merchant_reference: "po-1",
      amount: 500,
      currency: "EUR",
      country: "DE",
      payment_method: "sepa",
      capture_method: "automatic",
      processing_profile: null,
      created_at: T0
    })
    expect(order).toMatchObject({
      account_id: "acct_1",
      livemode: true,
      status: "pending",
      version: 1,
      updated_at: T0,
      payment_instrument: null,
      received_amount: null,
      refunded_amount: 0,
      retry_until: null,
      customer: null,
      success_url: null,
      cancel_url: null,
      card_token: null,
      checkout_session_id: null,
      customer_id: null,
      card_storage_consent: null,
      request_hash: null
    })
  })
})

describe("create (pure: validateCreate, planCreate)", () => {
  it("the session and its checkout order agree: one id each way, the routing country on the order, the hosted page as the order's return URLs", () => {
    const { order, session } = fresh()
    expect(order).toMatchObject({ subtype: "checkout", checkout_session_id: "cs_1", country: "US", payment_method: "none", status: "pending", amount: 1000 })
    expect(order.success_url).toBe(`${PUBLIC_URL}/checkout/cs_1`)
    expect(order.cancel_url).toBe(`${PUBLIC_URL}/checkout/cs_1`)
    expect(session).toMatchObject({ order_id: "ord_1", status: "open", country: null, attempts: 0, max_payment_attempts: 3, success_url: "https://m.example/ok" })
    // spec: expires_at defaults to one hour
    expect(session.expires_at).toBe(new Date(NOW + Session.DEFAULT_LIFETIME_MS).toISOString())
  })

  it("contract.md: \"when line_items are given, the sum of quantity × unit_amount must equal amount exactly; otherwise 400 validation_failed naming line_items\"", () => {
    const off = validateCreate(account, { ...request, line_items: [{ name: "Tea", quantity: 3, unit_amount: "3.00" }] }, NOW)
    expect(off).toMatchObject({ code: "validation_failed" })
    expect((off as { errors: ReadonlyArray<{ field: string }> }).errors.map((e) => e.field)).toEqual(["line_items"])
    const exact = valid({ ...request, line_items: [{ name: "Tea", quantity: 4, unit_amount: "2.50" }] })
    expect(exact.lineItems).toEqual([{ name: "Tea", quantity: 4, unit_amount: 250 }])
  })
})

describe("attempt (pure: planAttempt, the claim's decision)", () => {
  const sandbox = { mode: "test" as const }
  const card = (details: { card_token?: string; collect_card?: boolean }) => ({ payment_method: { code: "card", details } })
  const codeOf = (planned: ReturnType<typeof planAttempt>) => (Result.isFailure(planned) ? planned.failure.code : "taken")

  it("spec: a retry under an open session creates a new transaction; a final or pending_action session takes none (invalid_session_state)", () => {
    const { session } = fresh()
    expect(codeOf(planAttempt(session, sandbox, [], card({ card_token: "tok_1" })))).toBe("taken")
    expect(codeOf(planAttempt({ ...session, status: "pending_action" }, sandbox, [], card({ card_token: "tok_1" })))).toBe("invalid_session_state")
    expect(codeOf(planAttempt({ ...session, status: "expired" }, sandbox, [], card({ card_token: "tok_1" })))).toBe("invalid_session_state")
  })

  it("one attempt at a time: one at the provider, or in flight with no customer step, is 409 card_payment_in_progress; a declined one is not", () => {
    const { order, session } = fresh()
    const calling = attempt(order, { status: "processing", pending_call: { operation: "authorize", key: "k", at: T0 } })
    expect(codeOf(planAttempt(session, sandbox, [calling], card({ card_token: "tok_1" })))).toBe("card_payment_in_progress")
    expect(codeOf(planAttempt(session, sandbox, [attempt(order, { status: "processing" })], card({ card_token: "tok_1" })))).toBe("card_payment_in_progress")
    expect(codeOf(planAttempt(session, sandbox, [attempt(order, { status: "failed" })], card({ card_token: "tok_1" })))).toBe("taken")
  })

  it("live money never reaches the sandbox: a live session on a test provider is payment_unroutable", () => {
    const { session } = fresh()
    expect(codeOf(planAttempt({ ...session, livemode: true }, sandbox, [], card({ card_token: "tok_1" })))).toBe("payment_unroutable")
  })

  it("the method must be the session's; a card needs its token unless the card element collects it; manual capture is a card's", () => {
    const { session } = fresh({ ...request, payment_methods: ["card", "paypal"], capture_method: "manual" })
    const notOffered = planAttempt(session, sandbox, [], { payment_method: { code: "crypto" } })
    expect(Result.isFailure(notOffered) && notOffered.failure).toMatchObject({ code: "validation_failed", errors: [{ field: "payment_method.code" }] })
    const tokenless = planAttempt(session, sandbox, [], card({}))
    expect(Result.isFailure(tokenless) && tokenless.failure).toMatchObject({ code: "validation_failed", errors: [{ field: "payment_method.details.card_token" }] })
    expect(Result.getOrThrow(planAttempt(session, sandbox, [], card({ collect_card: true })))).toMatchObject({ awaitCard: true, manual: true, country: "US" })
    expect(Result.getOrThrow(planAttempt(session, sandbox, [], { payment_method: { code: "paypal" } }))).toMatchObject({ awaitCard: false, manual: false })
  })
})

describe("close (pure: planClose)", () => {
  it("a cancel ends the session, its order (session_closed: canceled, no payment event) and every attempt in flight", () => {
    const { order, session } = fresh()
    const waiting = attempt(order, { status: "processing", provider_transaction_id: "psp_1" })
    const plan = Result.getOrThrow(planClose(session, { ...order, status: "processing" }, [waiting], "canceled", T1))
    expect(plan.session.next.status).toBe("canceled")
    expect(plan.session.events).toEqual(["checkout.session.canceled"])
    expect(plan.order?.next.status).toBe("canceled")
    expect(plan.order?.events).toEqual([])
    expect(plan.transactions.map((t) => [t.id, t.status, t.decline_code])).toEqual([[waiting.id, "canceled", "session_canceled"]])
  })

  it("spec: \"An attempt the customer already started at the provider can still report its outcome after expiry\": the order stays in flight, the attempt's window bounded", () => {
    const { order, session } = fresh()
    const started = attempt(order, { status: "processing", provider_transaction_id: "psp_1", expires_at: "2026-11-02T10:00:00.000Z" })
    const plan = Result.getOrThrow(planClose(session, { ...order, status: "processing" }, [started], "expired", T1))
    expect(plan.session.next.status).toBe("expired")
    expect(plan.session.events).toEqual(["checkout.session.expired"])
    expect(plan.order).toBeUndefined()
    expect(plan.transactions.map((t) => [t.status, t.expires_at])).toEqual([["processing", new Date(Date.parse(T1) + Session.LATE_OUTCOME_WINDOW_MS).toISOString()]])
  })

  it("an expiry with nothing started at a provider ends the order and the waiting attempt (session_expired)", () => {
    const { order, session } = fresh()
    const collecting = attempt(order, { status: "initial" })
    const plan = Result.getOrThrow(planClose(session, { ...order, status: "requires_action" }, [collecting], "expired", T1))
    expect(plan.order?.next.status).toBe("canceled")
    expect(plan.transactions.map((t) => [t.status, t.decline_code])).toEqual([["canceled", "session_expired"]])
  })

  it("spec: card_payment_in_progress, \"A payment for the order is in progress\": a provider call not yet recorded blocks the end", () => {
    const { order, session } = fresh()
    const calling = attempt(order, { status: "processing", pending_call: { operation: "authorize", key: "k", at: T0 } })
    const plan = planClose(session, { ...order, status: "processing" }, [calling], "canceled", T1)
    expect(Result.isFailure(plan) && plan.failure.code).toBe("card_payment_in_progress")
  })

  it("spec: \"cancelling a completed session gives 409 invalid_session_state\"", () => {
    const { order, session } = fresh()
    const plan = planClose({ ...session, status: "completed" }, { ...order, status: "succeeded" }, [], "canceled", T1)
    expect(Result.isFailure(plan) && plan.failure.code).toBe("invalid_session_state")
  })

  it("a live session whose order already ended (the records disagree): the order's refusal is the plan's failure, never skipped", () => {
    const { order, session } = fresh()
    const plan = planClose(session, { ...order, status: "succeeded" }, [], "canceled", T1)
    expect(Result.isFailure(plan) && plan.failure._tag).toBe("InvalidOrderStatusTransition")
  })
})

describe("expiry (pure: isOverdue)", () => {
  it("spec: expired once expires_at passed, for a live session only", () => {
    const { session } = fresh()
    const at = Date.parse(session.expires_at)
    expect(isOverdue(session, at - 1)).toBe(false)
    expect(isOverdue(session, at)).toBe(true)
    expect(isOverdue({ ...session, status: "pending_action" }, at)).toBe(true)
    expect(isOverdue({ ...session, status: "canceled" }, at)).toBe(false)
  })
})

describe("hosted view (pure: hostedViewOf)", () => {
  it("attempts left, the last attempt's decline, the confined methods that route, and the account's card element settings", () => {
    const { order, session } = fresh({ ...request, payment_methods: ["card", "pix"], max_payment_attempts: 3 })
    const declined = attempt(order, { status: "failed", decline_code: "insufficient_funds" })
    const view = hostedViewOf({ ...session, attempts: 1 }, account, [declined])
    expect(view).toMatchObject({ merchant_name: "Shop", publishable_key: "pk_test_1", three_ds_display_mode: "inline", attempts_left: 2, last_decline: "insufficient_funds" })
    // pix routes for BRL in Brazil only: a USD session offers the card alone
    expect(view.methods.map((m) => m.code)).toEqual(["card"])
    expect(hostedViewOf({ ...session, attempts: 3 }, account, []).attempts_left).toBe(0)
    expect(hostedViewOf(session, account, [attempt(order, { status: "processing" })]).last_decline).toBeNull()
  })
})
