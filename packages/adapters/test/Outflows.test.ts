/**
 * Refunds, payouts and transfers whose provider call goes wrong, as the HTTP suite cannot make the
 * sandbox do: an answer lost on the way back (the call in doubt: `refund_in_progress` /
 * `payout_in_progress`, then reconciliation records what the provider did), a call that never
 * arrived (reconciliation fences it: failed, `provider_unavailable`), and a provider that refuses
 * the connection (a refund or payout recorded failed, 502; a transfer left for the same request
 * again, its retry window closed by the window-expiry worker). Memory storage, in-process locks,
 * the sandbox behind a tap, under the TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type Account,
  Accounts,
  CardTokens,
  Errors,
  EventRepo,
  OrderRepo,
  Outbox,
  Outflows,
  type PaymentProvider as Provider,
  PaymentProvider,
  type PaymentRequest,
  Payments,
  PublicUrl,
  TransactionRepo,
  type TransferRequest,
  TransferRepo,
  Transfers,
  type Unknown
} from "@tender/domain"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { memoryStorage } from "../src/Infrastructure.ts"
import * as ChannelProviders from "../src/providers/channels/ChannelProviders.ts"
import * as LocksMemory from "../src/locks/LocksMemory.ts"
import * as PaymentProviderSandbox from "../src/providers/sandbox/PaymentProviderSandbox.ts"
import * as SandboxLedgerMemory from "../src/providers/sandbox/SandboxLedgerMemory.ts"

const START = Date.parse("2026-11-26T03:00:00.000Z")
const NOW = { graceMs: 0, horizonMs: 24 * 60 * 60 * 1000 }

/**
 * What becomes of refund and payout calls (a transfer's too): `answer` as the sandbox does; `lose` —
 * the sandbox applies it, the answer is lost; `drop` — it never reaches the sandbox, the caller
 * hears Unknown all the same; `refuse` — the connection is refused (definitely not applied).
 */
type Fate = "answer" | "lose" | "drop" | "refuse"

/** The test's handle on the calls: their fate, and the keys of those that reached the sandbox. */
interface Tap {
  value: Fate
  readonly calls?: Array<string>
}

const lost: Unknown = { _tag: "Unknown", reason: "test" }

const world = (fate: Tap) => {
  const sandbox = PaymentProviderSandbox.make({ publicUrl: "http://tender.test" }, SandboxLedgerMemory.make())
  const through = <A>(key: string, call: Effect.Effect<A, Errors.ProviderUnavailable>) =>
    Effect.suspend((): Effect.Effect<A | Unknown, Errors.ProviderUnavailable> => {
      if (fate.value === "answer" || fate.value === "lose") fate.calls?.push(key)
      switch (fate.value) {
        case "answer":
          return call
        case "lose":
          return Effect.as(call, lost)
        case "drop":
          return Effect.succeed(lost)
        case "refuse":
          return Effect.fail(new Errors.ProviderUnavailable({ message: "connection refused (test)" }))
      }
    })
  const provider: Provider["Service"] = {
    ...sandbox,
    refund: (r) => through(r.idempotency_key, sandbox.refund(r)),
    payout: (r) => through(r.idempotency_key, sandbox.payout(r))
  }
  const ports = Layer.mergeAll(memoryStorage, LocksMemory.layer, Layer.succeed(PaymentProvider, provider), Layer.succeed(PublicUrl, "http://tender.test"))
    .pipe(Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer)))
  const routed = ChannelProviders.layer({ publicUrl: "http://tender.test" }).pipe(Layer.provideMerge(ports))
  return Layer.mergeAll(Accounts.layer, CardTokens.layer, Payments.layer, Outflows.layer, Transfers.layer).pipe(
    Layer.provideMerge(Outbox.layer),
    Layer.provideMerge(routed)
  )
}

let seq = 0

/** A fresh test account and a settled 100.00 USD card charge of it. */
const paid = Effect.gen(function*() {
  yield* TestClock.setTime(START)
  const accounts = yield* Accounts
  const account: Account.Account = yield* accounts.get((yield* accounts.create({ name: "outflows", mode: "test" })).account_id)
  const card = yield* (yield* CardTokens).tokenize(account, { number: "4242424242424242", exp_month: 12, exp_year: 2030, cvc: "123" })
  const payment = yield* (yield* Payments).create(account, {
    amount: "100.00",
    currency: "USD",
    country: "US",
    merchant_reference: `outflow-${++seq}`,
    payment_method: { code: "card", details: { card_token: card.token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
  })
  yield* TestClock.adjust("1 second")
  return { account, payment }
}).pipe(Effect.orDie)

const stored = (orderId: string) =>
  Effect.gen(function*() {
    const order = Option.getOrThrow(yield* (yield* OrderRepo).findAny(orderId))
    const txn = (yield* (yield* TransactionRepo).listByOrder(orderId)).at(-1)!
    const events = (yield* (yield* EventRepo).listByOrder(orderId)).map((e) => e.type).filter((t) => !t.startsWith("payment."))
    return { order, txn, events }
  })

const codeOf = <A, E extends { readonly code: string }, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), (e) => e.code)

