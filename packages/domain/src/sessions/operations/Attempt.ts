/**
 * Operation: one attempt of a checkout session's customer (the hosted form, or its test helper): a
 * transaction under the session's order, run like a direct payment's. Claim (under the order's
 * row, then the session's: at most one attempt in flight per session, refused with 409
 * `card_payment_in_progress` before any provider call) → call → record.
 */
import { Effect, Option, Result } from "effect"
import type { Customer } from "../../payments/Payment.ts"
import {
  CardPaymentInProgress,
  CheckoutSessionNotFound,
  InvalidSessionState,
  invalidField,
  PaymentUnroutable,
  UnknownPaymentMethod,
  ValidationFailed
} from "../../kernel/Errors.ts"
import { Ids } from "../../kernel/Ids.ts"
import type { Order, Transaction } from "../../payments/Payment.ts"
import { TransactionRepo } from "../../payments/PaymentPorts.ts"
import { PaymentProvider } from "../../payments/ProviderPorts.ts"
import { findMethod, homeCountry, type PaymentMethod, routable } from "../../payments/PaymentMethods.ts"
import { checkLocalFields, holderDocument } from "../../payments/RequestChecks.ts"
import { CvcStore } from "../../cards/CardPorts.ts"
import { routeFor } from "../../channels/Routing.ts"
import * as OrderAggregate from "../../payments/Order.ts"
import { CheckoutSessionRepo } from "../SessionPorts.ts"
import { revise } from "../../kernel/StateMachine.ts"
import { isInFlight } from "../../payments/Transaction.ts"
import { authorization, cardDetails, clientSecretAction, paymentCard } from "../../payments/operations/Cards.ts"
import { nowIso } from "../../kernel/Time.ts"
import { callInFlight } from "../../payments/Transaction.ts"
import { guarded, lockOrder, refuseInactive } from "../../payments/operations/Load.ts"
import { newTransaction } from "../../payments/operations/NewTransaction.ts"
import { decided, saveOrder, unitOfWork } from "../../payments/operations/Persist.ts"
import { cardInstrument, earlierInstrumentId, holderOf, issuerOfToken } from "../../payments/operations/Instrument.ts"
import { idempotencyKey, reserve } from "../../payments/operations/ProviderStep.ts"
import { runAttempt } from "../../payments/operations/RunAttempt.ts"
import { record } from "../../payments/operations/RecordAttempt.ts"
import { onRoute, routeOf } from "../../payments/operations/Route.ts"
import type { CheckoutSession } from "../CheckoutSession.ts"

/** The hosted page's payment attempt: the method chosen and its details. */
export interface SessionAttemptInput {
  readonly payment_method: {
    readonly code: string
    readonly details?: {
      readonly card_token?: string | undefined
      readonly document_id?: string | undefined
      /**
       * A card with no token: the attempt waits for the customer's card (collect_card), which the
       * hosted page collects with the browser SDK's card element and pays with `pay`.
       */
      readonly collect_card?: boolean | undefined
    } | undefined
  }
  readonly customer?: {
    readonly email?: string | undefined
    readonly name?: string | undefined
    readonly ip?: string | undefined
    readonly phone?: string | undefined
    readonly address?: Customer["address"] | undefined
  } | undefined
}

/** Whether an attempt waits on the hosted card element (collect_card): a card with no token yet. */
const waitsOnCardElement = (method: string, input: SessionAttemptInput): boolean =>
  method === "card" && input.payment_method.details?.card_token === undefined && input.payment_method.details?.collect_card === true

/** Runs to the end once started: a claimed attempt's provider call must reach its record. */
export const attempt = (sessionId: string, input: SessionAttemptInput) => Effect.uninterruptible(run(sessionId, input))

