/**
 * Every payment operation (packages/domain/src/operations) called through its use case, over the
 * in-memory adapters, in-process locks and the sandbox provider: no HTTP. Each test builds its own
 * world (fresh storage) under the TestClock, so the workers' rounds (settleDue, expireWindows,
 * reconcileDue) see only that test's payments and time moves only when a test moves it.
 *
 * The domain package cannot import the adapters, so these domain tests live here.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type Account,
  Accounts,
  type AuthorizeResult,
  type CaptureResult,
  CardTokens,
  CheckoutSessionRepo,
  Errors,
  EventRepo,
  type LookupResult,
  OrderRepo,
  Outbox,
  PaymentProvider,
  type PaymentRequest,
  Payments,
  PublicUrl,
  Sessions,
  type StartResult,
  TransactionRepo,
  type Unknown,
  type VoidResult
} from "@tender/domain"
import { Clock, Deferred, Effect, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { memoryStorage } from "../src/Infrastructure.ts"
import * as LocksMemory from "../src/locks/LocksMemory.ts"
import * as PaymentProviderSandbox from "../src/providers/sandbox/PaymentProviderSandbox.ts"
import * as SandboxLedgerMemory from "../src/providers/sandbox/SandboxLedgerMemory.ts"
import * as ChannelProviders from "../src/providers/channels/ChannelProviders.ts"

// --- the world ------------------------------------------------------------------------------

const PUBLIC_URL = "http://tender.test"
/** A fixed "now", so card expiry years and payment windows read like real ones. */
const START = Date.parse("2026-11-26T03:00:00.000Z")
const HOUR = 60 * 60 * 1000
const DAY = 24 * HOUR

const sandbox = PaymentProviderSandbox.make({ publicUrl: PUBLIC_URL }, SandboxLedgerMemory.make())

type Operation = "authorize" | "capture" | "void" | "start"

/**
 * What the test provider does with a call of each operation:
 *   answer — the sandbox's answer, as is;
 *   lose   — the sandbox applies the call, but its answer is lost on the way back (`Unknown`);
 *   drop   — the call never reaches the sandbox, and the caller hears `Unknown` all the same;
 *   refuse — the provider is definitely unreachable (a refused connection): `ProviderUnavailable`.
 */
type Fate = "answer" | "lose" | "drop" | "refuse"

/**
 * The test's handle on its provider: fates per operation; what the sandbox really answered, by
 * idempotency key (the provider's memory, which `lookup` reads); the keys `lookup` fenced; whether
 * `lookup` is reachable; and two optional waits of card authorizations, to hold one in flight:
 * `gate` before the call reaches the provider, `hold` after the provider applied it.
 */
interface Tap {
  readonly fates: Partial<Record<Operation, Fate>>
  readonly answered: Map<string, LookupResult>
  /** The keys of the calls that reached the provider, in order. */
  readonly calls: Array<string>
  readonly fenced: Set<string>
  lookupDown: boolean
  gate?: Effect.Effect<void>
  hold?: Effect.Effect<void>
}

const tap = (fates: Tap["fates"] = {}): Tap => ({ fates, answered: new Map(), calls: [], fenced: new Set(), lookupDown: false })

const lost: Unknown = { _tag: "Unknown", reason: "test" }

/**
 * The sandbox behind a tap. It keeps the port's contract (PaymentPorts.ts): a key `lookup` reported
 * NotReceived is fenced, and a later call with it fails with ProviderUnavailable.
 */
const tapped = (t: Tap): PaymentProvider["Service"] => {
  const through = <A extends { readonly _tag: string }>(
    operation: Operation,
    key: string,
    call: Effect.Effect<A | Unknown, Errors.ProviderUnavailable>,
    remember: (answer: A) => LookupResult
  ) =>
    Effect.gen(function*() {
      if (operation === "authorize" && t.gate !== undefined) yield* t.gate
      if (t.fenced.has(key)) return yield* new Errors.ProviderUnavailable({ message: `key ${key} was fenced by a lookup (test)` })
      const fate = t.fates[operation] ?? "answer"
      if (fate === "drop") return lost
      if (fate === "refuse") return yield* new Errors.ProviderUnavailable({ message: "connection refused (test)" })
      t.calls.push(key)
      const answer = yield* call
      if (answer._tag !== "Unknown") t.answered.set(key, remember(answer as A))
      if (operation === "authorize" && t.hold !== undefined) yield* t.hold
      return fate === "lose" ? lost : answer
    })
  return PaymentProvider.of({
    ...sandbox,
    authorizeCard: (request) =>
      through<AuthorizeResult>("authorize", request.idempotency_key, sandbox.authorizeCard(request), (result) => ({ _tag: "Authorize", result })),
    captureCard: (request) =>
      through<CaptureResult>("capture", request.idempotency_key, sandbox.captureCard(request), (result) => ({ _tag: "Capture", result })),
    voidCard: (request) => through<VoidResult>("void", request.idempotency_key, sandbox.voidCard(request), (result) => ({ _tag: "Void", result })),
    startPayment: (request) =>
      through<StartResult>("start", request.idempotency_key, sandbox.startPayment(request), (result) => ({ _tag: "Start", result })),
    lookup: (key) =>
      Effect.suspend(() => {
        if (t.lookupDown) return Effect.fail(new Errors.ProviderUnavailable({ message: "the provider's lookup is unreachable (test)" }))
        const known = t.answered.get(key)
        if (known !== undefined) return Effect.succeed(known)
        t.fenced.add(key)
        return Effect.succeed<LookupResult>({ _tag: "NotReceived" })
      })
  })
}

/** Memory storage, in-process locks, the (tapped) sandbox, and the use cases over them. */
const world = (t: Tap = tap(), provider: PaymentProvider["Service"] = tapped(t)) => {
  const ports = Layer.mergeAll(
    memoryStorage,
    LocksMemory.layer,
    Layer.succeed(PaymentProvider, provider),
    Layer.succeed(PublicUrl, PUBLIC_URL)
  ).pipe(Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer)))
  const routed = ChannelProviders.layer({ publicUrl: PUBLIC_URL }).pipe(Layer.provideMerge(ports))
  return Sessions.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Accounts.layer, CardTokens.layer, Payments.layer)),
    Layer.provideMerge(Outbox.layer),
    Layer.provideMerge(routed)
  )
}

// --- helpers --------------------------------------------------------------------------------

let seq = 0
const ref = (label: string) => `${label}-${++seq}`
const urls = { success_url: "https://merchant.example/ok", cancel_url: "https://merchant.example/cancel" }

/**
 * The TestClock stands still unless moved, and ids are random: rows created in the same instant
 * would list in any order (storage orders by created_at, then id). Real calls never share an
 * instant; a test moves the clock between operations whose order it reads back.
 */
const later = TestClock.adjust("1 second")

/**
 * Reconciliation as another process runs it: the same storage and provider, its own in-process
 * locks (this process's order lock cannot keep it off a call still in flight here).
 */
const reconcileElsewhere = (options: Parameters<Payments["Service"]["reconcileDue"]>[0]) =>
  Effect.flatMap(payments, (p) => p.reconcileDue(options)).pipe(Effect.provide(Layer.fresh(Payments.layer).pipe(Layer.provide(Layer.fresh(LocksMemory.layer)))))

/** The clock at START and a fresh test-mode account. */
const merchant = Effect.gen(function*() {
  yield* TestClock.setTime(START)
  const accounts = yield* Accounts
  const created = yield* accounts.create({ name: "operations", mode: "test" })
  return yield* accounts.get(created.account_id)
}).pipe(Effect.orDie)

type CreatePaymentInput = PaymentRequest.CreatePaymentInput

const tokenize = (account: Account.Account, number: string) =>
  Effect.gen(function*() {
    const cards = yield* CardTokens
    const cvc = number.startsWith("37") ? "1234" : "123"
    return (yield* cards.tokenize(account, { number, exp_month: 12, exp_year: 2030, cvc, holder_name: "Ada Lovelace" })).token
  }).pipe(Effect.orDie)

const payments = Effect.gen(function*() {
  return yield* Payments
})

const sessionsService = Effect.gen(function*() {
  return yield* Sessions
})

const create = (account: Account.Account, input: CreatePaymentInput) => Effect.flatMap(payments, (p) => p.create(account, input))

/** A merchant-initiated card charge: authorizes in the create itself. */
const charge = (account: Account.Account, number: string, extra: Partial<CreatePaymentInput> = {}) =>
  Effect.gen(function*() {
    const token = yield* tokenize(account, number)
    return yield* create(account, {
      amount: "100.00",
      currency: "USD",
      country: "US",
      merchant_reference: ref("charge"),
      payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } },
      ...extra
    })
  }).pipe(Effect.ensuring(later))

const authorize = (account: Account.Account, number: string) => charge(account, number, { capture_method: "manual" })

/** A local-method payment (pix needs a CPF and the shopper's IP). */
const local = (account: Account.Account, code: "paypal" | "pix" | "crypto") =>
  create(account, {
    ...urls,
    merchant_reference: ref(code),
    ...(code === "pix"
      ? { amount: "50.00", currency: "BRL", country: "BR", payment_method: { code, details: { document_id: "123.456.789-09" } }, customer: { ip: "200.1.2.3" } }
      : { amount: "50.00", currency: "USD", country: "US", payment_method: { code } })
  })

/** What storage holds for an order: its row, its transactions (oldest first), its events' types in order. */
const stored = (orderId: string) =>
  Effect.gen(function*() {
    const order = Option.getOrThrow(yield* (yield* OrderRepo).findAny(orderId))
    const txns = yield* (yield* TransactionRepo).listByOrder(orderId)
    const events = yield* (yield* EventRepo).listByOrder(orderId)
    return { order, txns, txn: txns[txns.length - 1]!, events: events.map((e) => e.type), payloads: events }
  })

const sessionOf = (id: string) =>
  Effect.gen(function*() {
    return Option.getOrThrow(yield* (yield* CheckoutSessionRepo).findAny(id))
  })

/**
 * A payment_unexpected_state refusal: the spec says its message names the verb, the current status
 * and the expected one.
 */
const expectUnexpectedState = <A, E extends { readonly code: string; readonly message: string }, R>(
  effect: Effect.Effect<A, E, R>,
  verb: string,
  current: string
) =>
  Effect.gen(function*() {
    const error = yield* Effect.flip(effect)
    expect(error.code).toBe("payment_unexpected_state")
    expect(error.message).toContain(verb)
    expect(error.message).toContain(current)
    expect(error.message).toContain("authorized")
  })

/** A wait a test opens: `reached` once a call waits on it, `open` lets it through. */
const barrier = Effect.gen(function*() {
  const reached = yield* Deferred.make<void>()
  const opened = yield* Deferred.make<void>()
  return {
    wait: Effect.andThen(Deferred.succeed(reached, undefined), Deferred.await(opened)),
    reached: Deferred.await(reached),
    open: Deferred.succeed(opened, undefined)
  }
})

/** The spec's error code an operation failed with. */
const codeOf = <A, E extends { readonly code: string }, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), (e) => e.code)

const newSession = (account: Account.Account, input: { readonly methods: ReadonlyArray<string>; readonly currency?: string; readonly country?: string; readonly max?: number }) =>
  Effect.flatMap(sessionsService, (s) =>
    s.create(account, {
      amount: "30.00",
      currency: input.currency ?? "USD",
      ...(input.country !== undefined ? { country: input.country } : {}),
      merchant_reference: ref("session"),
      payment_methods: input.methods,
      max_payment_attempts: input.max ?? 2,
      ...urls
    })).pipe(Effect.orDie)

const payCard = (sessionId: string, token: string) =>
  Effect.flatMap(payments, (p) => p.attemptSession(sessionId, { payment_method: { code: "card", details: { card_token: token } } })).pipe(
    Effect.ensuring(later)
  )

// --- create -----------------------------------------------------------------------------------

