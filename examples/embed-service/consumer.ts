/**
 * The service's flow written in TypeScript against the packages' declarations: a consumer's view of
 * the types (the CI test type-checks it with `strict` and `nodenext` outside the repository).
 */
import { Infrastructure } from "@tender/adapters"
import type { TenderConfig } from "@tender/adapters/Config"
import { type Account, Accounts, CardTokens, EventRepo, Outflows, Payments, UseCases } from "@tender/domain"
import type { OrderView, PaymentSnapshot } from "@tender/domain/payments/PaymentViews"
import { Effect, Layer } from "effect"

export const config: TenderConfig = { storage: "memory", dataDir: ".tender" }

/** Every use case over the adapters' ports. */
export const tender = UseCases.layer.pipe(Layer.provideMerge(Infrastructure.layer(config)))

export interface Outcome {
  readonly payment: PaymentSnapshot
  readonly captured: PaymentSnapshot
  readonly order: OrderView
  readonly refund: { readonly id: string; readonly status: string }
  readonly events: ReadonlyArray<string>
}

export const payCaptureRefund = (amount: string) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const account: Account.Account = yield* accounts.get((yield* accounts.create({ name: "consumer", mode: "test" })).account_id)
    const card = yield* (yield* CardTokens).tokenize(account, { number: "4242424242424242", exp_month: 12, exp_year: 2030, cvc: "123" })
    const payments = yield* Payments
    const payment = yield* payments.create(account, {
      amount,
      currency: "USD",
      country: "US",
      merchant_reference: "consumer-1",
      capture_method: "manual",
      collect_cvv: false,
      payment_method: { code: "card", details: { card_token: card.token } }
    })
    const captured = yield* payments.capture(account, { order_id: payment.order_id })
    const refund = yield* (yield* Outflows).refund(account, { order_id: payment.order_id })
    const order = yield* payments.getOrder(account, payment.order_id)
    const events = (yield* (yield* EventRepo).listByOrder(payment.order_id)).map((event) => event.type)
    const outcome: Outcome = { payment, captured, order, refund, events }
    return outcome
  })

/** Nothing left to provide: the layer covers every service the flow uses. */
export const main: Effect.Effect<Outcome, unknown> = Effect.provide(payCaptureRefund("25.00"), tender)
