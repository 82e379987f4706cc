/**
 * Refunds and payouts whose provider call goes wrong, as the HTTP suite cannot make the sandbox do:
 * an answer lost on the way back (the call in doubt: `refund_in_progress` / `payout_in_progress`,
 * then reconciliation records what the provider did), a call that never arrived (reconciliation
 * fences it: failed, `provider_unavailable`), and a provider that refuses the connection (recorded
 * failed, 502). Memory storage, in-process locks, the sandbox behind a tap, under the TestClock.
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
  Payments,
  PublicUrl,
  TransactionRepo,
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
 * What becomes of refund and payout calls: `answer` as the sandbox does; `lose` — the sandbox
 * applies it, the answer is lost; `drop` — it never reaches the sandbox, the caller hears Unknown
 * all the same; `refuse` — the connection is refused (definitely not applied).
 */
type Fate = "answer" | "lose" | "drop" | "refuse"

const lost: Unknown = { _tag: "Unknown", reason: "test" }

const world = (fate: { value: Fate }) => {
  const sandbox = PaymentProviderSandbox.make({ publicUrl: "http://tender.test" }, SandboxLedgerMemory.make())
  const through = <A>(call: Effect.Effect<A, Errors.ProviderUnavailable>) =>
    Effect.suspend((): Effect.Effect<A | Unknown, Errors.ProviderUnavailable> => {
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
  const provider: Provider["Service"] = { ...sandbox, refund: (r) => through(sandbox.refund(r)), payout: (r) => through(sandbox.payout(r)) }
  const ports = Layer.mergeAll(memoryStorage, LocksMemory.layer, Layer.succeed(PaymentProvider, provider), Layer.succeed(PublicUrl, "http://tender.test"))
    .pipe(Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer)))
  const routed = ChannelProviders.layer({ publicUrl: "http://tender.test" }).pipe(Layer.provideMerge(ports))
  return Layer.mergeAll(Accounts.layer, CardTokens.layer, Payments.layer, Outflows.layer).pipe(
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