const run = Effect.fn("Payments.attemptSession")(function*(sessionId: string, input: SessionAttemptInput) {
  // The session's order is fixed at creation: read it unlocked, then lock order → session.
  const unlocked = yield* (yield* CheckoutSessionRepo).findAny(sessionId)
  if (Option.isNone(unlocked)) return yield* new CheckoutSessionNotFound({ message: `No checkout session ${sessionId}` })
  yield* refuseInactive(unlocked.value.account_id)
  const known = findMethod(input.payment_method.code)
  if (known === undefined) return yield* new UnknownPaymentMethod({ message: `Unknown payment method ${input.payment_method.code}` })
  const { account_id, livemode, currency } = unlocked.value
  // The card's facts are not known here (the hosted card element sends the card later): rules on
  // card facts do not hold for a session's attempt (issue 27, design: unknown facts never match).
  // An attempt that waits on the card element sends nothing yet: it routes dry (no breaker probe
  // claimed, no decision counted), as a create waiting for the card form does; the form's
  // submission routes for real.
  const route = yield* routeOf({ id: account_id, mode: livemode ? "live" : "test" }, {
      method: known.code,
      currency,
      country: unlocked.value.country ?? homeCountry(currency),
      amount: unlocked.value.amount,
      card: null
    }, unlocked.value.processing_profile, { dryRun: waitsOnCardElement(known.code, input) })
  return yield* onRoute(route)(attemptOn(sessionId, unlocked.value, input))
})

/** The attempt a session takes, once checked: its method, routing country, holder document, and whether it waits on the card element. */
export interface AttemptPlan {
  readonly method: PaymentMethod
  readonly country: string
  readonly document: string | undefined
  /** A card with no token yet: the hosted page's card element sends it (collect_card). */
  readonly awaitCard: boolean
  /** The session's manual capture applies to a card only. */
  readonly manual: boolean
}

/**
 * Pure: whether the session (locked, with the attempts under its order) takes this attempt now. Only
 * an open session does; one attempt at a time (409 `card_payment_in_progress`, before any provider
 * call); live money never reaches the sandbox; the method must be the session's and routable.
 */
export const planAttempt = (
  session: CheckoutSession,
  provider: { readonly mode: "test" | "live" },
  previous: ReadonlyArray<Transaction>,
  input: SessionAttemptInput
): Result.Result<AttemptPlan, InvalidSessionState | PaymentUnroutable | CardPaymentInProgress | UnknownPaymentMethod | ValidationFailed> => {
  if (session.status !== "open") {
    return Result.fail(new InvalidSessionState({ message: `Checkout session ${session.id} is ${session.status}; an attempt needs it open` }))
  }
  const unroutable = routeFor(provider, session.livemode)
  if (unroutable !== undefined) return Result.fail(unroutable)
  if (previous.some((t) => callInFlight(t) || (isInFlight(t.status) && t.next_action === null))) {
    return Result.fail(new CardPaymentInProgress({ message: `An attempt on checkout session ${session.id} is already in progress` }))
  }
  const method = findMethod(input.payment_method.code)
  if (method === undefined) return Result.fail(new UnknownPaymentMethod({ message: `Unknown payment method ${input.payment_method.code}` }))
  if (session.payment_methods !== null && !session.payment_methods.includes(method.code)) {
    return Result.fail(invalidField("payment_method.code", `${method.code} is not offered by this checkout session`))
  }
  const country = session.country ?? homeCountry(session.currency)
  if (!routable(method, country, session.currency)) {
    return Result.fail(new PaymentUnroutable({ message: `${method.code} cannot be routed for ${country} / ${session.currency}` }))
  }
  const details = input.payment_method.details
  const errors: Array<{ field: string; message: string }> = []
  const document = checkLocalFields(method, details?.document_id, input.customer?.ip, (field, message) => errors.push({ field, message }))
  const awaitCard = waitsOnCardElement(method.code, input)
  if (method.code === "card" && details?.card_token === undefined && !awaitCard) {
    errors.push({ field: "payment_method.details.card_token", message: "is required: the card, vaulted" })
  }
  if (errors.length > 0) return Result.fail(new ValidationFailed({ message: "Invalid attempt", errors }))
  return Result.succeed({ method, country, document, awaitCard, manual: session.capture_method === "manual" && method.code === "card" })
}