describe("create", () => {
  it.effect("merchant-initiated, approved: completed at once; the order succeeded; payment.succeeded", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const paid = yield* charge(account, "4242424242424242")
      expect(paid).toMatchObject({ status: "completed", next_action: null, amount: 100, provider_transaction_id: expect.any(String) })
      const { order, txns, events } = yield* stored(paid.order_id)
      expect(order.status).toBe("succeeded")
      expect(txns.map((t) => [t.kind, t.status, t.pending_call])).toEqual([["payment", "completed", null]])
      expect(events).toEqual(["payment.succeeded"])
    }).pipe(Effect.provide(world())))

  it.effect("merchant-initiated, declined: failed with the card's decline code; payment.failed", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const paid = yield* charge(account, "4000000000000002")
      expect(paid).toMatchObject({ status: "failed", next_action: null, provider_transaction_id: null })
      const { order, txn, events } = yield* stored(paid.order_id)
      expect(order.status).toBe("failed")
      expect([txn.status, txn.decline_code]).toEqual(["failed", "card_declined"])
      expect(events).toEqual(["payment.failed"])
    }).pipe(Effect.provide(world())))

  it.effect("provider unreachable (4000000000000119): provider_unavailable, the attempt recorded as failed, the order pending for a retry, no payment.failed", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const reference = ref("unreachable")
      expect(yield* codeOf(charge(account, "4000000000000119", { merchant_reference: reference }))).toBe("provider_unavailable")
      const order = Option.getOrThrow(yield* (yield* OrderRepo).findByReference(account.id, reference))
      const { txn, events } = yield* stored(order.id)
      expect([order.status, order.retry_until]).toEqual(["pending", new Date(START + DAY).toISOString()])
      expect([txn.status, txn.decline_code, txn.pending_call]).toEqual(["failed", "provider_unavailable", null])
      expect(events).toEqual([])
    }).pipe(Effect.provide(world())))

  it.effect("a saved card with the customer present: collect_cvv with a 15-minute client secret, nothing sent", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const token = yield* tokenize(account, "4242424242424242")
      const paid = yield* create(account, {
        amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("cvv"),
        payment_method: { code: "card", details: { card_token: token } }
      })
      expect(paid.status).toBe("requires_action")
      expect(paid.next_action).toMatchObject({ type: "collect_cvv", client_secret: expect.stringContaining(paid.order_id) })
      expect(Date.parse(paid.next_action!.expires_at!) - START).toBe(15 * 60 * 1000)
      const { order, txn, events } = yield* stored(paid.order_id)
      expect([order.status, txn.status, txn.pending_call]).toEqual(["requires_action", "initial", null])
      expect(events).toEqual(["payment.requires_action"])
    }).pipe(Effect.provide(world())))

  it.effect("a card without a token: collect_card", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const paid = yield* create(account, { ...urls, amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("card"), payment_method: { code: "card" } })
      expect(paid).toMatchObject({ status: "requires_action", next_action: { type: "collect_card" } })
      const { order, txn } = yield* stored(paid.order_id)
      expect([order.status, txn.status]).toEqual(["requires_action", "initial"])
    }).pipe(Effect.provide(world())))

  it.effect("a local method (pix): a qr next action closing in 30 minutes; sent to the provider, awaiting the customer", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const paid = yield* local(account, "pix")
      expect(paid.status).toBe("requires_action")
      expect(paid.next_action).toMatchObject({ type: "qr", qr: { data: expect.any(String) } })
      expect(Date.parse(paid.next_action!.expires_at!) - START).toBe(30 * 60 * 1000)
      const { order, txn, events } = yield* stored(paid.order_id)
      expect([order.status, txn.status, txn.pending_call]).toEqual(["requires_action", "processing", null])
      expect(txn.expires_at).toBe(paid.next_action!.expires_at)
      expect(events).toEqual(["payment.requires_action"])
    }).pipe(Effect.provide(world())))

  it.effect("the same merchant_reference while the first create is at the provider: duplicate_merchant_reference_id, one call", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const gate = yield* barrier
      t.gate = gate.wait
      const reference = ref("dup")
      const first = yield* Effect.forkChild(charge(account, "4242424242424242", { merchant_reference: reference }))
      yield* gate.reached
      expect(yield* codeOf(charge(account, "4242424242424242", { merchant_reference: reference }))).toBe("duplicate_merchant_reference_id")
      yield* gate.open
      const paid = yield* Fiber.join(first)
      expect(paid.status).toBe("completed")
      expect(t.calls).toHaveLength(1)
      expect((yield* stored(paid.order_id)).events).toEqual(["payment.succeeded"])
    }).pipe(Effect.provide(world(t)))
  })
})

// --- provider_transaction_id ------------------------------------------------------------------

describe("a create answered 502, retried (contract.md, Idempotency)", () => {
  /** A merchant-initiated charge's request on a stored card: the same input is the same request. */
  const request = (token: string, reference: string): CreatePaymentInput => ({
    amount: "100.00",
    currency: "USD",
    country: "US",
    merchant_reference: reference,
    payment_method: { code: "card", details: { card_token: token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
  })

  /** The provider refuses connections for the first create: 502, the order left for the retry. */
  const unreachableFirst = (t: Tap, account: Account.Account) =>
    Effect.gen(function*() {
      const input = request(yield* tokenize(account, "4242424242424242"), ref("retry"))
      t.fates.authorize = "refuse"
      const error = yield* Effect.flip(create(account, input))
      expect([error.code, error.message]).toEqual(["provider_unavailable", expect.stringContaining("Retry the same request")])
      yield* later
      t.fates.authorize = "answer"
      const order = Option.getOrThrow(yield* (yield* OrderRepo).findByReference(account.id, input.merchant_reference!))
      return { input, order }
    })

  it.effect("\"a create answered 502 … may be retried: the same body with the same reference attempts again on the same order (a new transaction) and answers as a first create would; no payment.failed is emitted for a 502\"", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const { input, order } = yield* unreachableFirst(t, account)
      const first = yield* stored(order.id)
      expect([first.order.status, first.txns.map((x) => [x.status, x.decline_code]), first.events]).toEqual([
        "pending",
        [["failed", "provider_unavailable"]],
        []
      ])

      // Key order is no part of "the same body".
      const { payment_method, ...rest } = input
      const retried = yield* create(account, { payment_method, ...rest })
      expect(retried).toMatchObject({ order_id: order.id, status: "completed", merchant_reference: input.merchant_reference })
      expect(retried.transaction_id).not.toBe(first.txn.id)
      const after = yield* stored(order.id)
      expect([after.order.status, after.order.retry_until]).toEqual(["succeeded", null])
      expect(after.txns.map((x) => [x.id, x.status, x.decline_code])).toEqual([
        [first.txn.id, "failed", "provider_unavailable"],
        [retried.transaction_id, "completed", null]
      ])
      expect(after.events).toEqual(["payment.succeeded"])
      // One call reached the provider, under the new transaction's key.
      expect(t.calls).toEqual([`${retried.transaction_id}:authorize`])
      // Now the reference is a payment's like any other: the same request again is 409.
      expect(yield* codeOf(create(account, input))).toBe("duplicate_merchant_reference_id")
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("\"The same reference with another body is 409 duplicate_merchant_reference_id\": nothing changes, the same request still retries", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const { input, order } = yield* unreachableFirst(t, account)
      for (const other of [{ ...input, amount: "100.01" }, { ...input, capture_method: "manual" }, { ...input, customer: { email: "ada@example.com" } }]) {
        const refused = yield* Effect.flip(create(account, other))
        expect([refused.code, refused.message]).toEqual(["duplicate_merchant_reference_id", expect.stringContaining("/v1/orders/by-reference/")])
      }
      // Another body is refused before it is validated, as for any taken reference.
      expect(yield* codeOf(create(account, { ...input, amount: "not money" }))).toBe("duplicate_merchant_reference_id")
      const unchanged = yield* stored(order.id)
      expect([unchanged.order.status, unchanged.txns.length, unchanged.events]).toEqual(["pending", 1, []])
      expect(t.calls).toEqual([])
      expect(yield* create(account, input)).toMatchObject({ order_id: order.id, status: "completed" })
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("a retry that finds the provider unreachable again: 502 again, a second failed transaction, the window renewed, still no payment.failed", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const { input, order } = yield* unreachableFirst(t, account)
      yield* TestClock.adjust("2 hours")
      t.fates.authorize = "refuse"
      expect(yield* codeOf(create(account, input))).toBe("provider_unavailable")
      const { order: again, txns, events } = yield* stored(order.id)
      expect([again.status, again.retry_until]).toEqual(["pending", new Date(START + 1000 + 2 * HOUR + DAY).toISOString()])
      expect(txns.map((x) => [x.status, x.decline_code])).toEqual([["failed", "provider_unavailable"], ["failed", "provider_unavailable"]])
      expect(events).toEqual([])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("no retry within the window (a day): the window-expiry worker fails the order with payment.failed (provider_unavailable); the request is then 409", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const { input, order } = yield* unreachableFirst(t, account)
      const p = yield* payments
      yield* TestClock.adjust(DAY - 2000)
      expect(yield* p.expireWindows()).toBe(0)
      expect((yield* stored(order.id)).order.status).toBe("pending")
      // Past the window, before the worker's round: no longer a retry.
      yield* TestClock.adjust("1 second")
      expect(yield* codeOf(create(account, input))).toBe("duplicate_merchant_reference_id")
      expect(yield* p.expireWindows()).toBe(1)
      const { order: failed, txns, events, payloads } = yield* stored(order.id)
      expect([failed.status, failed.retry_until, txns.length]).toEqual(["failed", null, 1])
      expect(events).toEqual(["payment.failed"])
      expect(payloads[0]!.data).toMatchObject({ order_id: order.id, transaction_id: txns[0]!.id, order_status: "failed", transaction_status: "failed", decline_code: "provider_unavailable" })
      expect(yield* p.expireWindows()).toBe(0)
      expect(yield* codeOf(create(account, input))).toBe("duplicate_merchant_reference_id")
      expect(t.calls).toEqual([])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("two retries at once: one claims the order and calls the provider; the other is 409 before any call", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const { input, order } = yield* unreachableFirst(t, account)
      const gate = yield* barrier
      t.gate = gate.wait
      const first = yield* Effect.forkChild(create(account, input))
      yield* gate.reached
      t.gate = undefined
      expect(yield* codeOf(create(account, input))).toBe("duplicate_merchant_reference_id")
      yield* gate.open
      expect(yield* Fiber.join(first)).toMatchObject({ order_id: order.id, status: "completed" })
      expect(t.calls).toHaveLength(1)
      expect((yield* stored(order.id)).txns).toHaveLength(2)
    }).pipe(Effect.provide(world(t)))
  })
})

describe("provider_transaction_id (spec Payment: settlement reference, null before settlement)", () => {
  it.effect("null on an authorized snapshot; set on the capture that settled it", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4242424242424242")
      expect(held).toMatchObject({ status: "authorized", provider_transaction_id: null })
      const captured = yield* (yield* payments).capture(account, { order_id: held.order_id })
      expect(captured.status).toBe("completed")
      expect(captured.provider_transaction_id).toEqual(expect.any(String))
      // The events say the same: none on payment.authorized; the capture's on payment.succeeded
      // (for manual capture the spec names it capture_provider_transaction_id).
      const { payloads } = yield* stored(held.order_id)
      expect(payloads.map((e) => e.type)).toEqual(["payment.authorized", "payment.succeeded"])
      expect(payloads[0]!.data.provider_transaction_id).toBeNull()
      expect(payloads[1]!.data.capture_provider_transaction_id).toBe(captured.provider_transaction_id)
    }).pipe(Effect.provide(world())))

  it.effect("null on a requires_action redirect; set once the payment completed", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const started = yield* local(account, "paypal")
      expect(started).toMatchObject({ status: "requires_action", next_action: { type: "redirect" }, provider_transaction_id: null })
      yield* (yield* payments).providerOutcome(started.transaction_id, "succeed")
      const { payloads } = yield* stored(started.order_id)
      expect(payloads.map((e) => [e.type, e.data.provider_transaction_id === null])).toEqual([
        ["payment.requires_action", true],
        ["payment.succeeded", false]
      ])
    }).pipe(Effect.provide(world())))
})

// --- payment_instrument -----------------------------------------------------------------------

