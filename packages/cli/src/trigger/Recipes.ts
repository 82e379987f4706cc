/**
 * How `tender trigger EVENT` makes each event happen: a recipe of signed calls to the public API of
 * a test-mode account (the sandbox's test cards and test helpers, contract.md "Sandbox (test mode)
 * provider"), never a write to the database. A recipe returns what it made once the object the
 * event is about has reached the status that records the event; where that comes later (a session's
 * expiry), it polls the public read, for at most `WAIT_MS`.
 */
import { Data, Effect } from "effect"
import type { ApiAccessFailure } from "../ApiAccess.ts"
import type { EventType } from "./Events.ts"

/** One object a recipe made: what it is, its id, its status when the recipe ended. */
export interface Made {
  readonly kind: "card_token" | "payment" | "capture" | "void" | "checkout_session" | "refund" | "payout" | "transfer" | "transfer_order"
  readonly id: string
  readonly status: string
}

/** An API call answered with something else than 2xx: the envelope's code and message. */
export class ApiRefused extends Data.TaggedError("ApiRefused")<{
  readonly code: string
  readonly message: string
}> {}

/** What a recipe can do: a signed call through the public API that answered 2xx (its body). */
export type Call = (method: "GET" | "POST", path: string, body?: unknown) => Effect.Effect<any, ApiRefused | ApiAccessFailure>

/** How long a recipe waits at most for an object to reach the status that fires its event. */
export const WAIT_MS = 30_000
const POLL_MS = 250