/** Claim → call → record of a session's attempt, on its route's provider (in context). */
const attemptOn = Effect.fnUntraced(function*(sessionId: string, unlocked: CheckoutSession, input: SessionAttemptInput) {
  const sessions = yield* CheckoutSessionRepo
  const transactions = yield* TransactionRepo
  const provider = yield* PaymentProvider
  const typedToken = input.payment_method.code === "card" ? input.payment_method.details?.card_token : undefined
  const issuer = typedToken !== undefined ? yield* issuerOfToken(unlocked.account_id, typedToken) : undefined
  const claimed = yield* unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(unlocked.order_id)
    const session = Option.getOrThrow(yield* sessions.lock(sessionId))
    const previous = yield* transactions.listByOrder(order.id)
    const planned = planAttempt(session, provider, previous, input)
    if (Result.isFailure(planned)) return yield* Effect.fail(planned.failure)
    const { method, country, document, awaitCard, manual } = planned.success
    const details = input.payment_method.details
    const card = details?.card_token !== undefined && method.code === "card" ? yield* paymentCard({ id: session.account_id, mode: session.livemode ? "live" : "test" }, details.card_token) : undefined
    const at = yield* nowIso
    // What the customer typed on the hosted page (the IP is a risk signal, never stored).
    const { ip: _ip, ...typed } = input.customer ?? {}
    const customer = Object.values(typed).some((v) => v !== undefined) ? { ...order.customer, ...typed } : order.customer
    const choices = {
      customer: customer as Order["customer"],
      payment_method: method.code,
      capture_method: manual ? "manual" as const : "automatic" as const,
      country,
      card_token: card?.card.token ?? null
    }
    // The attempt goes out now (processing), or waits on the card element as a direct payment's
    // collect_card does (the record step below moves the order): the order takes the customer's
    // choices with it either way.
    const updated = awaitCard ? revise(order, choices, at) : (yield* decided(OrderAggregate.transition(order, "attempt_sent", at, choices))).next
    yield* saveOrder(updated)
    yield* sessions.update(revise(session, { attempts: session.attempts + 1 }, at))
    // A retry on the same card keeps the order's instrument id; another card is another instrument.
    const born = yield* newTransaction(updated, manual ? "authorization" : "payment", updated.amount, {
      // The customer is on the hosted page: a 3-D Secure challenge completes on their answer.
      browser_flow: true,
      payment_instrument: card !== undefined
        ? cardInstrument(card.card, undefined, {
          id: earlierInstrumentId(previous, order.card_token === card.card.token) ?? (yield* (yield* Ids).make("paymentInstrument")),
          issuer,
          holder: holderOf(updated.customer, undefined, holderDocument(document, details?.document_id))
        })
        : null
    })
    if (awaitCard) {
      // Nothing goes to the provider until the card arrives (ClientPay): no call is reserved.
      yield* transactions.insert(born)
      return { order: updated, txn: born, card, method, document, awaitCard }
    }
    const operation = card !== undefined ? "authorize" : "start"
    const txn = yield* reserve(born, operation, idempotencyKey(born, operation), at)
    yield* transactions.insert(txn)
    return { order: updated, txn, card, method, document, awaitCard }
  }))
  const { order, txn, card } = claimed
  if (claimed.awaitCard) {
    // As a direct payment's create awaiting a card: the secret names the session's order, and the
    // session waits (pending_action) on the collect_card action until `pay` sends the card.
    yield* guarded(order.id, Effect.gen(function*() {
      const next_action = yield* clientSecretAction("collect_card", order)
      yield* record(order.id, txn.id, { _tag: "AwaitsCustomer", next_action, provider_transaction_id: null })
    }))
    return
  }
  const cvc = card !== undefined ? Option.getOrUndefined(yield* (yield* CvcStore).take(card.card.token)) : undefined
  const call = (provider: PaymentProvider["Service"]) => card !== undefined
    ? provider.authorizeCard(authorization(order, txn, cardDetails(card, cvc)))
    : provider.startPayment({
      reference: txn.id,
      idempotency_key: txn.pending_call!.key,
      method: claimed.method.code,
      amount: order.amount,
      currency: order.currency,
      country: order.country,
      document_id: claimed.document,
      customer_ip: input.customer?.ip
    })
  // The customer sees the outcome on the session; a provider outage is a declined attempt there, an
  // answer in doubt (or a lock wait past its bound) is left to reconciliation.
  yield* guarded(order.id, runAttempt("attempt", txn, call, false)).pipe(
    Effect.catchTags({ ProviderUnavailable: () => Effect.void, CardPaymentInProgress: () => Effect.void, Conflict: () => Effect.void })
  )
})
