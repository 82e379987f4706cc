/**
 * Routing over an account's channels, end to end through the use cases: memory storage, the
 * channel registry, the ChannelProviders adapter building real Stripe and Adyen clients, and the two
 * providers' wire-level fakes over real HTTP. What is asserted is where the money went: the
 * transaction's channel and the payments each fake holds; and (issue 27) the routing each attempt
 * records, the cascade's rewrite of it, the channels' health it feeds, and smart retries.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import {
  type Account,
  Accounts,
  CardTokens,
  ChannelHealth,
  Channels,
  EventRepo,
  Faults,
  Outbox,
  Outflows,
  PaymentProvider,
  Payments,
  PublicUrl,
  TransactionRepo,
  Transfers
} from "@tender/domain"
import { Effect, Layer } from "effect"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { memoryStorage } from "../src/Infrastructure.ts"
import * as LocksMemory from "../src/locks/LocksMemory.ts"
import * as AdyenFake from "../src/providers/adyen/AdyenFake.ts"
import * as ChannelProviders from "../src/providers/channels/ChannelProviders.ts"
import * as PaymentProviderSandbox from "../src/providers/sandbox/PaymentProviderSandbox.ts"
import * as SandboxLedgerMemory from "../src/providers/sandbox/SandboxLedgerMemory.ts"
import * as StripeFake from "../src/providers/stripe/StripeFake.ts"

const PUBLIC_URL = "http://tender.test"

let stripe: StripeFake.StripeFake
let adyen: AdyenFake.AdyenFake

beforeAll(async () => {
  stripe = await StripeFake.start()
  adyen = await AdyenFake.start()
})

afterAll(async () => {
  await stripe?.close()
  await adyen?.close()
})

/** The fault point a test arms: reaching it dies there, as a crash would stop the process. */
let armed: string | undefined

/** Every use case over memory storage; channels' clients reach the two fakes. */
const world = () => {
  const ports = Layer.mergeAll(
    memoryStorage,
    LocksMemory.layer,
    Layer.succeed(Faults, { at: (point: string) => point === armed ? Effect.die(new Error(`killed at ${point}`)) : Effect.void }),
    Layer.succeed(PaymentProvider, PaymentProviderSandbox.make({ publicUrl: PUBLIC_URL }, SandboxLedgerMemory.make())),
    Layer.succeed(PublicUrl, PUBLIC_URL)
  ).pipe(Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer)))
  const routed = ChannelProviders.layer({
    publicUrl: PUBLIC_URL,
    endpoints: { stripe: { apiUrl: stripe.url }, adyen: { apiUrl: adyen.endpoint, caCertificate: adyen.caCertificate } },
    timeoutMs: 5_000
  }).pipe(Layer.provideMerge(ports))
  return Channels.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Accounts.layer, CardTokens.layer, Payments.layer, Transfers.layer, Outflows.layer)),
    Layer.provideMerge(Outbox.layer),
    Layer.provideMerge(routed)
  )
}

const STRIPE = { secret_key: "sk_test_51RoutingTest", webhook_secret: "whsec_RoutingTest" }
const ADYEN = () => ({ api_key: adyen.apiKey, merchant_account: adyen.merchantAccount, hmac_key: "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056" })

let seq = 0

/** A test account with a Stripe channel (priority 10) and an Adyen channel (priority 0). */
const shop = Effect.gen(function*() {
  const accounts = yield* Accounts
  const account: Account.Account = yield* accounts.get((yield* accounts.create({ name: `routing-${++seq}`, mode: "test" })).account_id)
  const channels = yield* Channels
  const settings = { mode: "test" as const, methods: null, currencies: null, countries: null }
  const onStripe = yield* channels.add(account.id, { provider: "stripe", ...settings, priority: 10, credentials: STRIPE })
  const onAdyen = yield* channels.add(account.id, { provider: "adyen", ...settings, priority: 0, credentials: ADYEN() })
  return { account, stripe: onStripe.id, adyen: onAdyen.id }
})