describe("a refund's call in doubt", () => {
  it.effect("answer lost: 409 refund_in_progress, the refund pending and counted; reconciliation records the provider's answer", () => {
    const fate = { value: "lose" as Fate }
    return Effect.gen(function*() {
      const { account, payment } = yield* paid
      const outflows = yield* Outflows
      expect(yield* codeOf(outflows.refund(account, { order_id: payment.order_id, amount: "60.00" }))).toBe("refund_in_progress")
      const doubt = yield* stored(payment.order_id)
      expect([doubt.txn.kind, doubt.txn.status, doubt.txn.pending_call?.operation]).toEqual(["refund", "processing", "refund"])
      fate.value = "answer"
      // 60 in flight: 50 fits only if it failed.
      expect(yield* codeOf(outflows.refund(account, { order_id: payment.order_id, amount: "50.00" }))).toBe("refund_in_progress")
      expect(yield* (yield* Payments).reconcileDue(NOW)).toBe(1)
      const { order, txn, events } = yield* stored(payment.order_id)
      expect([txn.status, txn.pending_call, order.refunded_amount]).toEqual(["completed", null, 6000])
      expect(events).toEqual(["refund.succeeded"])
      expect(yield* outflows.refund(account, { order_id: payment.order_id })).toMatchObject({ status: "succeeded", amount: 40 })
    }).pipe(Effect.provide(world(fate)))
  })

  it.effect("never received: reconciliation fences the key; the refund failed with provider_unavailable, nothing refunded", () => {
    const fate = { value: "drop" as Fate }
    return Effect.gen(function*() {
      const { account, payment } = yield* paid
      const outflows = yield* Outflows
      expect(yield* codeOf(outflows.refund(account, { order_id: payment.order_id }))).toBe("refund_in_progress")
      expect(yield* (yield* Payments).reconcileDue(NOW)).toBe(1)
      const { order, txn, events } = yield* stored(payment.order_id)
      expect([txn.status, txn.decline_code, order.refunded_amount]).toEqual(["failed", "provider_unavailable", 0])
      expect(events).toEqual(["refund.failed"])
    }).pipe(Effect.provide(world(fate)))
  })

  it.effect("provider unreachable: 502 provider_unavailable, the refund recorded failed (refund.failed), the balance whole again", () => {
    const fate = { value: "refuse" as Fate }
    return Effect.gen(function*() {
      const { account, payment } = yield* paid
      const outflows = yield* Outflows
      expect(yield* codeOf(outflows.refund(account, { order_id: payment.order_id }))).toBe("provider_unavailable")
      const { order, txn, events } = yield* stored(payment.order_id)
      expect([txn.kind, txn.status, txn.decline_code, txn.pending_call, order.refunded_amount]).toEqual(["refund", "failed", "provider_unavailable", null, 0])
      expect(events).toEqual(["refund.failed"])
      fate.value = "answer"
      expect(yield* outflows.refund(account, { order_id: payment.order_id })).toMatchObject({ status: "succeeded", amount: 100 })
    }).pipe(Effect.provide(world(fate)))
  })
})

describe("a payout's call in doubt", () => {
  it.effect("answer lost: 409 payout_in_progress, another payout refused meanwhile; reconciliation records it paid", () => {
    const fate = { value: "lose" as Fate }
    return Effect.gen(function*() {
      const { account, payment } = yield* paid
      const outflows = yield* Outflows
      expect(yield* codeOf(outflows.payout(account, { order_id: payment.order_id, amount: "10.00" }))).toBe("payout_in_progress")
      fate.value = "answer"
      expect(yield* codeOf(outflows.payout(account, { order_id: payment.order_id, amount: "1.00" }))).toBe("payout_in_progress")
      expect(yield* (yield* Payments).reconcileDue(NOW)).toBe(1)
      const { txn, events } = yield* stored(payment.order_id)
      expect([txn.kind, txn.status]).toEqual(["payout", "completed"])
      expect(events).toEqual(["payout.succeeded"])
      expect(yield* outflows.payout(account, { order_id: payment.order_id, amount: "1.00" })).toMatchObject({ status: "succeeded" })
    }).pipe(Effect.provide(world(fate)))
  })
})