describe("payment_instrument (spec: on every attempt on a stored instrument; on an order only once it succeeded)", () => {
  it.effect("a failed attempt carries it, its failed order none; the succeeded retry's order carries the final one", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const session = yield* newSession(account, { methods: ["card"], max: 2 })
      yield* payCard(session.id, yield* tokenize(account, "4000000000000002"))
      const declined = yield* stored(session.order_id)
      expect(declined.txn.payment_instrument).toMatchObject({ type: "card", last4_digits: "0002", holder_name: "Ada Lovelace" })
      expect(declined.order.payment_instrument).toBeNull()
      yield* payCard(session.id, yield* tokenize(account, "5555555555554444"))
      const paid = yield* stored(session.order_id)
      expect(paid.txns.map((t) => t.payment_instrument?.last4_digits)).toEqual(["0002", "4444"])
      expect(paid.order.payment_instrument).toMatchObject({ type: "card", last4_digits: "4444" })
    }).pipe(Effect.provide(world())))

  it.effect("manual capture: none on the authorized order, the card once the capture settled it", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4242424242424242")
      expect((yield* stored(held.order_id)).order.payment_instrument).toBeNull()
      yield* (yield* payments).capture(account, { order_id: held.order_id })
      expect((yield* stored(held.order_id)).order.payment_instrument).toMatchObject({ type: "card", last4_digits: "4242" })
    }).pipe(Effect.provide(world())))

  it.effect("a redirect method carries none", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const started = yield* local(account, "paypal")
      yield* (yield* payments).providerOutcome(started.transaction_id, "succeed")
      const { order, txn, payloads } = yield* stored(started.order_id)
      expect([order.status, order.payment_instrument, txn.payment_instrument]).toEqual(["succeeded", null, null])
      expect(payloads.every((e) => !("payment_instrument" in e.data))).toBe(true)
    }).pipe(Effect.provide(world())))
})

// --- session attempts -------------------------------------------------------------------------

describe("attempt (checkout session)", () => {
  it.effect("a decline with attempts left: no payment.failed, the session stays open, the order pending", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const session = yield* newSession(account, { methods: ["card"], max: 2 })
      yield* payCard(session.id, yield* tokenize(account, "4000000000000002"))
      const { order, txns, events } = yield* stored(session.order_id)
      expect((yield* sessionOf(session.id)).status).toBe("open")
      expect(order.status).toBe("pending")
      expect(txns.map((t) => [t.status, t.decline_code])).toEqual([["failed", "card_declined"]])
      expect(events).toEqual([])
    }).pipe(Effect.provide(world())))

  it.effect("the provider unreachable (4000000000000119): a declined attempt on the session (provider_unavailable), retry left", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const session = yield* newSession(account, { methods: ["card"], max: 2 })
      yield* payCard(session.id, yield* tokenize(account, "4000000000000119"))
      const { order, txn, events } = yield* stored(session.order_id)
      expect((yield* sessionOf(session.id)).status).toBe("open")
      expect([order.status, txn.status, txn.decline_code, txn.pending_call]).toEqual(["pending", "failed", "provider_unavailable", null])
      expect(events).toEqual([])
    }).pipe(Effect.provide(world())))

  it.effect("the last permitted attempt declined: payment.failed, then checkout.session.failed", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const session = yield* newSession(account, { methods: ["card"], max: 2 })
      const declined = yield* tokenize(account, "4000000000000002")
      yield* payCard(session.id, declined)
      yield* payCard(session.id, yield* tokenize(account, "4000000000009995"))
      const { order, txns, events } = yield* stored(session.order_id)
      expect((yield* sessionOf(session.id)).status).toBe("failed")
      expect(order.status).toBe("failed")
      expect(txns.map((t) => t.decline_code)).toEqual(["card_declined", "insufficient_funds"])
      expect(events).toEqual(["payment.failed", "checkout.session.failed"])
      // A final session takes no further attempt.
      expect(yield* codeOf(payCard(session.id, declined))).toBe("invalid_session_state")
    }).pipe(Effect.provide(world())))

  it.effect("a retry that succeeds completes the session with its transaction", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const session = yield* newSession(account, { methods: ["card"], max: 2 })
      yield* payCard(session.id, yield* tokenize(account, "4000000000000002"))
      yield* payCard(session.id, yield* tokenize(account, "4242424242424242"))
      const { order, txns, events } = yield* stored(session.order_id)
      const after = yield* sessionOf(session.id)
      expect([after.status, after.transaction_id]).toEqual(["completed", txns[1]!.id])
      expect(order.status).toBe("succeeded")
      expect(events).toEqual(["payment.succeeded", "checkout.session.completed"])
    }).pipe(Effect.provide(world())))

  it.effect("past expires_at, the customer's attempt touches the session: expired, no transaction", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const session = yield* newSession(account, { methods: ["card"], max: 2 })
      yield* TestClock.setTime(Date.parse(session.expires_at))
      const sessions = yield* sessionsService
      const token = yield* tokenize(account, "4242424242424242")
      expect(yield* codeOf(sessions.attempt(account, session.id, { payment_method: { code: "card", details: { card_token: token } } })))
        .toBe("invalid_session_state")
      const { order, txns, events } = yield* stored(session.order_id)
      expect((yield* sessionOf(session.id)).status).toBe("expired")
      expect([order.status, txns.length]).toEqual(["canceled", 0])
      expect(events).toEqual(["checkout.session.expired"])
    }).pipe(Effect.provide(world())))

  it.effect("a second attempt while the first is at the provider: card_payment_in_progress, no second transaction", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const session = yield* newSession(account, { methods: ["card"], max: 3 })
      const token = yield* tokenize(account, "4242424242424242")
      const gate = yield* barrier
      t.gate = gate.wait
      const first = yield* Effect.forkChild(payCard(session.id, token))
      yield* gate.reached
      expect(yield* codeOf(payCard(session.id, yield* tokenize(account, "5555555555554444")))).toBe("card_payment_in_progress")
      const during = yield* stored(session.order_id)
      expect(during.txns).toHaveLength(1)
      expect(during.txn.pending_call).not.toBeNull()
      yield* gate.open
      yield* Fiber.join(first)
      const after = yield* stored(session.order_id)
      expect(after.txns.map((x) => x.status)).toEqual(["completed"])
      expect((yield* sessionOf(session.id))).toMatchObject({ status: "completed", attempts: 1 })
      expect(after.events).toEqual(["payment.succeeded", "checkout.session.completed"])
    }).pipe(Effect.provide(world(t)))
  })
})

// --- capture ----------------------------------------------------------------------------------

describe("capture", () => {
  it.effect("partial (final: false) then the remainder: partially_captured, then succeeded once", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4242424242424242")
      const p = yield* payments
      const part = yield* p.capture(account, { order_id: held.order_id, amount: "30.00", final: false })
      expect(part).toMatchObject({ status: "authorized", captured_amount: 30 })
      expect((yield* stored(held.order_id)).order.status).toBe("authorized")
      yield* later
      const rest = yield* p.capture(account, { order_id: held.order_id })
      expect(rest).toMatchObject({ status: "completed", captured_amount: 100 })
      const { order, txns, events, payloads } = yield* stored(held.order_id)
      expect(order.status).toBe("succeeded")
      expect(txns.map((t) => [t.kind, t.status, t.amount])).toEqual([
        ["authorization", "completed", 10000],
        ["capture", "completed", 3000],
        ["capture", "completed", 7000]
      ])
      expect(events).toEqual(["payment.authorized", "payment.partially_captured", "payment.succeeded"])
      // spec: a capture response carries the id of that capture
      expect([part.transaction_id, rest.transaction_id]).toEqual([txns[1]!.id, txns[2]!.id])
      // spec: payment.succeeded carries captured_amount, capture_transaction_id, capture_provider_transaction_id
      expect(payloads[2]!.data).toMatchObject({
        captured_amount: 100,
        capture_transaction_id: txns[2]!.id,
        capture_provider_transaction_id: txns[2]!.provider_transaction_id
      })
    }).pipe(Effect.provide(world())))

  it.effect("a final capture of part closes the authorization; a further capture is payment_unexpected_state", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4242424242424242")
      const p = yield* payments
      expect(yield* p.capture(account, { merchant_reference: held.merchant_reference, amount: "40.00" })).toMatchObject({ status: "completed", captured_amount: 40 })
      yield* expectUnexpectedState(p.capture(account, { order_id: held.order_id, amount: "10.00" }), "capture", "completed")
      const { order, txns, events } = yield* stored(held.order_id)
      expect(order.status).toBe("succeeded")
      expect(txns).toHaveLength(2)
      expect(events).toEqual(["payment.authorized", "payment.succeeded"])
    }).pipe(Effect.provide(world())))

  it.effect("refused by the provider: the capture failed, the authorization stands, payment.capture_failed", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4000000000000259")
      const refused = yield* (yield* payments).capture(account, { transaction_id: held.transaction_id })
      expect(refused).toMatchObject({ status: "failed", captured_amount: 0 })
      const { order, txn, events } = yield* stored(held.order_id)
      expect(order.status).toBe("authorized")
      expect([txn.kind, txn.status, txn.decline_code]).toEqual(["capture", "failed", "capture_refused"])
      expect(events).toEqual(["payment.authorized", "payment.capture_failed"])
    }).pipe(Effect.provide(world())))

  it.effect("accepted for later: settling (no settlement reference yet), then settled by settleDue exactly once", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4000000000000341")
      const p = yield* payments
      const settling = yield* p.capture(account, { order_id: held.order_id })
      expect(settling).toMatchObject({ status: "settling", provider_transaction_id: null })
      expect(yield* p.settleDue()).toBe(0)
      expect((yield* stored(held.order_id)).events).toEqual(["payment.authorized"])
      yield* TestClock.adjust(PaymentProviderSandbox.SETTLE_AFTER_MS)
      expect(yield* p.settleDue()).toBe(1)
      expect(yield* p.settleDue()).toBe(0)
      const { order, txn, events } = yield* stored(held.order_id)
      expect(order.status).toBe("succeeded")
      expect([txn.kind, txn.status]).toEqual(["capture", "completed"])
      expect(events).toEqual(["payment.authorized", "payment.succeeded"])
    }).pipe(Effect.provide(world())))

  it.effect("final: false reaching the authorized total closes the authorization all the same", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4242424242424242")
      expect(yield* (yield* payments).capture(account, { order_id: held.order_id, amount: "100.00", final: false }))
        .toMatchObject({ status: "completed", captured_amount: 100 })
      const { order, events } = yield* stored(held.order_id)
      expect(order.status).toBe("succeeded")
      expect(events).toEqual(["payment.authorized", "payment.succeeded"])
    }).pipe(Effect.provide(world())))

  it.effect("multicapture not granted (4000000000000044): the second capture fails multicapture_not_supported", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4000000000000044")
      const p = yield* payments
      yield* p.capture(account, { order_id: held.order_id, amount: "30.00", final: false })
      yield* later
      expect(yield* p.capture(account, { order_id: held.order_id, amount: "30.00", final: false })).toMatchObject({ status: "failed", captured_amount: 30 })
      const { order, txn, events } = yield* stored(held.order_id)
      expect(order.status).toBe("authorized")
      expect([txn.status, txn.decline_code]).toEqual(["failed", "multicapture_not_supported"])
      expect(events).toEqual(["payment.authorized", "payment.partially_captured", "payment.capture_failed"])
    }).pipe(Effect.provide(world())))

  it.effect("pre-flight: above or not within the authorized amount, above the remainder counting a settling capture", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4000000000000341")
      const p = yield* payments
      const target = { order_id: held.order_id, final: false }
      expect(yield* codeOf(p.capture(account, { ...target, amount: "100.01" }))).toBe("capture_amount_exceeds_authorized")
      expect(yield* codeOf(p.capture(account, { ...target, amount: "0" }))).toBe("capture_amount_exceeds_authorized")
      expect(yield* p.capture(account, { ...target, amount: "30.00" })).toMatchObject({ status: "settling" })
      expect(yield* codeOf(p.capture(account, { ...target, amount: "70.01" }))).toBe("capture_amount_exceeds_remaining")
      expect((yield* stored(held.order_id)).txns).toHaveLength(2)
    }).pipe(Effect.provide(world())))

  it.effect("a manual-capture checkout session: completed at authorization, payment.succeeded only at the capture", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const session = yield* Effect.flatMap(sessionsService, (s) =>
        s.create(account, { amount: "30.00", currency: "USD", merchant_reference: ref("manual-session"), capture_method: "manual", payment_methods: ["card"], ...urls }))
      yield* payCard(session.id, yield* tokenize(account, "4242424242424242"))
      expect((yield* sessionOf(session.id)).status).toBe("completed")
      const authorized = yield* stored(session.order_id)
      expect(authorized.events).toEqual(["payment.authorized", "checkout.session.completed"])
      // spec: the payload carries capture_method (manual when set), order_id, transaction_id
      expect(authorized.payloads[1]!.data).toMatchObject({ capture_method: "manual", order_id: session.order_id, transaction_id: authorized.txn.id })
      expect(yield* (yield* payments).capture(account, { order_id: session.order_id })).toMatchObject({ status: "completed", captured_amount: 30 })
      expect((yield* stored(session.order_id)).events).toEqual(["payment.authorized", "checkout.session.completed", "payment.succeeded"])
    }).pipe(Effect.provide(world())))

  it.effect("a capture's transaction id does not name the authorization: invalid_transaction_status", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4242424242424242")
      const p = yield* payments
      const part = yield* p.capture(account, { order_id: held.order_id, amount: "10.00", final: false })
      expect(yield* codeOf(p.capture(account, { transaction_id: part.transaction_id }))).toBe("invalid_transaction_status")
    }).pipe(Effect.provide(world())))
})

