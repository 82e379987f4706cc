/**
 * Operation: create a checkout session (POST /v1/checkout/sessions). Validate (pure) → refuse what no
 * provider may carry → planCreate (pure: the session and its `checkout` order, born) → insert both in
 * one unit of work → with straight_through, the single redirect method's attempt at once → respond.
 */
import { Clock, Effect, Option } from "effect"
import type { Account } from "../../accounts/Account.ts"
import type { CheckoutSessionId, OrderId } from "../../kernel/Ids.ts"
import { Ids } from "../../kernel/Ids.ts"
import { UnitOfWork } from "../../kernel/Ports.ts"
import { isoOf } from "../../kernel/Time.ts"
import * as OrderAggregate from "../../payments/Order.ts"
import type { Order } from "../../payments/Payment.ts"
import { OrderRepo } from "../../payments/PaymentPorts.ts"
import { Payments } from "../../payments/Payments.ts"
import { refuseUnroutable } from "../../payments/operations/Route.ts"
import { refuseReferenceOfOrders } from "../../payments/operations/Target.ts"
import * as Session from "../CheckoutSession.ts"
import { type CreateSessionInput, validateCreate, type ValidSession } from "../SessionRequest.ts"
import { CheckoutSessionRepo, PublicUrl } from "../SessionPorts.ts"
import { viewOf } from "./Read.ts"

/** Pure: a new session and the order it owns, both born (their aggregates' `born`) at `at`. */
export const planCreate = (
  account: Pick<Account, "id" | "mode">,
  input: CreateSessionInput,
  valid: ValidSession,
  ids: { readonly session: CheckoutSessionId; readonly order: OrderId },
  publicUrl: string,
  at: string
): { readonly order: Order; readonly session: Session.CheckoutSession } => {
  const hosted = `${publicUrl.replace(/\/+$/, "")}/checkout/${ids.session}`
  const capture_method = valid.manual ? "manual" as const : "automatic" as const
  const customer = input.customer?.email !== undefined || input.customer?.name !== undefined ? { ...input.customer } as Order["customer"] : null
  const order = OrderAggregate.born({
    id: ids.order,
    owner: account,
    subtype: "checkout",
    checkout_session_id: ids.session,
    merchant_reference: valid.reference,
    amount: valid.amount,
    currency: valid.currency,
    country: valid.routingCountry,
    payment_method: input.payment_methods?.length === 1 ? input.payment_methods[0]! : "none",
    capture_method,
    processing_profile: input.processing_profile ?? null,
    customer,
    // The provider's pages send the customer back to the hosted page, which knows what comes next.
    success_url: hosted,
    cancel_url: hosted,
    created_at: at
  })
  const session = Session.born({
    id: ids.session,
    account_id: account.id,
    livemode: order.livemode,
    order_id: order.id,
    merchant_reference: valid.reference,
    amount: valid.amount,
    currency: valid.currency,
    country: valid.country,
    capture_method,
    payment_methods: input.payment_methods ?? null,
    straight_through: input.straight_through ?? false,
    max_payment_attempts: valid.max,
    attempts: 0,
    expires_at: isoOf(valid.expiresAt),
    transaction_id: null,
    next_action: null,
    customer,
    success_url: input.success_url!,
    cancel_url: input.cancel_url!,
    locale: input.locale ?? null,
    line_items: valid.lineItems,
    collect_address: input.collect_address ?? false,
    collect_phone: input.collect_phone ?? false,
    processing_profile: input.processing_profile ?? null,
    created_at: at
  })
  return { order, session }
}

export const create = Effect.fn("Sessions.create")(function*(account: Account, input: CreateSessionInput) {
  // contract.md, Idempotency: a reference a direct payment or transfer uses is 409 whatever the body.
  yield* refuseReferenceOfOrders(account.id, input.merchant_reference)
  const now = yield* Clock.currentTimeMillis
  const valid = validateCreate(account, input, now)
  if (valid instanceof Error) return yield* Effect.fail(valid)
  // Before anything is stored: a session no provider may carry must not exist (contract.md, Providers).
  yield* refuseUnroutable(account)
  const ids = yield* Ids
  const sessionIds = { session: yield* ids.make("checkoutSession"), order: yield* ids.make("order") }
  const { order, session } = planCreate(account, input, valid, sessionIds, yield* PublicUrl, isoOf(now))
  const sessions = yield* CheckoutSessionRepo
  const orders = yield* OrderRepo
  yield* (yield* UnitOfWork).transaction(Effect.gen(function*() {
    yield* orders.insert(order)
    yield* sessions.insert(session)
  }))
  // straight_through: the single redirect method starts at once; the session waits on it.
  if (session.straight_through) yield* (yield* Payments).attemptSession(session.id, { payment_method: { code: session.payment_methods![0]! } })
  return yield* viewOf(Option.getOrThrow(yield* sessions.findAny(session.id)))
})