describe("a transfer whose create answered 502, retried (contract.md, Idempotency)", () => {
  const DAY = 24 * 60 * 60 * 1000

  const bank = (reference: string): TransferRequest.CreateTransferInput => ({
    amount: "120.50",
    currency: "USD",
    country: "US",
    merchant_reference: reference,
    payment_method: { code: "bank_transfer", details: { account_number: "000123456789", holder_name: "Ada Lovelace" } }
  })

  const account = Effect.gen(function*() {
    yield* TestClock.setTime(START)
    const accounts = yield* Accounts
    return yield* accounts.get((yield* accounts.create({ name: "transfers", mode: "test" })).account_id)
  }).pipe(Effect.orDie)

  /** The transfer's rows and every event of its order (payment.* included: there must be none). */
  const transferred = (orderId: string) =>
    Effect.gen(function*() {
      const order = Option.getOrThrow(yield* (yield* OrderRepo).findAny(orderId))
      const txns = yield* (yield* TransactionRepo).listByOrder(orderId)
      const transfer = Option.getOrThrow(yield* (yield* TransferRepo).findByOrder(orderId))
      const recorded = yield* (yield* EventRepo).listByOrder(orderId)
      return { order, txns, transfer, events: recorded.map((e) => e.type), payloads: recorded.map((e) => e.data) }
    })

  /** The provider refuses connections for the first create: 502, the transfer left for the retry. */
  const unreachableFirst = (tap: Tap, merchant: Account.Account) =>
    Effect.gen(function*() {
      const input = bank(`retry-${++seq}`)
      tap.value = "refuse"
      const error = yield* Effect.flip((yield* Transfers).create(merchant, input))
      expect([error.code, error.message]).toEqual(["provider_unavailable", expect.stringContaining("Retry the same request")])
      yield* TestClock.adjust("1 second")
      tap.value = "answer"
      const order = Option.getOrThrow(yield* (yield* OrderRepo).findByReference(merchant.id, input.merchant_reference!))
      return { input, order }
    })

  it.effect("\"the same body with the same reference attempts again on the same order (a new transaction) and answers as a first create would\"; no transfer.failed for the 502", () => {
    const tap: Tap = { value: "answer", calls: [] }
    return Effect.gen(function*() {
      const merchant = yield* account
      const transfers = yield* Transfers
      const { input, order } = yield* unreachableFirst(tap, merchant)
      const first = yield* transferred(order.id)
      const [unreachable] = first.txns
      expect([first.order.status, first.order.retry_until, first.order.request_hash]).toEqual(["pending", new Date(START + DAY).toISOString(), expect.any(String)])
      expect([first.transfer.status, first.transfer.transaction_id, first.transfer.decline_code]).toEqual(["pending", unreachable!.id, null])
      expect(first.txns.map((t) => [t.kind, t.status, t.decline_code, t.pending_call])).toEqual([["transfer", "failed", "provider_unavailable", null]])
      expect(first.events).toEqual([])
      expect(yield* transfers.get(merchant, first.transfer.id)).toMatchObject({ status: "pending", next_action: null })

      // Key order is no part of "the same body".
      const { payment_method, ...rest } = input
      const retried = yield* transfers.create(merchant, { payment_method, ...rest })
      expect(retried).toMatchObject({ id: first.transfer.id, order_id: order.id, status: "succeeded", merchant_reference: input.merchant_reference })
      expect(retried.transaction_id).not.toBe(unreachable!.id)
      expect(retried.payment_instrument).toEqual(first.transfer.payment_instrument)
      const after = yield* transferred(order.id)
      expect([after.order.status, after.order.retry_until, after.transfer.transaction_id]).toEqual(["succeeded", null, retried.transaction_id])
      expect(after.txns.map((t) => [t.id, t.status, t.decline_code])).toEqual([
        [unreachable!.id, "failed", "provider_unavailable"],
        [retried.transaction_id, "completed", null]
      ])
      expect(after.events).toEqual(["transfer.succeeded"])
      // One call reached the provider, under the new transaction's key.
      expect(tap.calls).toEqual([`${retried.transaction_id}:payout`])
      // Now the reference is a transfer's like any other: the same request again is 409.
      expect(yield* codeOf(transfers.create(merchant, input))).toBe("duplicate_merchant_reference_id")
    }).pipe(Effect.provide(world(tap)))
  })

  it.effect("\"The same reference with another body is 409 duplicate_merchant_reference_id\": nothing changes, the same request still retries", () => {
    const tap: Tap = { value: "answer", calls: [] }
    return Effect.gen(function*() {
      const merchant = yield* account
      const transfers = yield* Transfers
      const { input, order } = yield* unreachableFirst(tap, merchant)
      const others: ReadonlyArray<TransferRequest.CreateTransferInput> = [
        { ...input, amount: "120.51" },
        { ...input, payment_method: { code: "bank_transfer", details: { account_number: "000123456780", holder_name: "Ada Lovelace" } } },
        { ...input, processing_profile: "eu" },
        // Another body is refused before it is validated, as for any taken reference.
        { ...input, amount: "not money" }
      ]
      for (const other of others) {
        const refused = yield* Effect.flip(transfers.create(merchant, other))
        expect([refused.code, refused.message]).toEqual(["duplicate_merchant_reference_id", expect.stringContaining("/v1/orders/by-reference/")])
      }
      const unchanged = yield* transferred(order.id)
      expect([unchanged.order.status, unchanged.transfer.status, unchanged.txns.length, unchanged.events]).toEqual(["pending", "pending", 1, []])
      expect(tap.calls).toEqual([])
      expect(yield* transfers.create(merchant, input)).toMatchObject({ order_id: order.id, status: "succeeded" })
    }).pipe(Effect.provide(world(tap)))
  })

  it.effect("retries at once: one claims the order and calls the provider, the others are 409 before any call", () => {
    const tap: Tap = { value: "answer", calls: [] }
    return Effect.gen(function*() {
      const merchant = yield* account
      const transfers = yield* Transfers
      const { input, order } = yield* unreachableFirst(tap, merchant)
      const outcomes = yield* Effect.all(Array.from({ length: 5 }, () => Effect.result(transfers.create(merchant, input))), { concurrency: "unbounded" })
      const answers = outcomes.map((o) => (o._tag === "Success" ? o.success.status : o.failure.code))
      expect(answers.filter((a) => a === "succeeded"), answers.join(", ")).toHaveLength(1)
      expect(answers.filter((a) => a !== "succeeded"), answers.join(", ")).toEqual(Array(4).fill("duplicate_merchant_reference_id"))
      expect(tap.calls).toHaveLength(1)
      const { txns, events } = yield* transferred(order.id)
      expect(txns.map((t) => t.status)).toEqual(["failed", "completed"])
      expect(events).toEqual(["transfer.succeeded"])
    }).pipe(Effect.provide(world(tap)))
  })

  it.effect("a retry that finds the provider unreachable again: 502 again, a second failed transaction, the window renewed, still no transfer.failed", () => {
    const tap: Tap = { value: "answer", calls: [] }
    return Effect.gen(function*() {
      const merchant = yield* account
      const { input, order } = yield* unreachableFirst(tap, merchant)
      yield* TestClock.adjust("2 hours")
      tap.value = "refuse"
      expect(yield* codeOf((yield* Transfers).create(merchant, input))).toBe("provider_unavailable")
      const { order: again, transfer, txns, events } = yield* transferred(order.id)
      expect([again.status, again.retry_until, transfer.status]).toEqual(["pending", new Date(START + 1000 + 2 * 60 * 60 * 1000 + DAY).toISOString(), "pending"])
      expect(txns.map((t) => [t.status, t.decline_code])).toEqual([["failed", "provider_unavailable"], ["failed", "provider_unavailable"]])
      expect(transfer.transaction_id).toBe(txns[1]!.id)
      expect(events).toEqual([])
    }).pipe(Effect.provide(world(tap)))
  })

  it.effect("no retry within the window (a day): the window-expiry worker fails the transfer with transfer.failed (provider_unavailable), never payment.failed; the request is then 409", () => {
    const tap: Tap = { value: "answer", calls: [] }
    return Effect.gen(function*() {
      const merchant = yield* account
      const { input, order } = yield* unreachableFirst(tap, merchant)
      const payments = yield* Payments
      yield* TestClock.adjust(DAY - 2000)
      expect(yield* payments.expireWindows()).toBe(0)
      expect((yield* transferred(order.id)).transfer.status).toBe("pending")
      // Past the window, before the worker's round: no longer a retry.
      yield* TestClock.adjust("1 second")
      expect(yield* codeOf((yield* Transfers).create(merchant, input))).toBe("duplicate_merchant_reference_id")
      expect(yield* payments.expireWindows()).toBe(1)
      const { order: failed, transfer, txns, events, payloads } = yield* transferred(order.id)
      expect([failed.status, failed.retry_until, transfer.status, transfer.decline_code, txns.length]).toEqual(["failed", null, "failed", "provider_unavailable", 1])
      expect(events).toEqual(["transfer.failed"])
      expect(payloads[0]).toMatchObject({ id: transfer.id, order_id: order.id, transaction_id: txns[0]!.id, status: "failed", decline_code: "provider_unavailable" })
      expect(yield* payments.expireWindows()).toBe(0)
      expect(yield* codeOf((yield* Transfers).create(merchant, input))).toBe("duplicate_merchant_reference_id")
      expect(tap.calls).toEqual([])
    }).pipe(Effect.provide(world(tap)))
  })

  it.effect("a direct payment's create answered 502: the same request as a transfer is 409, not a retry of the payment's order", () => {
    const tap: Tap = { value: "answer", calls: [] }
    return Effect.gen(function*() {
      const merchant = yield* account
      const card = yield* (yield* CardTokens).tokenize(merchant, { number: "4000000000000119", exp_month: 12, exp_year: 2030, cvc: "123" })
      const input: PaymentRequest.CreatePaymentInput = {
        amount: "120.50",
        currency: "USD",
        country: "US",
        merchant_reference: `payment-${++seq}`,
        payment_method: { code: "card", details: { card_token: card.token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
      }
      expect(yield* codeOf((yield* Payments).create(merchant, input))).toBe("provider_unavailable")
      const order = Option.getOrThrow(yield* (yield* OrderRepo).findByReference(merchant.id, input.merchant_reference!))
      expect([order.subtype, order.status]).toEqual(["direct_payment", "pending"])
      expect(yield* codeOf((yield* Transfers).create(merchant, input as TransferRequest.CreateTransferInput))).toBe("duplicate_merchant_reference_id")
      expect((yield* (yield* TransactionRepo).listByOrder(order.id)).length).toBe(1)
      expect(tap.calls).toEqual([])
    }).pipe(Effect.provide(world(tap)))
  })

  it.effect("execute answered 502: the card transfer awaits its execute again (requires_action), no transfer.failed; execute then pays it on a new transaction", () => {
    const tap: Tap = { value: "answer", calls: [] }
    return Effect.gen(function*() {
      const merchant = yield* account
      const transfers = yield* Transfers
      const card = yield* (yield* CardTokens).tokenize(merchant, { number: "4242424242424242", exp_month: 12, exp_year: 2030, cvc: "123" })
      const created = yield* transfers.create(merchant, {
        amount: "20.00",
        currency: "USD",
        country: "US",
        merchant_reference: `card-${++seq}`,
        payment_method: { code: "card", details: { card_token: card.token } }
      })
      expect(created.status).toBe("requires_action")
      tap.value = "refuse"
      const error = yield* Effect.flip(transfers.execute(merchant, created.order_id, {}))
      expect([error.code, error.message]).toEqual(["provider_unavailable", expect.stringContaining("Execute the transfer again")])
      const waiting = yield* transferred(created.order_id)
      expect([waiting.order.status, waiting.order.retry_until, waiting.transfer.status]).toEqual(["requires_action", null, "requires_action"])
      expect(waiting.txns.map((t) => [t.id, t.status, t.decline_code])).toEqual([[created.transaction_id, "failed", "provider_unavailable"]])
      expect(waiting.events).toEqual([])
      expect(tap.calls).toEqual([])

      // Transactions list oldest first, ties by id: the retry comes a moment later, as it would.
      yield* TestClock.adjust("1 second")
      tap.value = "answer"
      const executed = yield* transfers.execute(merchant, created.order_id, {})
      expect(executed).toMatchObject({ id: created.id, status: "succeeded" })
      expect(executed.transaction_id).not.toBe(created.transaction_id)
      const after = yield* transferred(created.order_id)
      expect(after.order.status).toBe("succeeded")
      expect(after.txns.map((t) => [t.id, t.status, t.channel_id])).toEqual([[created.transaction_id, "failed", null], [executed.transaction_id, "completed", null]])
      expect(after.events).toEqual(["transfer.succeeded"])
      expect(tap.calls).toEqual([`${executed.transaction_id}:payout`])
      expect(yield* codeOf(transfers.execute(merchant, created.order_id, {}))).toBe("transfer_invalid_order_state")
    }).pipe(Effect.provide(world(tap)))
  })
})