/** A merchant-initiated 25.00 EUR charge on a vaulted Stripe/Adyen test card, under `profile`. */
const charge = (account: Account.Account, profile?: string, method = "card") =>
  Effect.gen(function*() {
    const card = yield* (yield* CardTokens).tokenize(account, { number: "5555555555554444", exp_month: 12, exp_year: 2031, cvc: "123" })
    return yield* (yield* Payments).create(account, {
      amount: "25.00",
      currency: "EUR",
      country: "NL",
      merchant_reference: `routing-${Date.now()}-${++seq}`,
      ...(profile === undefined ? {} : { processing_profile: profile }),
      payment_method: { code: method, details: { card_token: card.token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
    })
  })

const transactionsOf = (orderId: string) => Effect.gen(function*() { return yield* (yield* TransactionRepo).listByOrder(orderId) })
const attemptOf = (orderId: string) => Effect.map(transactionsOf(orderId), (all) => all[0]!)

const heldBy = (reference: string) => ({
  stripe: stripe.paymentIntents().filter((p) => p.metadata?.["tender_reference"] === reference || JSON.stringify(p).includes(reference)).length,
  adyen: adyen.payments().filter((p) => JSON.stringify(p).includes(reference)).length
})

describe("routing over channels", () => {
  it.live("the highest-priority channel takes the payment; the transaction records it", () =>
    Effect.gen(function*() {
      const { account, adyen: onAdyen, stripe: onStripe } = yield* shop
      const paid = yield* charge(account)
      expect(paid.status).toBe("completed")
      const attempt = yield* attemptOf(paid.order_id)
      expect([attempt.provider, attempt.channel_id]).toEqual(["stripe", onStripe])
      expect(heldBy(attempt.id)).toEqual({ stripe: 1, adyen: 0 })
      // No rules set: version 0, every usable channel by priority, the first chosen by default.
      const routing = { rule: null, version: 0, candidates: [onStripe, onAdyen], channel: onStripe, reason: "default", attempt: 1 }
      expect(attempt.routing).toEqual(routing)
      expect((yield* (yield* Payments).getTransaction(account, attempt.id)).routing).toEqual(routing)
      // A refund goes to the original's channel: naming another is refused; naming it (or none) refunds there.
      const outflows = yield* Outflows
      expect((yield* Effect.flip(outflows.refund(account, { order_id: paid.order_id, channel_id: onAdyen }))).code).toBe("transaction_provider_mismatch")
      const refund = yield* outflows.refund(account, { order_id: paid.order_id, amount: "5.00", channel_id: onStripe })
      expect(refund.status).toBe("succeeded")
      expect(stripe.refunds().filter((r) => r.payment_intent === attempt.provider_transaction_id)).toHaveLength(1)
    }).pipe(Effect.provide(world())))

  it.live("Stripe refusing connections: the payment cascades to Adyen, which alone holds it", () =>
    Effect.gen(function*() {
      const { account, adyen: onAdyen, stripe: onStripe } = yield* shop
      yield* Effect.promise(() => stripe.refuse())
      const paid = yield* charge(account).pipe(Effect.ensuring(Effect.promise(() => stripe.accept())))
      expect(paid.status).toBe("completed")
      const attempt = yield* attemptOf(paid.order_id)
      expect([attempt.provider, attempt.channel_id, attempt.pending_call]).toEqual(["adyen", onAdyen, null])
      expect(heldBy(attempt.id)).toEqual({ stripe: 0, adyen: 1 })
      // The one transaction moved on: its routing says so (the next try, after a retry).
      expect(attempt.routing).toEqual({ rule: null, version: 0, candidates: [onStripe, onAdyen], channel: onAdyen, reason: "retry", attempt: 2 })
    }).pipe(Effect.provide(world())))

  it.live("a capture goes to the channel holding the authorization, not the highest-priority one", () =>
    Effect.gen(function*() {
      const { account, adyen: onAdyen, stripe: onStripe } = yield* shop
      yield* Effect.promise(() => stripe.refuse())
      const card = yield* (yield* CardTokens).tokenize(account, { number: "5555555555554444", exp_month: 12, exp_year: 2031, cvc: "123" })
      const held = yield* (yield* Payments).create(account, {
        amount: "25.00",
        currency: "EUR",
        country: "NL",
        merchant_reference: `routing-capture-${++seq}`,
        capture_method: "manual",
        payment_method: { code: "card", details: { card_token: card.token, stored_credential: { initiator: "merchant", reason: "unscheduled" } } }
      }).pipe(Effect.ensuring(Effect.promise(() => stripe.accept())))
      expect(held.status).toBe("authorized")
      // Naming another channel than the one holding the authorization: refused, nothing sent or stored.
      const misnamed = yield* Effect.flip((yield* Payments).capture(account, { order_id: held.order_id, channel_id: onStripe }))
      expect([misnamed.code, misnamed.errors]).toEqual(["transaction_provider_mismatch", [{ field: "channel_id", message: "is not the channel holding the transaction" }]])
      expect((yield* Effect.flip((yield* Payments).void(account, { order_id: held.order_id, channel_id: "ch_other" }))).code).toBe("transaction_provider_mismatch")
      expect(yield* transactionsOf(held.order_id)).toHaveLength(1)
      const captured = yield* (yield* Payments).capture(account, { order_id: held.order_id, channel_id: onAdyen })
      expect(captured.status).not.toBe("failed")
      const all = yield* transactionsOf(held.order_id)
      expect(all.map((t) => [t.kind, t.channel_id])).toEqual([["authorization", onAdyen], ["capture", onAdyen]])
      expect(adyen.modifications().filter((m) => JSON.stringify(m).includes(all[1]!.id))).toHaveLength(1)
    }).pipe(Effect.provide(world())))

  it.live("a profile pinned to the Adyen channel routes there although Stripe's priority is higher", () =>
    Effect.gen(function*() {
      const { account, adyen: onAdyen } = yield* shop
      yield* (yield* Accounts).addProfile(account.id, "eu", null)
      const pinned = yield* (yield* Channels).pin(account.id, "eu", [onAdyen])
      expect(pinned.processing_profiles[0]?.channels).toEqual([onAdyen])
      const paid = yield* charge(pinned, "eu")
      const attempt = yield* attemptOf(paid.order_id)
      expect([paid.status, attempt.channel_id]).toEqual(["completed", onAdyen])
    }).pipe(Effect.provide(world())))

  it.live("a profile whose pinned channels are all disabled: payment_unroutable, nothing stored or sent", () =>
    Effect.gen(function*() {
      const { account, adyen: onAdyen } = yield* shop
      yield* (yield* Accounts).addProfile(account.id, "eu", null)
      const pinned = yield* (yield* Channels).pin(account.id, "eu", [onAdyen])
      yield* (yield* Channels).disable(account.id, onAdyen)
      const before = adyen.payments().length
      const error = yield* Effect.flip(charge(pinned, "eu"))
      expect(error.code).toBe("payment_unroutable")
      expect(adyen.payments().length).toBe(before)
    }).pipe(Effect.provide(world())))

  it.live("pinning refuses unknown and disabled channels and unknown profiles, naming each", () =>
    Effect.gen(function*() {
      const { account, stripe: onStripe } = yield* shop
      yield* (yield* Accounts).addProfile(account.id, "eu", null)
      yield* (yield* Channels).disable(account.id, onStripe)
      const refused = yield* Effect.flip((yield* Channels).pin(account.id, "eu", ["ch_nope", onStripe]))
      expect(refused.code).toBe("validation_failed")
      expect(refused.errors?.map((e) => e.message)).toEqual([`no channel ch_nope on account ${account.id}`, `channel ${onStripe} is disabled`])
      const unknown = yield* Effect.flip((yield* Channels).pin(account.id, "nope", []))
      expect(unknown.errors).toEqual([{ field: "profile", message: "no processing profile nope on this account" }])
    }).pipe(Effect.provide(world())))

  it.live("transfers: card channels pay none; named channel checks come first", () =>
    Effect.gen(function*() {
      const { account, stripe: onStripe } = yield* shop
      const transfers = yield* Transfers
      const input = (channel_id?: string) => ({
        amount: "10.00",
        currency: "EUR",
        country: "DE",
        merchant_reference: `routing-transfer-${++seq}`,
        payment_method: { code: "bank_transfer", details: { iban: "DE89370400440532013000", holder_name: "Ada Lovelace" } },
        ...(channel_id === undefined ? {} : { channel_id })
      })
      expect((yield* Effect.flip(transfers.create(account, input()))).code).toBe("transfer_unroutable")
      expect((yield* Effect.flip(transfers.create(account, input(onStripe)))).code).toBe("transfer_not_supported_by_provider")
      expect((yield* Effect.flip(transfers.create(account, input("ch_unknown")))).code).toBe("provider_not_enabled_for_merchant")
    }).pipe(Effect.provide(world())))
})

/** A customer-initiated 25.00 EUR card create (the customer's code not asked again) on `number`, or a merchant-initiated one. */
const pay = (account: Account.Account, number: string, initiator: "customer" | "merchant" = "customer", reference = `retry-${Date.now()}-${++seq}`) =>
  Effect.gen(function*() {
    const card = yield* (yield* CardTokens).tokenize(account, { number, exp_month: 12, exp_year: 2031, cvc: "123" })
    return yield* (yield* Payments).create(account, {
      amount: "25.00",
      currency: "EUR",
      country: "NL",
      merchant_reference: reference,
      collect_cvv: false,
      payment_method: {
        code: "card",
        details: initiator === "customer"
          ? { card_token: card.token }
          : { card_token: card.token, stored_credential: { initiator: "merchant", reason: "unscheduled" } }
      }
    })
  })

describe("routing decisions recorded, and smart retries (issue 27)", () => {
  it.live("a rule decides: the attempt records the rule, its version, the candidates and why", () =>
    Effect.gen(function*() {
      const { account, adyen: onAdyen, stripe: onStripe } = yield* shop
      const { version } = yield* (yield* Channels).setRouting(account.id, null, {
        rules: [{ id: "euro-to-adyen", when: { currency: ["EUR"] }, then: { channels: [onAdyen, onStripe] } }],
        strategy: "ordered"
      })
      const paid = yield* charge(account)
      const attempt = yield* attemptOf(paid.order_id)
      expect([paid.status, attempt.channel_id]).toEqual(["completed", onAdyen])
      expect(attempt.routing).toEqual({ rule: "euro-to-adyen", version, candidates: [onAdyen, onStripe], channel: onAdyen, reason: "rule", attempt: 1 })
      expect(heldBy(attempt.id)).toEqual({ stripe: 0, adyen: 1 })
    }).pipe(Effect.provide(world())))

  it.live("processing_error on Stripe: retried once on Adyen, approved; two transactions, one charge at each fake at most, the order succeeded", () =>
    Effect.gen(function*() {
      const { account, adyen: onAdyen, stripe: onStripe } = yield* shop
      const paid = yield* pay(account, "4000000000000119")
      expect(paid.status).toBe("completed")
      const [first, second, ...more] = yield* transactionsOf(paid.order_id)
      expect(more).toEqual([])
      expect(paid.transaction_id).toBe(second!.id)
      expect([first!.status, first!.decline_code, first!.channel_id, first!.pending_call]).toEqual(["failed", "processing_error", onStripe, null])
      expect([second!.status, second!.channel_id, second!.kind, second!.amount]).toEqual(["completed", onAdyen, first!.kind, first!.amount])
      const routing = { rule: null, version: 0, candidates: [onStripe, onAdyen], channel: onStripe, reason: "default", attempt: 1 }
      expect(first!.routing).toEqual(routing)
      expect(second!.routing).toEqual({ ...routing, channel: onAdyen, reason: "retry", attempt: 2 })
      expect(second!.payment_instrument).toEqual(first!.payment_instrument)
      expect(heldBy(first!.id)).toEqual({ stripe: 1, adyen: 0 })
      expect(heldBy(second!.id)).toEqual({ stripe: 0, adyen: 1 })
      const order = yield* (yield* Payments).getOrder(account, paid.order_id)
      expect([order.status, order.transactions]).toEqual(["succeeded", [first!.id, second!.id]])
      // One payment, one outcome: the first try's decline moved nothing, so no payment.failed was emitted.
      const events = yield* (yield* EventRepo).listByOrder(paid.order_id)
      expect(events.map((e) => e.type)).toEqual(["payment.succeeded"])
      expect(events[0]!.data["routing"]).toEqual(second!.routing)
      // Both answers fed the channels' health: Stripe's decline counts against it, Adyen's approval for it.
      const standings = yield* (yield* ChannelHealth).standings([onStripe, onAdyen], { method: "card", currency: "EUR", brand: "visa" }, Date.now())
      expect(standings.map((s) => [s.channel_id, s.rate])).toEqual([[onStripe, { attempts: 1, approvals: 0 }], [onAdyen, { attempts: 1, approvals: 1 }]])
    }).pipe(Effect.provide(world())))

  it.live("the SDK's pay (client_pay): the card form's attempt is routed when it goes out, and a processing_error is retried once on Adyen", () =>
    Effect.gen(function*() {
      const { account, adyen: onAdyen, stripe: onStripe } = yield* shop
      const payments = yield* Payments
      const form = yield* payments.create(account, {
        amount: "25.00", currency: "EUR", country: "NL", merchant_reference: `retry-pay-${++seq}`,
        success_url: "https://shop.example/ok", cancel_url: "https://shop.example/cancel",
        payment_method: { code: "card", details: {} }
      })
      expect(form.next_action?.type).toBe("collect_card")
      const card = yield* (yield* CardTokens).tokenize(account, { number: "4000000000000119", exp_month: 12, exp_year: 2031, cvc: "123" })
      const paid = yield* payments.clientPay(account, form.order_id, card.token)
      const [first, second] = yield* transactionsOf(form.order_id)
      expect([paid.order.status, paid.txn.id]).toEqual(["succeeded", second!.id])
      expect([first!.status, first!.decline_code, first!.routing?.channel, first!.routing?.attempt]).toEqual(["failed", "processing_error", onStripe, 1])
      expect([second!.status, second!.routing?.channel, second!.routing?.reason, second!.routing?.attempt]).toEqual(["completed", onAdyen, "retry", 2])
      expect(second!.browser_flow).toBe(true)
      expect([heldBy(first!.id), heldBy(second!.id)]).toEqual([{ stripe: 1, adyen: 0 }, { stripe: 0, adyen: 1 }])
    }).pipe(Effect.provide(world())))

  it.live("no retry for insufficient_funds, card_declined (it carries fraud, lost, stolen), nor a merchant-initiated charge: one transaction, nothing at Adyen", () =>
    Effect.gen(function*() {
      const { account, stripe: onStripe } = yield* shop
      const cases = [
        ["4000000000009995", "customer", "insufficient_funds"],
        ["4000000000000002", "customer", "card_declined"],
        ["4000000000000119", "merchant", "processing_error"]
      ] as const
      for (const [number, initiator, code] of cases) {
        const paid = yield* pay(account, number, initiator)
        expect(paid.status).toBe("failed")
        const all = yield* transactionsOf(paid.order_id)
        expect(all.map((t) => [t.status, t.decline_code, t.channel_id])).toEqual([["failed", code, onStripe]])
        expect(heldBy(all[0]!.id)).toEqual({ stripe: 1, adyen: 0 })
        expect((yield* (yield* Payments).getOrder(account, paid.order_id)).status).toBe("failed")
      }
    }).pipe(Effect.provide(world())))

  it.live("killed between the two tries (create.retry_reserved): reconciliation finds the second call never sent, fails it and the payment, nothing charged", () =>
    Effect.gen(function*() {
      const { account, adyen: onAdyen } = yield* shop
      const reference = `retry-killed-${++seq}`
      armed = "create.retry_reserved"
      const killed = yield* Effect.exit(pay(account, "4000000000000119", "customer", reference)).pipe(
        Effect.ensuring(Effect.sync(() => void (armed = undefined)))
      )
      expect(killed._tag).toBe("Failure")
      // Its first try failed, its second reserved on Adyen and never sent.
      const order = yield* (yield* Payments).getOrderByReference(account, reference)
      const [first, second] = yield* transactionsOf(order.id)
      expect([order.status, first!.status, second!.status, second!.channel_id]).toEqual(["processing", "failed", "processing", onAdyen])
      expect(second!.pending_call?.operation).toBe("authorize")
      expect(heldBy(second!.id)).toEqual({ stripe: 0, adyen: 0 })
      expect(yield* (yield* Payments).reconcileDue({ graceMs: 0, horizonMs: 24 * 60 * 60 * 1000 })).toBeGreaterThanOrEqual(1)
      const [, after] = yield* transactionsOf(order.id)
      expect([after!.status, after!.pending_call]).toEqual(["failed", null])
      expect((yield* (yield* Payments).getOrder(account, order.id)).status).toBe("failed")
      expect(heldBy(second!.id)).toEqual({ stripe: 0, adyen: 0 })
    }).pipe(Effect.provide(world())))
})