// --- void -------------------------------------------------------------------------------------

describe("void", () => {
  it.effect("nothing captured: the void transaction canceled, the order canceled, payment.canceled; a repeat is payment_unexpected_state", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4242424242424242")
      const p = yield* payments
      const voided = yield* p.void(account, { order_id: held.order_id })
      expect(voided).toMatchObject({ status: "canceled", voided_amount: 100 })
      const { order, txns, events } = yield* stored(held.order_id)
      expect(order.status).toBe("canceled")
      expect(txns.map((t) => [t.kind, t.status])).toEqual([["authorization", "completed"], ["void", "canceled"]])
      expect(voided.transaction_id).toBe(txns[1]!.id)
      expect(events).toEqual(["payment.authorized", "payment.canceled"])
      yield* expectUnexpectedState(p.void(account, { order_id: held.order_id }), "void", "canceled")
      expect((yield* stored(held.order_id)).events).toEqual(["payment.authorized", "payment.canceled"])
    }).pipe(Effect.provide(world())))

  it.effect("behind a settled partial capture: completed, the remainder released, payment.succeeded", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4242424242424242")
      const p = yield* payments
      yield* p.capture(account, { order_id: held.order_id, amount: "30.00", final: false })
      yield* later
      const voided = yield* p.void(account, { order_id: held.order_id })
      expect(voided).toMatchObject({ status: "completed", captured_amount: 30, voided_amount: 70 })
      const { order, txn, events } = yield* stored(held.order_id)
      expect(order.status).toBe("succeeded")
      expect([txn.kind, txn.status, txn.amount]).toEqual(["void", "canceled", 7000])
      expect(events).toEqual(["payment.authorized", "payment.partially_captured", "payment.succeeded"])
    }).pipe(Effect.provide(world())))

  /**
   * The sandbox, but what the provider says of a capture accepted for later is the test's `verdict`:
   * it may fail at the provider (as Adyen's CAPTURE_FAILED) instead of settling. `over`: more of the
   * provider's answers, or its declared behaviour, replaced.
   */
  const settlingAs = (
    verdict: (providerTransactionId: string) => "settled" | "failed" | "pending",
    t: Tap = tap(),
    over: Partial<PaymentProvider["Service"]> = {}
  ): PaymentProvider["Service"] => ({ ...tapped(t), settlement: (id) => Effect.sync(() => verdict(id)), ...over })

  /** The void calls that reached the provider (their idempotency keys), in order. */
  const voidCalls = (t: Tap) => t.calls.filter((key) => key.includes(":void"))

  /** The payment closed `canceled`: payment.capture_failed, then one payment.canceled carrying `voided` (what voids released). */
  const closedCanceled = (orderId: string, voided: number) =>
    Effect.gen(function*() {
      const s = yield* stored(orderId)
      expect(s.order.status).toBe("canceled")
      expect(s.events).toEqual(["payment.authorized", "payment.capture_failed", "payment.canceled"])
      expect(s.payloads[2]!.data).toMatchObject({ order_status: "canceled", voided_amount: voided })
      return s
    })

  /**
   * A 100.00 authorization (card 0341) whose capture of 30.00 is settling when the void comes (it
   * releases 70.00), then fails at the provider (the settlement worker's round, under a provider
   * whose settlements fail); `fate`: what becomes of the release's call.
   */
  const captureFailsAfterVoid = (t: Tap, fate: Fate = "answer") =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4000000000000341")
      const p = yield* payments
      yield* p.capture(account, { order_id: held.order_id, amount: "30.00", final: false })
      yield* later
      expect(yield* p.void(account, { order_id: held.order_id })).toMatchObject({ status: "settling", voided_amount: 70 })
      expect(voidCalls(t)).toHaveLength(1)
      t.fates.void = fate
      yield* later
      expect(yield* p.settleDue()).toBe(1)
      return { account, orderId: held.order_id, p }
    })

  it.effect("contract.md: a void while a capture is settling releases what is neither captured nor settling; the capture then settles: completed, payment.succeeded once", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4000000000000341")
      const p = yield* payments
      const settling = yield* p.capture(account, { order_id: held.order_id, amount: "30.00", final: false })
      yield* later
      const voided = yield* p.void(account, { order_id: held.order_id })
      expect(voided).toMatchObject({ status: "settling", voided_amount: 70 })
      expect(voided.captured_amount).toBeUndefined()
      const before = yield* stored(held.order_id)
      expect(before.order.status).toBe("authorized")
      expect(before.txns.map((t) => [t.kind, t.status, t.amount])).toEqual([["authorization", "completed", 10000], ["capture", "processing", 3000], ["void", "canceled", 7000]])
      expect(before.events).toEqual(["payment.authorized"])
      yield* expectUnexpectedState(p.capture(account, { order_id: held.order_id, amount: "1.00", final: false }), "capture", "settling")
      yield* expectUnexpectedState(p.void(account, { order_id: held.order_id }), "void", "settling")
      yield* TestClock.adjust(PaymentProviderSandbox.SETTLE_AFTER_MS)
      expect(yield* p.settleDue()).toBe(1)
      const { order, txns, events, payloads } = yield* stored(held.order_id)
      expect(order.status).toBe("succeeded")
      // Nothing failed: nothing more to release.
      expect(txns.filter((t) => t.kind === "void")).toHaveLength(1)
      expect(events).toEqual(["payment.authorized", "payment.succeeded"])
      expect(payloads[1]!.data).toMatchObject({ captured_amount: 30, voided_amount: 70, capture_transaction_id: settling.transaction_id })
    }).pipe(Effect.provide(world())))

  const t1 = tap()
  it.effect("spec: a void \"always releases what remains\": the only capture settling when it was asked then fails; what it held is released by a second void (a release), then canceled (\"a void released the whole hold\"), voided_amount 100.00, payment.capture_failed then payment.canceled", () =>
    Effect.gen(function*() {
      const { account, orderId, p } = yield* captureFailsAfterVoid(t1)
      const { txns, events } = yield* closedCanceled(orderId, 100)
      const [, , merchantVoid, release] = txns
      expect(txns.map((t) => [t.kind, t.status, t.amount, t.pending_call])).toEqual([
        ["authorization", "completed", 10000, null], ["capture", "failed", 3000, null], ["void", "canceled", 7000, null], ["void", "canceled", 3000, null]
      ])
      // The release points at the void it completes; its own call went to the provider, for 30.00.
      expect(release!.parent_transaction_id).toBe(merchantVoid!.id)
      expect(voidCalls(t1)).toEqual([`${merchantVoid!.id}:void`, `${release!.id}:void`])
      expect((yield* stored(orderId)).payloads[2]!.data).toMatchObject({ captured_amount: 0 })
      yield* expectUnexpectedState(p.void(account, { order_id: orderId }), "void", "canceled")
      // Exactly once: no round finds anything left.
      expect(yield* p.settleDue()).toBe(0)
      expect(yield* p.reconcileDue({ graceMs: 0, horizonMs: DAY })).toBe(0)
      expect((yield* stored(orderId)).events).toEqual(events)
    }).pipe(Effect.provide(world(t1, settlingAs(() => "failed", t1)))))

  const verdict: { current: "settled" | "failed" } = { current: "settled" }
  it.effect("a void behind a settled capture while another settles, which then fails: what it held released too; completed on what settled, voided_amount all the rest, payment.succeeded once", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4000000000000341")
      const p = yield* payments
      const first = yield* p.capture(account, { order_id: held.order_id, amount: "20.00", final: false })
      expect(yield* p.settleDue()).toBe(1)
      yield* later
      yield* p.capture(account, { order_id: held.order_id, amount: "30.00", final: false })
      yield* later
      expect(yield* p.void(account, { order_id: held.order_id })).toMatchObject({ status: "settling", captured_amount: 20, voided_amount: 50 })
      verdict.current = "failed"
      yield* later
      expect(yield* p.settleDue()).toBe(1)
      const { order, txns, events, payloads } = yield* stored(held.order_id)
      expect(order.status).toBe("succeeded")
      expect(txns.filter((t) => t.kind === "void").map((t) => [t.status, t.amount])).toEqual([["canceled", 5000], ["canceled", 3000]])
      expect(events).toEqual(["payment.authorized", "payment.partially_captured", "payment.capture_failed", "payment.succeeded"])
      // payment.succeeded names the capture that settled, not the one that failed
      expect(payloads[3]!.data).toMatchObject({ order_status: "succeeded", captured_amount: 20, voided_amount: 80, capture_transaction_id: first.transaction_id })
    }).pipe(Effect.provide(world(tap(), settlingAs(() => verdict.current)))))

  const t2 = tap()
  it.effect("the release refused by the provider: recorded failed with its decline code, and the authorization closes all the same: canceled, voided_amount what was released (70.00)", () =>
    Effect.gen(function*() {
      const { orderId, p } = yield* captureFailsAfterVoid(t2)
      const { txns } = yield* closedCanceled(orderId, 70)
      expect(txns.filter((t) => t.kind === "void").map((t) => [t.status, t.amount, t.decline_code, t.pending_call])).toEqual([
        ["canceled", 7000, null, null], ["failed", 3000, "void_refused", null]
      ])
      expect(yield* p.reconcileDue({ graceMs: 0, horizonMs: DAY })).toBe(0)
    }).pipe(Effect.provide(world(t2, settlingAs(() => "failed", t2, {
      // The provider lets the first void through and refuses the second (it holds nothing more).
      voidCard: (request) =>
        voidCalls(t2).length === 0 ? tapped(t2).voidCard(request) : Effect.succeed<VoidResult>({ _tag: "Refused", decline_code: "void_refused" })
    })))))

  const t3 = tap()
  it.effect("the release's answer lost: left in flight, the authorization closing; reconciliation records it once, then canceled with voided_amount 100.00", () =>
    Effect.gen(function*() {
      const { account, orderId, p } = yield* captureFailsAfterVoid(t3, "lose")
      const before = yield* stored(orderId)
      expect(before.order.status).toBe("authorized")
      expect([before.txn.kind, before.txn.status, before.txn.pending_call?.operation]).toEqual(["void", "processing", "void"])
      expect(before.events).toEqual(["payment.authorized", "payment.capture_failed"])
      yield* expectUnexpectedState(p.void(account, { order_id: orderId }), "void", "settling")
      expect(yield* p.reconcileDue({ graceMs: 0, horizonMs: DAY })).toBe(1)
      const { txn } = yield* closedCanceled(orderId, 100)
      expect([txn.status, txn.pending_call]).toEqual(["canceled", null])
      expect(voidCalls(t3)).toHaveLength(2)
      expect(yield* p.reconcileDue({ graceMs: 0, horizonMs: DAY })).toBe(0)
    }).pipe(Effect.provide(world(t3, settlingAs(() => "failed", t3)))))

  const t4 = tap()
  it.effect("the release reserved but never sent (as a crash right after its reserve): reconciliation fences its key and sends it again under a new one; canceled once", () =>
    Effect.gen(function*() {
      const { orderId, p } = yield* captureFailsAfterVoid(t4, "drop")
      const reserved = (yield* stored(orderId)).txn
      expect(reserved.pending_call?.key).toBe(`${reserved.id}:void`)
      t4.fates.void = "answer"
      expect(yield* p.reconcileDue({ graceMs: 0, horizonMs: DAY })).toBe(1)
      const { txn } = yield* closedCanceled(orderId, 100)
      expect([txn.id, txn.status, txn.pending_call]).toEqual([reserved.id, "canceled", null])
      expect(t4.fenced).toContain(`${reserved.id}:void`)
      expect(voidCalls(t4)).toEqual([expect.any(String), expect.stringMatching(new RegExp(`^${reserved.id}:void:\\d+$`))])
    }).pipe(Effect.provide(world(t4, settlingAs(() => "failed", t4)))))

  const t5 = tap()
  it.effect("the provider unreachable for the release: sent again by reconciliation until the horizon, then given up (provider_unavailable) and the authorization closes: canceled, voided_amount 70.00", () =>
    Effect.gen(function*() {
      const { orderId, p } = yield* captureFailsAfterVoid(t5, "refuse")
      const reserved = (yield* stored(orderId)).txn
      expect([reserved.status, reserved.pending_call?.operation]).toEqual(["processing", "void"])
      // Within the horizon: sent again (a new key each time), still unreachable, still owed.
      expect(yield* p.reconcileDue({ graceMs: 0, horizonMs: DAY })).toBe(1)
      const again = (yield* stored(orderId)).txn
      expect([again.status, again.pending_call?.key]).toEqual(["processing", expect.stringMatching(/:void:\d+$/)])
      expect((yield* stored(orderId)).order.status).toBe("authorized")
      yield* TestClock.adjust(DAY)
      expect(yield* p.reconcileDue({ graceMs: 0, horizonMs: DAY })).toBe(1)
      const { txn } = yield* closedCanceled(orderId, 70)
      expect([txn.status, txn.decline_code, txn.pending_call]).toEqual(["failed", "provider_unavailable", null])
    }).pipe(Effect.provide(world(t5, settlingAs(() => "failed", t5)))))

  const t5b = tap()
  it.effect("a release nobody answers for a day is sent again backing off as reconciliation's put-offs do (half the release's age, 1 s to 10 min, persisted as retry_at), not every round: each round fences a key at the provider", () =>
    Effect.gen(function*() {
      const { orderId, p } = yield* captureFailsAfterVoid(t5b, "refuse")
      const born = Date.parse((yield* stored(orderId)).txn.created_at)
      // The worker's settings; it runs a round every second, here every 10 s (a day of them).
      const options = { graceMs: 60_000, horizonMs: DAY }
      const sent: Array<number> = []
      for (let round = 0; round < (DAY + HOUR) / 10_000; round++) {
        yield* TestClock.adjust("10 seconds")
        if ((yield* p.reconcileDue(options)) === 0) continue
        const { txn } = yield* stored(orderId)
        if (txn.status !== "processing") break
        const now = yield* Clock.currentTimeMillis
        sent.push(now)
        const wait = Date.parse(txn.pending_call!.retry_at!) - now
        expect(wait).toBe(Math.min(Math.max((now - born) / 2, 1_000), 10 * 60_000))
      }
      // Past the horizon: given up, and the authorization closes without it.
      const { txn } = yield* closedCanceled(orderId, 70)
      expect([txn.status, txn.decline_code]).toEqual(["failed", "provider_unavailable"])
      // Each send waited its put-off and the grace; none waited longer than the cap, the grace and a round.
      const gaps = sent.slice(1).map((at, i) => at - sent[i]!)
      for (let i = 1; i < gaps.length; i++) expect(gaps[i]).toBeGreaterThanOrEqual(gaps[i - 1]!)
      expect(Math.max(...gaps)).toBeLessThanOrEqual(10 * 60_000 + 60_000 + 10_000)
      // One key fenced per send (and the first call's): about 130 in a day, where every round's would be about 1,400.
      expect(t5b.fenced.size).toBe(sent.length + 1)
      expect(sent.length).toBeLessThan(DAY / (10 * 60_000 + 60_000) + 20)
    }).pipe(Effect.provide(world(t5b, settlingAs(() => "failed", t5b)))))

  const t6 = tap()
  it.effect("the merchant's void at the provider while the capture fails (its answer lost, then reconciled): what the capture held is owed, released next; canceled with voided_amount 100.00", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4000000000000341")
      const p = yield* payments
      yield* p.capture(account, { order_id: held.order_id, amount: "30.00", final: false })
      yield* later
      t6.fates.void = "lose"
      expect(yield* codeOf(p.void(account, { order_id: held.order_id }))).toBe("card_payment_in_progress")
      t6.fates.void = "answer"
      yield* later
      expect(yield* p.settleDue()).toBe(1)
      const before = yield* stored(held.order_id)
      // The void still in doubt: the authorization stands, the failed capture is not owed yet.
      expect(before.order.status).toBe("authorized")
      expect(before.txns.map((t) => [t.kind, t.status])).toEqual([["authorization", "completed"], ["capture", "failed"], ["void", "processing"]])
      expect(before.events).toEqual(["payment.authorized", "payment.capture_failed"])
      yield* later
      expect(yield* p.reconcileDue({ graceMs: 0, horizonMs: DAY })).toBe(1)
      const { txns } = yield* closedCanceled(held.order_id, 100)
      expect(txns.filter((t) => t.kind === "void").map((t) => [t.status, t.amount, t.parent_transaction_id])).toEqual([
        ["canceled", 7000, txns[0]!.id], ["canceled", 3000, txns[2]!.id]
      ])
    }).pipe(Effect.provide(world(t6, settlingAs(() => "failed", t6)))))

  const t7 = tap({ capture: "drop" })
  it.effect("a provider whose void releases the whole remainder (Stripe, Adyen): a capture it never received was released with the void; recorded so without a second call, canceled with voided_amount 100.00", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4242424242424242")
      const p = yield* payments
      expect(yield* codeOf(p.capture(account, { order_id: held.order_id, amount: "30.00", final: false }))).toBe("card_payment_in_progress")
      yield* later
      expect(yield* p.void(account, { order_id: held.order_id })).toMatchObject({ status: "settling", voided_amount: 70 })
      yield* later
      expect(yield* p.reconcileDue({ graceMs: 0, horizonMs: DAY })).toBe(1)
      const { txns } = yield* closedCanceled(held.order_id, 100)
      const [, capture, merchantVoid, release] = txns
      expect([capture!.status, capture!.decline_code]).toEqual(["failed", "provider_unavailable"])
      expect([release!.kind, release!.status, release!.amount, release!.pending_call]).toEqual(["void", "canceled", 3000, null])
      // No call: it names the void that released it.
      expect(release!.provider_transaction_id).toBe(merchantVoid!.provider_transaction_id)
      expect(voidCalls(t7)).toEqual([`${merchantVoid!.id}:void`])
    }).pipe(Effect.provide(world(t7, settlingAs(() => "settled", t7, { voidReleasesRemainder: true })))))

  const t8 = tap()
  it.effect("a provider whose void releases the whole remainder, and a capture it had accepted that fails afterwards (Adyen's CAPTURE_FAILED): the void did not take it, so it is released by a call", () =>
    Effect.gen(function*() {
      const { orderId } = yield* captureFailsAfterVoid(t8)
      const { txns } = yield* closedCanceled(orderId, 100)
      expect(voidCalls(t8)).toEqual(txns.filter((t) => t.kind === "void").map((t) => `${t.id}:void`))
      expect(voidCalls(t8)).toHaveLength(2)
    }).pipe(Effect.provide(world(t8, settlingAs(() => "failed", t8, { voidReleasesRemainder: true })))))

  const settles = new Set<string>()
  it.effect("contract.md: a final capture while another settles is accepted; settled first, it leaves the authorization closing until the other ends: payment.succeeded once, on the total", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4000000000000341")
      const p = yield* payments
      const first = yield* p.capture(account, { order_id: held.order_id, amount: "30.00", final: false })
      yield* later
      const last = yield* p.capture(account, { order_id: held.order_id, amount: "50.00" })
      expect(last).toMatchObject({ status: "settling", captured_amount: 0 })
      const providerIdOf = (txnId: string) => Effect.map(stored(held.order_id), ({ txns }) => txns.find((t) => t.id === txnId)!.provider_transaction_id!)
      // The final capture settles first: the authorization closes with the other one.
      settles.add(yield* providerIdOf(last.transaction_id))
      expect(yield* p.settleDue()).toBe(1)
      const closing = yield* stored(held.order_id)
      expect(closing.order.status).toBe("authorized")
      expect(closing.events).toEqual(["payment.authorized"])
      yield* expectUnexpectedState(p.capture(account, { order_id: held.order_id, amount: "1.00", final: false }), "capture", "settling")
      yield* expectUnexpectedState(p.void(account, { order_id: held.order_id }), "void", "settling")
      settles.add(yield* providerIdOf(first.transaction_id))
      // The other one answered "not yet" that round: it is asked again after its backoff (1 s here).
      expect(yield* p.settleDue()).toBe(0)
      yield* later
      expect(yield* p.settleDue()).toBe(1)
      const { order, events, payloads } = yield* stored(held.order_id)
      expect(order.status).toBe("succeeded")
      expect(events).toEqual(["payment.authorized", "payment.succeeded"])
      expect(payloads[1]!.data).toMatchObject({ captured_amount: 80, capture_transaction_id: first.transaction_id })
      expect(payloads[1]!.data["voided_amount"]).toBeUndefined()
    }).pipe(Effect.provide(world(tap(), settlingAs((id) => (settles.has(id) ? "settled" : "pending"))))))

  it.effect("after a final capture: payment_unexpected_state", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4242424242424242")
      const p = yield* payments
      yield* p.capture(account, { order_id: held.order_id })
      yield* expectUnexpectedState(p.void(account, { order_id: held.order_id }), "void", "completed")
    }).pipe(Effect.provide(world())))

  it.effect("an automatic-capture card payment, or a non-card one: payment_unexpected_state for capture and void", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const sale = yield* charge(account, "4242424242424242")
      const redirect = yield* local(account, "paypal")
      for (const target of [{ order_id: sale.order_id }, { order_id: redirect.order_id }]) {
        expect(yield* codeOf(p.capture(account, target))).toBe("payment_unexpected_state")
        expect(yield* codeOf(p.void(account, target))).toBe("payment_unexpected_state")
      }
      expect((yield* stored(sale.order_id)).txns).toHaveLength(1)
      expect((yield* stored(redirect.order_id)).txns).toHaveLength(1)
    }).pipe(Effect.provide(world())))
})