/** A fresh merchant reference per object: the run's random part, the event and a counter. */
const referencesOf = (event: EventType) => {
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`
  let n = 0
  return (label: string) => `trigger-${event}-${label}-${run}-${++n}`
}

const kitOf = (call: Call, event: EventType) => {
  const reference = referencesOf(event)
  const expYear = new Date().getUTCFullYear() + 3

  const cardToken = (number: string) =>
    Effect.map(
      call("POST", "/v1/test_helpers/card_tokens", { number, exp_month: 12, exp_year: expYear, cvc: "123", holder_name: "Tender Trigger" }),
      (card): Made => ({ kind: "card_token", id: card.token, status: `${card.brand} ${card.last4}` })
    )

  /** A card payment on a token: merchant-initiated (authorizes in the create), unless `body` says otherwise. */
  const cardPayment = (number: string, body: Record<string, unknown> = {}, details: Record<string, unknown> = { stored_credential: { initiator: "merchant", reason: "unscheduled" } }) =>
    Effect.gen(function*() {
      const token = yield* cardToken(number)
      const payment = yield* call("POST", "/v1/payments", {
        amount: "25.00",
        currency: "USD",
        country: "US",
        merchant_reference: reference("payment"),
        payment_method: { code: "card", details: { card_token: token.id, ...details } },
        ...body
      })
      return { payment, made: [token, paymentMade(payment)] as ReadonlyArray<Made> }
    })

  const cryptoPayment = () => Effect.map(
    call("POST", "/v1/payments", {
      amount: "30.00",
      currency: "USD",
      country: "US",
      merchant_reference: reference("payment"),
      payment_method: { code: "crypto" },
      success_url: "https://merchant.invalid/ok",
      cancel_url: "https://merchant.invalid/cancel"
    }),
    (payment) => payment as { order_id: string; status: string }
  )

  const simulate = (orderId: string, body: Record<string, unknown>) => call("POST", `/v1/test_helpers/orders/${orderId}/simulate`, body)

  const session = (body: Record<string, unknown> = {}) =>
    call("POST", "/v1/checkout/sessions", {
      amount: "20.00",
      currency: "USD",
      country: "US",
      merchant_reference: reference("session"),
      payment_methods: ["card"],
      success_url: "https://merchant.invalid/ok",
      cancel_url: "https://merchant.invalid/cancel",
      ...body
    })

  const attempt = (sessionId: string, number: string) =>
    call("POST", `/v1/test_helpers/checkout/sessions/${sessionId}/attempt`, {
      payment_method: { code: "card", details: { card: { number, exp_month: 12, exp_year: expYear, cvc: "123" } } }
    })

  /** Reads `path` until the object has `status` (the one that records the event), for at most WAIT_MS. */
  const until = (path: string, status: string, what: string) =>
    Effect.gen(function*() {
      const deadline = Date.now() + WAIT_MS
      for (;;) {
        const json = yield* call("GET", path)
        if (json.status === status) return json
        if (Date.now() > deadline) {
          return yield* new ApiRefused({ code: "timeout", message: `${what} is still ${json.status} after ${WAIT_MS / 1000} s, not ${status}` })
        }
        yield* Effect.sleep(POLL_MS)
      }
    })

  /**
   * A refund or payout of a payment on the card whose money settles later (0341): it stays pending
   * at the sandbox for about 2 s, which the simulate test helper ends with the provider's refusal.
   * The settlement worker may win that race on a loaded machine (the helper then answers 409
   * payment_unexpected_state): the recipe starts over on new objects, three times at most.
   */
  const failedOutflow = (kind: "refund" | "payout") =>
    Effect.gen(function*() {
      const { made, payment } = yield* cardPayment("4000000000000341")
      const path = kind === "refund" ? "/v1/refunds" : "/v1/payouts"
      const created = yield* call("POST", path, { order_id: payment.order_id, amount: "10.00" })
      yield* simulate(payment.order_id, { outcome: "fail" })
      const ended = yield* call("GET", `${path}/${created.id}`)
      return [...made, { kind, id: ended.id, status: ended.status }] as ReadonlyArray<Made>
    }).pipe(
      Effect.retry({ times: 2, while: (e) => e._tag === "ApiRefused" && e.code === "payment_unexpected_state" })
    )

  const manual = (number: string) => cardPayment(number, { capture_method: "manual", amount: "100.00" })

  /**
   * A bank transfer. One the sandbox refuses answers 409 with the provider's code and is recorded
   * failed; the answer names no object, so its order (by reference) stands for it.
   */
  const transfer = (accountNumber: string) => {
    const merchantReference = reference("transfer")
    return call("POST", "/v1/transfers", {
      amount: "15.00",
      currency: "USD",
      country: "US",
      merchant_reference: merchantReference,
      payment_method: { code: "bank_transfer", details: { account_number: accountNumber, bank_code: "021000021", holder_name: "Tender Trigger" } }
    }).pipe(
      Effect.map((t): ReadonlyArray<Made> => [{ kind: "transfer", id: t.id, status: t.status }]),
      Effect.catchIf(
        (e) => e._tag === "ApiRefused" && e.code === "transfer_destination_not_registered",
        () =>
          Effect.map(call("GET", `/v1/orders/by-reference/${encodeURIComponent(merchantReference)}`), (order): ReadonlyArray<Made> => [
            { kind: "transfer_order", id: order.id, status: order.status }
          ])
      )
    )
  }

  return { call, cardPayment, cryptoPayment, simulate, session, attempt, until, failedOutflow, manual, transfer }
}

const paymentMade = (payment: { order_id: string; status: string }): Made => ({ kind: "payment", id: payment.order_id, status: payment.status })
const sessionMade = (session: { id: string; status: string }): Made => ({ kind: "checkout_session", id: session.id, status: session.status })

type Kit = ReturnType<typeof kitOf>

/**
 * A recipe: what it makes, and the status its last object (the one the event is about) has once the
 * event is recorded; another status means the event did not happen, and the command says so.
 */
interface Recipe {
  readonly fires: string
  readonly make: (kit: Kit) => Effect.Effect<ReadonlyArray<Made>, ApiRefused | ApiAccessFailure>
}

const made = (p: { readonly made: ReadonlyArray<Made> }) => p.made

/** The crypto payment of the mismatch recipes, after the simulated arrival of `received`. */
const mismatch = (kit: Kit, outcome: "underpay" | "overpay", received: string) =>
  Effect.gen(function*() {
    const payment = yield* kit.cryptoPayment()
    const order = yield* kit.simulate(payment.order_id, { outcome, amount: received })
    return { orderId: payment.order_id, made: [{ kind: "payment", id: payment.order_id, status: order.status }] as ReadonlyArray<Made> }
  })

/** A manual-capture authorization, then `step` on it (capture or void), shown as its own row. */
const onAuthorization = (kit: Kit, number: string, kind: "capture" | "void", path: string, body: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const authorization = yield* kit.manual(number)
    const answer = yield* kit.call("POST", path, { order_id: authorization.payment.order_id, ...body })
    return [...authorization.made, { kind, id: answer.transaction_id, status: answer.status }]
  })

/** A session created with `body`, then `step` on it; the session as `step` left it. */
const onSession = (kit: Kit, body: Record<string, unknown>, step: (id: string) => Effect.Effect<any, ApiRefused | ApiAccessFailure>) =>
  Effect.gen(function*() {
    const created = yield* kit.session(body)
    return [sessionMade(yield* step(created.id))]
  })

/** A card payment, then a refund or payout of 10.00 of it. */
const outflow = (kit: Kit, kind: "refund" | "payout") =>
  Effect.gen(function*() {
    const { made, payment } = yield* kit.cardPayment("4242424242424242")
    const created = yield* kit.call("POST", kind === "refund" ? "/v1/refunds" : "/v1/payouts", { order_id: payment.order_id, amount: "10.00" })
    return [...made, { kind, id: created.id, status: created.status }]
  })

/** One recipe per event type: the compiler holds the table to the domain's list. */
const RECIPES: Record<EventType, Recipe> = {
  "payment.succeeded": { fires: "completed", make: (kit) => Effect.map(kit.cardPayment("4242424242424242"), made) },
  "payment.failed": { fires: "failed", make: (kit) => Effect.map(kit.cardPayment("4000000000000002"), made) },
  // A customer-present charge with collect_cvv: false authorizes at once, so the issuer's challenge is
  // the merchant server's to show (merchant-initiated charges are never challenged).
  "payment.requires_action": {
    fires: "requires_action",
    make: (kit) =>
      Effect.map(
        kit.cardPayment("4000000000003220", { collect_cvv: false, success_url: "https://merchant.invalid/ok", cancel_url: "https://merchant.invalid/cancel" }, {}),
        made
      )
  },
  "payment.authorized": { fires: "authorized", make: (kit) => Effect.map(kit.manual("4242424242424242"), made) },
  // A capture's row shows the payment's status after it: a part captured leaves it authorized.
  "payment.partially_captured": {
    fires: "authorized",
    make: (kit) => onAuthorization(kit, "4242424242424242", "capture", "/v1/payments/capture", { amount: "40.00", final: false })
  },
  "payment.capture_failed": { fires: "failed", make: (kit) => onAuthorization(kit, "4000000000000259", "capture", "/v1/payments/capture") },
  "payment.canceled": { fires: "canceled", make: (kit) => onAuthorization(kit, "4242424242424242", "void", "/v1/payments/void") },
  // The order waits for the merchant's decision on the mismatch (spec: stays processing).
  "payment.underpaid": { fires: "processing", make: (kit) => Effect.map(mismatch(kit, "underpay", "10.00"), made) },
  "payment.overpaid": { fires: "processing", make: (kit) => Effect.map(mismatch(kit, "overpay", "40.00"), made) },
  "payment.returned": {
    fires: "returned",
    make: (kit) =>
      Effect.gen(function*() {
        const { orderId } = yield* mismatch(kit, "underpay", "10.00")
        const order = yield* kit.call("POST", `/v1/orders/${orderId}/amount_mismatch_decision`, {
          decision: "decline",
          refund_destination: { address: "tb1qtendertriggerrefund0000000000000000" }
        })
        return [{ kind: "payment", id: orderId, status: order.status }]
      })
  },
  "checkout.session.completed": { fires: "completed", make: (kit) => onSession(kit, {}, (id) => kit.attempt(id, "4242424242424242")) },
  // The server's clock decides; 3 s ahead of ours leaves room for a small skew and the request. A read
  // applies the expiry once expires_at has passed (or the sweeper did already): poll it.
  "checkout.session.expired": {
    fires: "expired",
    make: (kit) =>
      onSession(kit, { expires_at: new Date(Date.now() + 3_000).toISOString() }, (id) =>
        kit.until(`/v1/checkout/sessions/${id}`, "expired", `checkout session ${id}`))
  },
  "checkout.session.failed": { fires: "failed", make: (kit) => onSession(kit, { max_payment_attempts: 1 }, (id) => kit.attempt(id, "4000000000000002")) },
  "checkout.session.canceled": { fires: "canceled", make: (kit) => onSession(kit, {}, (id) => kit.call("POST", `/v1/checkout/sessions/${id}/cancel`)) },
  "refund.succeeded": { fires: "succeeded", make: (kit) => outflow(kit, "refund") },
  "refund.failed": { fires: "failed", make: (kit) => kit.failedOutflow("refund") },
  "payout.succeeded": { fires: "succeeded", make: (kit) => outflow(kit, "payout") },
  "payout.failed": { fires: "failed", make: (kit) => kit.failedOutflow("payout") },
  "transfer.succeeded": { fires: "succeeded", make: (kit) => kit.transfer("000123456789") },
  "transfer.failed": { fires: "failed", make: (kit) => kit.transfer("000123450000") }
}

/**
 * Makes `event` happen through `call`: what it made, in the order it made it, once the object the
 * event is about has the status that records it.
 */
export const run = (event: EventType, call: Call) =>
  Effect.flatMap(RECIPES[event].make(kitOf(call, event)), (objects) => {
    const last = objects[objects.length - 1]!
    const fires = RECIPES[event].fires
    return last.status === fires ? Effect.succeed(objects) : Effect.fail(new ApiRefused({
      code: "event_not_fired",
      message: `${last.kind} ${last.id} is ${last.status}, not ${fires}: ${event} did not happen`
    }))
  })
