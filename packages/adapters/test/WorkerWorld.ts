/**
 * The use cases in one process, for the workers' tests under the TestClock (ReconcileBackoff,
 * SettleBackoff): memory storage, in-process locks, the test's provider behind the channel router,
 * and an outbox whose event store refuses every event while `broken()` — so every record step fails
 * (each stores an event) and nothing else does.
 */
import { type Account, Accounts, CardTokens, EventRepo, Outbox, Outflows, PaymentProvider, Payments, PublicUrl, Transfers } from "@tender/domain"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { memoryStorage } from "../src/Infrastructure.ts"
import * as ChannelProviders from "../src/providers/channels/ChannelProviders.ts"
import * as LocksMemory from "../src/locks/LocksMemory.ts"
import * as PaymentProviderSandbox from "../src/providers/sandbox/PaymentProviderSandbox.ts"
import * as SandboxLedgerMemory from "../src/providers/sandbox/SandboxLedgerMemory.ts"

const PUBLIC_URL = "http://tender.test"

/** A sandbox of its own (a fresh ledger), for the test to wrap. */
export const sandbox = () => PaymentProviderSandbox.make({ publicUrl: PUBLIC_URL }, SandboxLedgerMemory.make())

export const world = (provider: PaymentProvider["Service"], broken: () => boolean) => {
  const events = Layer.effect(
    EventRepo,
    Effect.map(Effect.service(EventRepo), (inner) =>
      EventRepo.of({ ...inner, append: (event) => (broken() ? Effect.die(new Error("the event could not be stored (test)")) : inner.append(event)) }))
  )
  const storage = events.pipe(Layer.provideMerge(memoryStorage))
  const ports = Layer.mergeAll(storage, LocksMemory.layer, Layer.succeed(PaymentProvider, provider), Layer.succeed(PublicUrl, PUBLIC_URL))
    .pipe(Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer)))
  const routed = ChannelProviders.layer({ publicUrl: PUBLIC_URL }).pipe(Layer.provideMerge(ports))
  return Layer.mergeAll(Accounts.layer, CardTokens.layer, Payments.layer, Outflows.layer, Transfers.layer).pipe(
    Layer.provideMerge(Outbox.layer),
    Layer.provideMerge(routed)
  )
}

/** The clock set to `start`, a fresh test account, and a token of the card `number`. */
export const shop = (start: number, name: string, number: string) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(start)
    const accounts = yield* Accounts
    const account: Account.Account = yield* accounts.get((yield* accounts.create({ name, mode: "test" })).account_id)
    const card = (yield* (yield* CardTokens).tokenize(account, { number, exp_month: 12, exp_year: 2030, cvc: "123" })).token
    return { account, card }
  }).pipe(Effect.orDie)

/** A 100.00 USD merchant-initiated card charge (an authorization when `manual`). */
export const charge = (account: Account.Account, card: string, reference: string, manual = false) =>
  Effect.flatMap(Effect.service(Payments), (p) =>
    p.create(account, {
      amount: "100.00",
      currency: "USD",
      country: "US",
      merchant_reference: reference,
      ...(manual ? { capture_method: "manual" as const } : {}),
      payment_method: { code: "card", details: { card_token: card, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
    })).pipe(Effect.orDie)