// --- 3-D Secure -------------------------------------------------------------------------------

describe("completeThreeDs", () => {
  /** collect_cvv: false on the challenge card: the issuer asks for 3-D Secure. */
  const challenged = (account: Account.Account, capture_method: "automatic" | "manual") =>
    Effect.gen(function*() {
      const token = yield* tokenize(account, "4000000000003220")
      return yield* create(account, {
        amount: "40.00", currency: "USD", country: "US", merchant_reference: ref("3ds"), collect_cvv: false, capture_method,
        payment_method: { code: "card", details: { card_token: token } }
      })
    })

  it.effect("idempotent before the answer (the same requires_action) and after it (the same outcome)", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const started = yield* challenged(account, "automatic")
      expect(started).toMatchObject({ status: "requires_action", next_action: { type: "redirect" }, provider_transaction_id: null })
      expect(yield* p.completeThreeDs(account, started.order_id)).toEqual(started)
      expect(yield* p.completeThreeDs(account, started.order_id)).toEqual(started)
      yield* p.answerChallenge(started.transaction_id, true)
      const done = yield* p.completeThreeDs(account, started.order_id)
      expect(done).toMatchObject({ status: "completed", next_action: null, provider_transaction_id: expect.any(String) })
      expect(yield* p.completeThreeDs(account, started.order_id)).toEqual(done)
      const { order, txns, events } = yield* stored(started.order_id)
      expect(order.status).toBe("succeeded")
      expect(txns.map((t) => [t.status, t.three_ds, t.pending_call])).toEqual([["completed", "approved", null]])
      expect(events).toEqual(["payment.requires_action", "payment.succeeded"])
    }).pipe(Effect.provide(world())))

  it.effect("two completions at once: one authorization call, both see its outcome", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const started = yield* challenged(account, "automatic")
      yield* p.answerChallenge(started.transaction_id, true)
      const gate = yield* barrier
      t.gate = gate.wait
      const first = yield* Effect.forkChild(p.completeThreeDs(account, started.order_id))
      yield* gate.reached
      const second = yield* Effect.forkChild(p.completeThreeDs(account, started.order_id))
      yield* gate.open
      expect((yield* Fiber.join(first)).status).toBe("completed")
      expect((yield* Fiber.join(second)).status).toBe("completed")
      expect(t.calls).toEqual([`${started.transaction_id}:authorize`, expect.stringMatching(new RegExp(`^${started.transaction_id}:authorize:\\d+$`))])
      expect((yield* stored(started.order_id)).events).toEqual(["payment.requires_action", "payment.succeeded"])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("manual capture: the challenge passed settles to authorized", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const started = yield* challenged(account, "manual")
      yield* p.answerChallenge(started.transaction_id, true)
      expect(yield* p.completeThreeDs(account, started.order_id)).toMatchObject({ status: "authorized", provider_transaction_id: null })
      expect((yield* stored(started.order_id)).events).toEqual(["payment.requires_action", "payment.authorized"])
    }).pipe(Effect.provide(world())))

  it.effect.each([
    [true, "completed", ["payment.requires_action", "payment.succeeded", "checkout.session.completed"]],
    [false, "open", ["payment.requires_action"]]
  ] as const)("under a session (a browser flow), the challenge answered %s: the answer alone leaves the session %s; 3ds/complete then only reads", ([approved, sessionStatus, events]) =>
    Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const session = yield* newSession(account, { methods: ["card"], max: 2 })
      yield* payCard(session.id, yield* tokenize(account, "4000000000003220"))
      expect(yield* sessionOf(session.id)).toMatchObject({ status: "pending_action", next_action: { type: "redirect" } })
      // Was: the answer was only recorded, and the merchant's 3ds/complete (or the hosted page's next
      // GET) authorized. contract.md, Browser SDK: the customer's answer completes the payment.
      yield* p.answerChallenge((yield* stored(session.order_id)).txn.id, approved)
      expect((yield* sessionOf(session.id)).status).toBe(sessionStatus)
      expect((yield* stored(session.order_id)).events).toEqual(events)
      yield* p.completeThreeDs(account, session.order_id)
      expect((yield* stored(session.order_id)).events).toEqual(events)
    }).pipe(Effect.provide(world())))

  it.effect("the challenge denied: failed with authentication_failed, payment.failed once", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const started = yield* challenged(account, "automatic")
      yield* p.answerChallenge(started.transaction_id, false)
      expect(yield* p.completeThreeDs(account, started.order_id)).toMatchObject({ status: "failed" })
      expect(yield* p.completeThreeDs(account, started.order_id)).toMatchObject({ status: "failed" })
      const { order, txn, events } = yield* stored(started.order_id)
      expect([order.status, txn.status, txn.decline_code]).toEqual(["failed", "failed", "authentication_failed"])
      expect(events).toEqual(["payment.requires_action", "payment.failed"])
    }).pipe(Effect.provide(world())))
})

// --- 3-D Secure in a browser flow ---------------------------------------------------------------

/**
 * contract.md, Browser SDK: "in the browser flows (the SDK's `pay()` in every display mode, the hosted
 * checkout page) the customer's answer to a 3-D Secure challenge completes the payment with no call
 * from the merchant's server, on the sandbox as on every channel […] `POST /v1/payments/{id}/3ds/complete`
 * is for server-to-server payments […]; on a browser-flow payment it only returns the snapshot."
 */
describe("3-D Secure in a browser flow (the SDK's pay)", () => {
  /**
   * A payment the customer paid in the browser with the challenge card, awaiting the challenge's
   * answer: collect_card, or (manual capture needs a saved card) collect_cvv on the saved card.
   */
  const paidChallenged = (account: Account.Account, capture_method: "automatic" | "manual" = "automatic") =>
    Effect.gen(function*() {
      const p = yield* payments
      const token = yield* tokenize(account, "4000000000003220")
      const created = yield* create(account, {
        ...urls, amount: "40.00", currency: "USD", country: "US", merchant_reference: ref("sdk-3ds"), capture_method,
        payment_method: capture_method === "manual" ? { code: "card", details: { card_token: token } } : { code: "card" }
      })
      expect(created.next_action?.type).toBe(capture_method === "manual" ? "collect_cvv" : "collect_card")
      const paid = yield* p.clientPay(account, created.order_id, token)
      expect([paid.order.status, paid.txn.three_ds, paid.txn.browser_flow]).toEqual(["requires_action", "required", true])
      return { orderId: created.order_id, transactionId: created.transaction_id }
    })

  /** The card form's requires_action (collect_card), then the challenge's. */
  const AWAITED = ["payment.requires_action", "payment.requires_action"]

  const roundKey = (transactionId: string) => expect.stringMatching(new RegExp(`^${transactionId}:authorize:\\d+$`))

  it.effect.each([
    ["automatic", "succeeded", "completed", "payment.succeeded"],
    ["manual", "authorized", "authorized", "payment.authorized"]
  ] as const)("approved (%s capture): the answer authorizes at once (%s); 3ds/complete then returns that snapshot, no second call", ([capture, orderStatus, status, event]) => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const { orderId, transactionId } = yield* paidChallenged(account, capture)
      // Before the answer: the requires_action snapshot, nothing sent.
      expect(yield* p.completeThreeDs(account, orderId)).toMatchObject({ status: "requires_action", next_action: { type: "redirect" } })
      expect(t.calls).toEqual([`${transactionId}:authorize`])
      expect((yield* p.answerChallenge(transactionId, true)).return_url).toBe(urls.success_url)
      const { order, txn, events } = yield* stored(orderId)
      expect([order.status, txn.status, txn.three_ds, txn.pending_call]).toEqual([orderStatus, "completed", "approved", null])
      expect(t.calls).toEqual([`${transactionId}:authorize`, roundKey(transactionId)])
      const snapshot = yield* p.completeThreeDs(account, orderId)
      expect(snapshot).toMatchObject({ status, next_action: null })
      expect(yield* p.completeThreeDs(account, orderId)).toEqual(snapshot)
      expect(t.calls).toHaveLength(2)
      expect((yield* stored(orderId)).events).toEqual(events)
      expect(events).toEqual([...AWAITED, event])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("denied: the answer fails it at once (authentication_failed), no provider call; a second answer is refused", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const { orderId, transactionId } = yield* paidChallenged(account)
      expect((yield* p.answerChallenge(transactionId, false)).return_url).toBe(urls.cancel_url)
      const { order, txn, events } = yield* stored(orderId)
      expect([order.status, txn.status, txn.three_ds, txn.decline_code]).toEqual(["failed", "failed", "denied", "authentication_failed"])
      expect(events).toEqual([...AWAITED, "payment.failed"])
      expect(t.calls).toEqual([`${transactionId}:authorize`])
      expect(yield* codeOf(p.answerChallenge(transactionId, true))).toBe("payment_unexpected_state")
      expect(yield* p.completeThreeDs(account, orderId)).toMatchObject({ status: "failed" })
      expect((yield* stored(orderId)).events).toEqual(events)
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("simulate succeed (the customer's answer, test mode) completes it too", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const { orderId } = yield* paidChallenged(account)
      expect(yield* p.simulate(account, orderId, { outcome: "succeed" })).toMatchObject({ status: "succeeded" })
    }).pipe(Effect.provide(world())))

  it.effect("the authorization after the answer lost: the answer is taken (no error), the call stays reserved, reconciliation records it once", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const { orderId, transactionId } = yield* paidChallenged(account)
      t.fates.authorize = "lose"
      // In flight counts as good for where the customer goes; the payment's state says the rest.
      expect((yield* p.answerChallenge(transactionId, true)).return_url).toBe(urls.success_url)
      const waiting = yield* stored(orderId)
      expect([waiting.order.status, waiting.txn.status, waiting.txn.three_ds, waiting.txn.pending_call?.key])
        .toEqual(["requires_action", "processing", "approved", t.calls[1]])
      // 3ds/complete neither authorizes again nor fails: the snapshot as it stands.
      expect(yield* p.completeThreeDs(account, orderId)).toMatchObject({ status: "requires_action" })
      expect(t.calls).toEqual([`${transactionId}:authorize`, roundKey(transactionId)])
      expect(yield* p.reconcileDue({ graceMs: 0, horizonMs: DAY })).toBe(1)
      const { order, txn, events } = yield* stored(orderId)
      expect([order.status, txn.status, txn.pending_call]).toEqual(["succeeded", "completed", null])
      expect(events).toEqual([...AWAITED, "payment.succeeded"])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("two answers at once: one is taken, one authorization call", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const { orderId, transactionId } = yield* paidChallenged(account)
      const gate = yield* barrier
      t.gate = gate.wait
      const first = yield* Effect.forkChild(p.answerChallenge(transactionId, true))
      yield* gate.reached
      const second = yield* Effect.forkChild(Effect.result(p.answerChallenge(transactionId, true)))
      yield* gate.open
      yield* Fiber.join(first)
      const other = yield* Fiber.join(second)
      expect(other._tag === "Failure" ? other.failure.code : "answered").toBe("payment_unexpected_state")
      expect(t.calls).toEqual([`${transactionId}:authorize`, roundKey(transactionId)])
      expect((yield* stored(orderId)).events).toEqual([...AWAITED, "payment.succeeded"])
    }).pipe(Effect.provide(world(t)))
  })
})

// --- provider outcomes ------------------------------------------------------------------------

describe("providerOutcome (a redirect payment)", () => {
  it.effect.each([
    ["succeed", "succeeded", "completed", null, "payment.succeeded", urls.success_url],
    ["fail", "failed", "failed", "payment_declined", "payment.failed", urls.cancel_url],
    ["cancel", "canceled", "canceled", "canceled_by_customer", "payment.failed", urls.cancel_url],
    ["expire", "canceled", "canceled", "expired", "payment.failed", urls.cancel_url]
  ] as const)("%s → order %s, transaction %s (%s), %s", ([outcome, orderStatus, txnStatus, declineCode, event, returnUrl]) =>
    Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const started = yield* local(account, "paypal")
      expect(yield* p.providerOutcome(started.transaction_id, outcome)).toEqual({ return_url: returnUrl })
      const { order, txn, events } = yield* stored(started.order_id)
      expect([order.status, txn.status, txn.decline_code, txn.next_action]).toEqual([orderStatus, txnStatus, declineCode, null])
      expect(events).toEqual(["payment.requires_action", event])
      // A final attempt awaits no outcome: a late report changes nothing.
      expect(yield* codeOf(p.providerOutcome(started.transaction_id, "succeed"))).toBe("payment_unexpected_state")
      expect((yield* stored(started.order_id)).events).toEqual(["payment.requires_action", event])
    }).pipe(Effect.provide(world())))

  /** A session whose only method is a redirect, with the customer sent to the provider. */
  const redirected = (account: Account.Account, max: number) =>
    Effect.gen(function*() {
      const session = yield* newSession(account, { methods: ["paypal"], max })
      yield* (yield* payments).attemptSession(session.id, { payment_method: { code: "paypal" } })
      expect((yield* sessionOf(session.id)).status).toBe("pending_action")
      return { session, txn: (yield* stored(session.order_id)).txn }
    })

  it.effect("under a session with attempts left, the customer cancels at the provider: the session open again, no payment.failed", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const { session, txn } = yield* redirected(account, 2)
      yield* (yield* payments).providerOutcome(txn.id, "cancel")
      const { order, events } = yield* stored(session.order_id)
      expect(yield* sessionOf(session.id)).toMatchObject({ status: "open", next_action: null })
      expect(order.status).toBe("pending")
      expect(events).toEqual(["payment.requires_action"])
    }).pipe(Effect.provide(world())))

  it.effect("a cancel ends the attempt the customer started at the provider: a late success is refused, the order never takes money", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const { session, txn } = yield* redirected(account, 2)
      yield* Effect.flatMap(sessionsService, (s) => s.cancel(account, session.id))
      const closed = yield* stored(session.order_id)
      expect([closed.order.status, closed.txn.status, closed.txn.decline_code]).toEqual(["canceled", "canceled", "session_canceled"])
      expect(yield* codeOf((yield* payments).providerOutcome(txn.id, "succeed"))).toBe("payment_unexpected_state")
      const { order, events } = yield* stored(session.order_id)
      expect(order.status).toBe("canceled")
      expect(events).toEqual(["payment.requires_action", "checkout.session.canceled"])
    }).pipe(Effect.provide(world())))

  it.effect("spec: an attempt started at the provider \"can still report its outcome after expiry\", within a bounded window", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const { session, txn } = yield* redirected(account, 2)
      yield* TestClock.adjust("2 hours")
      expect(yield* Effect.flatMap(sessionsService, (s) => s.expireOverdue())).toBe(1)
      const open = yield* stored(session.order_id)
      expect([open.order.status, open.txn.status]).toEqual(["requires_action", "processing"])
      // Nobody came back: the window after expiry closes it, releasing the order without payment.failed.
      yield* TestClock.adjust("61 minutes")
      expect(yield* (yield* payments).expireWindows()).toBe(1)
      const { order, txn: closed, events } = yield* stored(session.order_id)
      expect([order.status, closed.id, closed.status, closed.decline_code]).toEqual(["canceled", txn.id, "canceled", "expired"])
      expect((yield* sessionOf(session.id)).status).toBe("expired")
      expect(events).toEqual(["payment.requires_action", "checkout.session.expired"])
    }).pipe(Effect.provide(world())))
})

// --- simulate ---------------------------------------------------------------------------------

describe("simulate (test helper acting as the customer)", () => {
  it.effect("a collect_cvv form submitted: the saved card authorizes", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const token = yield* tokenize(account, "4242424242424242")
      const started = yield* create(account, {
        amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("sim"), payment_method: { code: "card", details: { card_token: token } }
      })
      const view = yield* (yield* payments).simulate(account, started.order_id, { outcome: "succeed" })
      expect(view.status).toBe("succeeded")
      const { txn, events } = yield* stored(started.order_id)
      expect([txn.status, txn.next_action, txn.pending_call]).toEqual(["completed", null, null])
      expect(events).toEqual(["payment.requires_action", "payment.succeeded"])
    }).pipe(Effect.provide(world())))

  it.effect("a collect_card form failed: the sandbox's declining card", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const started = yield* create(account, { ...urls, amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("sim"), payment_method: { code: "card" } })
      expect((yield* (yield* payments).simulate(account, started.order_id, { outcome: "fail" })).status).toBe("failed")
      const { txn, events } = yield* stored(started.order_id)
      expect([txn.status, txn.decline_code]).toEqual(["failed", "card_declined"])
      expect(events).toEqual(["payment.requires_action", "payment.failed"])
    }).pipe(Effect.provide(world())))
})

// --- amount mismatch --------------------------------------------------------------------------

describe("decideAmountMismatch (crypto)", () => {
  const underpaid = (account: Account.Account) =>
    Effect.gen(function*() {
      const started = yield* local(account, "crypto")
      const view = yield* (yield* payments).simulate(account, started.order_id, { outcome: "underpay", amount: "20.00" })
      expect(view.status).toBe("processing")
      expect((yield* stored(started.order_id)).events).toEqual(["payment.requires_action", "payment.underpaid"])
      return started.order_id
    })

  it.effect("accept: succeeded; the same decision again is safe; the opposite conflicts", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const orderId = yield* underpaid(account)
      expect((yield* p.decideAmountMismatch(account, orderId, { decision: "accept" })).status).toBe("succeeded")
      expect((yield* p.decideAmountMismatch(account, orderId, { decision: "accept" })).status).toBe("succeeded")
      expect(yield* codeOf(p.decideAmountMismatch(account, orderId, { decision: "decline", refund_destination: { address: "tb1qrefund" } })))
        .toBe("amount_mismatch_decision_conflict")
      const { order, txn, events } = yield* stored(orderId)
      expect([order.status, txn.status]).toEqual(["succeeded", "completed"])
      expect(events).toEqual(["payment.requires_action", "payment.underpaid", "payment.succeeded"])
    }).pipe(Effect.provide(world())))

  it.effect("decline: needs a refund address; returned; the same decision again is safe; the opposite conflicts", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const orderId = yield* underpaid(account)
      expect(yield* codeOf(p.decideAmountMismatch(account, orderId, { decision: "decline" }))).toBe("amount_mismatch_decision_invalid")
      const decline = { decision: "decline", refund_destination: { address: "tb1qrefund" } } as const
      expect((yield* p.decideAmountMismatch(account, orderId, decline)).status).toBe("returned")
      expect((yield* p.decideAmountMismatch(account, orderId, decline)).status).toBe("returned")
      expect(yield* codeOf(p.decideAmountMismatch(account, orderId, { decision: "accept" }))).toBe("amount_mismatch_decision_conflict")
      const { order, txn, events } = yield* stored(orderId)
      expect([order.status, txn.status]).toEqual(["returned", "returned"])
      expect(events).toEqual(["payment.requires_action", "payment.underpaid", "payment.returned"])
    }).pipe(Effect.provide(world())))

  it.effect("under a checkout session: the session completes on arrival; payment.returned follows checkout.session.completed", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const session = yield* newSession(account, { methods: ["crypto"] })
      yield* p.attemptSession(session.id, { payment_method: { code: "crypto" } })
      yield* p.simulate(account, session.order_id, { outcome: "overpay", amount: "31.00" })
      expect((yield* sessionOf(session.id)).status).toBe("completed")
      expect((yield* p.decideAmountMismatch(account, session.order_id, { decision: "decline", refund_destination: { address: "tb1qrefund" } })).status).toBe("returned")
      expect((yield* stored(session.order_id)).events).toEqual(["payment.requires_action", "payment.overpaid", "checkout.session.completed", "payment.returned"])
    }).pipe(Effect.provide(world())))

  it.effect("no mismatch awaiting a decision: payment_unexpected_state", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const started = yield* local(account, "crypto")
      expect(yield* codeOf((yield* payments).decideAmountMismatch(account, started.order_id, { decision: "accept" }))).toBe("payment_unexpected_state")
    }).pipe(Effect.provide(world())))
})

// --- window expiry ----------------------------------------------------------------------------

describe("expireWindows", () => {
  /** A pix session whose customer has the QR (its window: 30 minutes). */
  const pixSession = (account: Account.Account, max: number) =>
    Effect.gen(function*() {
      const session = yield* newSession(account, { methods: ["pix"], currency: "BRL", country: "BR", max })
      yield* (yield* payments).attemptSession(session.id, { payment_method: { code: "pix", details: { document_id: "12345678909" } }, customer: { ip: "200.1.2.3" } })
      return session
    })

  it.effect("a pix QR past expires_at: transaction canceled (expired), order canceled, payment.failed exactly once", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const started = yield* local(account, "pix")
      const closes = Date.parse(started.next_action!.expires_at!)
      yield* TestClock.setTime(closes - 1)
      expect(yield* p.expireWindows()).toBe(0)
      yield* TestClock.setTime(closes)
      expect(yield* p.expireWindows()).toBe(1)
      expect(yield* p.expireWindows()).toBe(0)
      const { order, txn, events } = yield* stored(started.order_id)
      expect([order.status, txn.status, txn.decline_code]).toEqual(["canceled", "canceled", "expired"])
      expect(events).toEqual(["payment.requires_action", "payment.failed"])
    }).pipe(Effect.provide(world())))

  it.effect("under a session with attempts left: the session back to open, the order pending, no payment.failed", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const session = yield* pixSession(account, 2)
      expect((yield* sessionOf(session.id)).status).toBe("pending_action")
      yield* TestClock.adjust("31 minutes")
      expect(yield* p.expireWindows()).toBe(1)
      expect(yield* p.expireWindows()).toBe(0)
      const { order, txn, events } = yield* stored(session.order_id)
      expect((yield* sessionOf(session.id))).toMatchObject({ status: "open", next_action: null })
      expect([order.status, txn.status, txn.decline_code]).toEqual(["pending", "canceled", "expired"])
      expect(events).toEqual(["payment.requires_action"])
    }).pipe(Effect.provide(world())))

  it.effect("under a session on its last attempt: the session failed, payment.failed then checkout.session.failed", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const session = yield* pixSession(account, 1)
      yield* TestClock.adjust("31 minutes")
      expect(yield* p.expireWindows()).toBe(1)
      expect(yield* p.expireWindows()).toBe(0)
      const { order, txn, events } = yield* stored(session.order_id)
      expect((yield* sessionOf(session.id)).status).toBe("failed")
      expect([order.status, txn.status, txn.decline_code]).toEqual(["failed", "canceled", "expired"])
      expect(events).toEqual(["payment.requires_action", "payment.failed", "checkout.session.failed"])
    }).pipe(Effect.provide(world())))

  it.effect("a collect_cvv client secret past its 15 minutes closes the same way", () =>
    Effect.gen(function*() {
      const account = yield* merchant
      const token = yield* tokenize(account, "4242424242424242")
      const started = yield* create(account, {
        amount: "10.00", currency: "USD", country: "US", merchant_reference: ref("cvv-expiry"), payment_method: { code: "card", details: { card_token: token } }
      })
      yield* TestClock.adjust("15 minutes")
      expect(yield* (yield* payments).expireWindows()).toBe(1)
      const { order, txn, events } = yield* stored(started.order_id)
      expect([order.status, txn.status, txn.decline_code]).toEqual(["canceled", "canceled", "expired"])
      expect(events).toEqual(["payment.requires_action", "payment.failed"])
    }).pipe(Effect.provide(world())))
})

// --- reconciliation ---------------------------------------------------------------------------

describe("reconcileDue (a provider whose answer was lost)", () => {
  const now = { graceMs: 0, horizonMs: DAY }
  /** The spec's in-flight order statuses: which one an unrecorded attempt's order shows is not stated. */
  const IN_FLIGHT = ["pending", "processing", "requires_action"]

  /** The in-flight state a lost answer leaves: the transaction in flight, its call pending, no events. */
  const expectInFlight = (orderId: string, operation: Operation, orderStatus: ReadonlyArray<string>, events: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const s = yield* stored(orderId)
      expect(orderStatus).toContain(s.order.status)
      expect(s.txn.status).toBe("processing")
      expect(s.txn.pending_call).toMatchObject({ operation, key: expect.stringContaining(s.txn.id) })
      expect(s.events).toEqual(events)
    })

  /** reconcileDue records it exactly once: a second round finds nothing and records nothing. */
  const reconcileOnce = (orderId: string) =>
    Effect.gen(function*() {
      const p = yield* payments
      expect(yield* p.reconcileDue(now)).toBe(1)
      const first = yield* stored(orderId)
      expect(yield* p.reconcileDue(now)).toBe(0)
      expect((yield* stored(orderId)).events).toEqual(first.events)
      expect(first.txns.every((t) => t.pending_call === null)).toBe(true)
      return first
    })

  it.effect("create: card_payment_in_progress, in flight; reconciliation records the approval once", () => {
    const t = tap({ authorize: "lose" })
    return Effect.gen(function*() {
      const account = yield* merchant
      const reference = ref("lost-create")
      expect(yield* codeOf(charge(account, "4242424242424242", { merchant_reference: reference }))).toBe("card_payment_in_progress")
      const orderId = Option.getOrThrow(yield* (yield* OrderRepo).findByReference(account.id, reference)).id
      yield* expectInFlight(orderId, "authorize", IN_FLIGHT, [])
      const { order, txn, events } = yield* reconcileOnce(orderId)
      expect([order.status, txn.status, txn.provider_transaction_id]).toEqual(["succeeded", "completed", expect.any(String)])
      expect(events).toEqual(["payment.succeeded"])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("capture: card_payment_in_progress, in flight; reconciliation settles it once", () => {
    const t = tap({ capture: "lose" })
    return Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4242424242424242")
      expect(yield* codeOf((yield* payments).capture(account, { order_id: held.order_id }))).toBe("card_payment_in_progress")
      yield* expectInFlight(held.order_id, "capture", ["authorized"], ["payment.authorized"])
      // The capture in flight counts against the remainder: no second capture, no void meanwhile.
      expect(yield* codeOf((yield* payments).capture(account, { order_id: held.order_id, amount: "1.00" }))).toBe("payment_unexpected_state")
      const { order, txn, events } = yield* reconcileOnce(held.order_id)
      expect([order.status, txn.kind, txn.status]).toEqual(["succeeded", "capture", "completed"])
      expect(events).toEqual(["payment.authorized", "payment.succeeded"])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("capture accepted for later, its answer lost: reconciliation records it settling, the worker settles it", () => {
    const t = tap({ capture: "lose" })
    return Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const held = yield* authorize(account, "4000000000000341")
      yield* Effect.flip(p.capture(account, { order_id: held.order_id }))
      const recorded = yield* reconcileOnce(held.order_id)
      expect([recorded.order.status, recorded.txn.status]).toEqual(["authorized", "processing"])
      expect(recorded.events).toEqual(["payment.authorized"])
      yield* TestClock.adjust(PaymentProviderSandbox.SETTLE_AFTER_MS)
      expect(yield* p.settleDue()).toBe(1)
      const { order, txn, events } = yield* stored(held.order_id)
      expect([order.status, txn.status]).toEqual(["succeeded", "completed"])
      expect(events).toEqual(["payment.authorized", "payment.succeeded"])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("void: card_payment_in_progress, in flight; reconciliation cancels it once", () => {
    const t = tap({ void: "lose" })
    return Effect.gen(function*() {
      const account = yield* merchant
      const held = yield* authorize(account, "4242424242424242")
      expect(yield* codeOf((yield* payments).void(account, { order_id: held.order_id }))).toBe("card_payment_in_progress")
      yield* expectInFlight(held.order_id, "void", ["authorized"], ["payment.authorized"])
      const { order, txn, events } = yield* reconcileOnce(held.order_id)
      expect([order.status, txn.kind, txn.status]).toEqual(["canceled", "void", "canceled"])
      expect(events).toEqual(["payment.authorized", "payment.canceled"])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("a call the provider never received (NotReceived): the attempt fails with provider_unavailable", () => {
    const t = tap({ authorize: "drop" })
    return Effect.gen(function*() {
      const account = yield* merchant
      const reference = ref("dropped")
      expect(yield* codeOf(charge(account, "4242424242424242", { merchant_reference: reference }))).toBe("card_payment_in_progress")
      const orderId = Option.getOrThrow(yield* (yield* OrderRepo).findByReference(account.id, reference)).id
      yield* expectInFlight(orderId, "authorize", IN_FLIGHT, [])
      const { order, txn, events } = yield* reconcileOnce(orderId)
      expect([order.status, txn.status, txn.decline_code]).toEqual(["failed", "failed", "provider_unavailable"])
      expect(events).toEqual(["payment.failed"])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("a lookup that cannot reach the provider: pending until the horizon passes, then failed", () => {
    const t = tap({ authorize: "lose" })
    return Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const reference = ref("unanswerable")
      expect(yield* codeOf(charge(account, "4242424242424242", { merchant_reference: reference }))).toBe("card_payment_in_progress")
      const orderId = Option.getOrThrow(yield* (yield* OrderRepo).findByReference(account.id, reference)).id
      t.lookupDown = true
      expect(yield* p.reconcileDue(now)).toBe(0)
      // Asked again later, not every round: the unanswered call steps back behind newer ones.
      const call = (yield* stored(orderId)).txn.pending_call!
      expect(Date.parse(call.retry_at!)).toBeGreaterThan(Date.parse(call.at))
      const transactions = yield* TransactionRepo
      expect((yield* transactions.listPendingCalls(new Date(Date.parse(call.retry_at!) - 1).toISOString(), 50)).map((x) => x.pending_call!.key)).not.toContain(call.key)
      expect((yield* transactions.listPendingCalls(call.retry_at!, 50)).map((x) => x.pending_call!.key)).toContain(call.key)
      const reserved = Date.parse(call.at)
      yield* TestClock.setTime(reserved + DAY - 1)
      expect(yield* p.reconcileDue(now)).toBe(0)
      yield* expectInFlight(orderId, "authorize", IN_FLIGHT, [])
      yield* TestClock.setTime(reserved + DAY)
      const { order, txn, events } = yield* reconcileOnce(orderId)
      expect([order.status, txn.status, txn.decline_code]).toEqual(["failed", "failed", "provider_unavailable"])
      expect(events).toEqual(["payment.failed"])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("a call younger than the grace period is left to its caller", () => {
    const t = tap({ authorize: "lose" })
    return Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const reference = ref("young")
      yield* Effect.flip(charge(account, "4242424242424242", { merchant_reference: reference }))
      expect(yield* p.reconcileDue({ graceMs: 60_000, horizonMs: DAY })).toBe(0)
      yield* TestClock.adjust("1 minute")
      expect(yield* p.reconcileDue({ graceMs: 60_000, horizonMs: DAY })).toBe(1)
    }).pipe(Effect.provide(world(t)))
  })

  it.effect.each([
    ["capture", ["payment.authorized", "payment.capture_failed"], "completed"],
    ["void", ["payment.authorized"], "canceled"]
  ] as const)("a %s the provider never received: failed with provider_unavailable, the authorization stands", ([operation, events, retried]) => {
    const t = tap({ [operation]: "drop" })
    return Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const held = yield* authorize(account, "4242424242424242")
      const verb = operation === "capture" ? p.capture(account, { order_id: held.order_id }) : p.void(account, { order_id: held.order_id })
      expect(yield* codeOf(verb)).toBe("card_payment_in_progress")
      yield* expectInFlight(held.order_id, operation, ["authorized"], ["payment.authorized"])
      const after = yield* reconcileOnce(held.order_id)
      expect([after.order.status, after.txn.kind, after.txn.status, after.txn.decline_code]).toEqual(["authorized", operation, "failed", "provider_unavailable"])
      expect(after.events).toEqual(events)
      // The authorization stands: the same verb, once the provider hears it, goes through.
      t.fates[operation] = "answer"
      yield* later
      expect((yield* verb).status).toBe(retried)
    }).pipe(Effect.provide(world(t)))
  })

  it.effect.each([
    ["answered", "answer"],
    ["lost, then reconciled", "lose"]
  ] as const)("an issuer demanding 3-D Secure on a merchant-initiated charge, %s: requires_action, never payment.requires_action", ([_, fate]) => {
    // An issuer that challenges whatever the charge: the sandbox's challenge card, never told it was
    // authenticated nor that the charge is merchant-initiated. Spec (Events): payment.requires_action is "never for merchant-initiated card
    // charges", and RecordAttempt records an outcome "the same whatever brought it".
    const t = tap({ authorize: fate })
    const provider = tapped(t)
    const issuer = { ...provider, authorizeCard: (request: Parameters<typeof provider.authorizeCard>[0]) => provider.authorizeCard({ ...request, authenticated: false, merchant_initiated: false }) }
    return Effect.gen(function*() {
      const account = yield* merchant
      const reference = ref("mit-3ds")
      yield* Effect.exit(charge(account, "4000000000003220", { merchant_reference: reference }))
      const orderId = Option.getOrThrow(yield* (yield* OrderRepo).findByReference(account.id, reference)).id
      yield* (yield* payments).reconcileDue(now)
      const { order, txn, events } = yield* stored(orderId)
      expect([order.status, txn.status, txn.three_ds, txn.pending_call]).toEqual(["requires_action", "processing", "required", null])
      expect(events).toEqual([])
    }).pipe(Effect.provide(world(t, issuer)))
  })

  it.effect("a session attempt: the session waits (no second attempt, no cancel); reconciliation completes it once", () => {
    const t = tap({ authorize: "lose" })
    return Effect.gen(function*() {
      const account = yield* merchant
      const session = yield* newSession(account, { methods: ["card"], max: 3 })
      // The customer's page shows the session, not the 409: the attempt call itself succeeds.
      yield* payCard(session.id, yield* tokenize(account, "4242424242424242"))
      yield* expectInFlight(session.order_id, "authorize", IN_FLIGHT, [])
      expect((yield* sessionOf(session.id)).status).toBe("open")
      expect(yield* codeOf(payCard(session.id, yield* tokenize(account, "5555555555554444")))).toBe("card_payment_in_progress")
      expect(yield* codeOf(Effect.flatMap(sessionsService, (s) => s.cancel(account, session.id)))).toBe("card_payment_in_progress")
      const { order, txns, events } = yield* reconcileOnce(session.order_id)
      expect(txns.map((x) => x.status)).toEqual(["completed"])
      expect(order.status).toBe("succeeded")
      expect(yield* sessionOf(session.id)).toMatchObject({ status: "completed", transaction_id: txns[0]!.id })
      expect(events).toEqual(["payment.succeeded", "checkout.session.completed"])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("a session attempt whose lost answer was a decline, attempts left: the session open again, no payment.failed", () => {
    const t = tap({ authorize: "lose" })
    return Effect.gen(function*() {
      const account = yield* merchant
      const session = yield* newSession(account, { methods: ["card"], max: 2 })
      yield* payCard(session.id, yield* tokenize(account, "4000000000000002"))
      const { order, txn, events } = yield* reconcileOnce(session.order_id)
      expect([order.status, txn.status, txn.decline_code]).toEqual(["pending", "failed", "card_declined"])
      expect((yield* sessionOf(session.id)).status).toBe("open")
      expect(events).toEqual([])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("a local method's start: reconciliation records the customer's next action", () => {
    const t = tap({ start: "lose" })
    return Effect.gen(function*() {
      const account = yield* merchant
      const reference = ref("lost-start")
      expect(yield* codeOf(create(account, { ...urls, amount: "50.00", currency: "USD", country: "US", merchant_reference: reference, payment_method: { code: "paypal" } })))
        .toBe("card_payment_in_progress")
      const orderId = Option.getOrThrow(yield* (yield* OrderRepo).findByReference(account.id, reference)).id
      yield* expectInFlight(orderId, "start", IN_FLIGHT, [])
      const { order, txn, events } = yield* reconcileOnce(orderId)
      expect([order.status, txn.status, txn.next_action?.type]).toEqual(["requires_action", "processing", "redirect"])
      expect(events).toEqual(["payment.requires_action"])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("3-D Secure completion: the authorization after the challenge, lost, then reconciled once", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const p = yield* payments
      const token = yield* tokenize(account, "4000000000003220")
      const started = yield* create(account, {
        amount: "40.00", currency: "USD", country: "US", merchant_reference: ref("3ds-lost"), collect_cvv: false,
        payment_method: { code: "card", details: { card_token: token } }
      })
      yield* p.answerChallenge(started.transaction_id, true)
      t.fates.authorize = "lose"
      expect(yield* codeOf(p.completeThreeDs(account, started.order_id))).toBe("card_payment_in_progress")
      // Idempotent while the call is unresolved: the same requires_action snapshot, no second call.
      expect(yield* p.completeThreeDs(account, started.order_id)).toMatchObject({ status: "requires_action" })
      expect(t.calls).toEqual([`${started.transaction_id}:authorize`, expect.stringMatching(new RegExp(`^${started.transaction_id}:authorize:\\d+$`))])
      const { order, txn, events } = yield* reconcileOnce(started.order_id)
      expect([order.status, txn.status]).toEqual(["succeeded", "completed"])
      expect(events).toEqual(["payment.requires_action", "payment.succeeded"])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("the caller's answer arriving after reconciliation recorded it: recorded once, the caller sees that outcome", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const gate = yield* barrier
      t.hold = gate.wait
      const reference = ref("late-answer")
      const caller = yield* Effect.forkChild(charge(account, "4242424242424242", { merchant_reference: reference }))
      yield* gate.reached
      const orderId = Option.getOrThrow(yield* (yield* OrderRepo).findByReference(account.id, reference)).id
      expect(yield* reconcileElsewhere(now)).toBe(1)
      yield* gate.open
      expect(yield* Fiber.join(caller)).toMatchObject({ status: "completed" })
      const { txn, events } = yield* stored(orderId)
      expect([txn.status, txn.pending_call]).toEqual(["completed", null])
      expect(events).toEqual(["payment.succeeded"])
    }).pipe(Effect.provide(world(t)))
  })

  it.effect("a call still on its way when reconciliation fenced its key: it fails at the provider, recorded once as provider_unavailable", () => {
    const t = tap()
    return Effect.gen(function*() {
      const account = yield* merchant
      const gate = yield* barrier
      t.gate = gate.wait
      const reference = ref("fenced")
      const caller = yield* Effect.forkChild(charge(account, "4242424242424242", { merchant_reference: reference }))
      yield* gate.reached
      const orderId = Option.getOrThrow(yield* (yield* OrderRepo).findByReference(account.id, reference)).id
      expect(yield* reconcileElsewhere(now)).toBe(1)
      yield* gate.open
      expect(yield* codeOf(Fiber.join(caller))).toBe("provider_unavailable")
      expect(t.calls).toEqual([])
      const { order, txn, events } = yield* stored(orderId)
      expect([order.status, txn.status, txn.decline_code]).toEqual(["failed", "failed", "provider_unavailable"])
      expect(events).toEqual(["payment.failed"])
    }).pipe(Effect.provide(world(t)))
  })
})
