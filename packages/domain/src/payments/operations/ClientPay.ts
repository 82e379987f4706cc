/**
 * Operation: the customer submits a card form (collect_card / collect_cvv) — the browser SDK's
 * `pay`, and the sandbox's simulate acting as that customer. The attempt the create left awaiting
 * the customer is reserved under the order's lock (one authorize call, its idempotency key), sent
 * through the provider step and recorded, exactly as the create's own authorization would be; a
 * repeat finds the form no longer awaiting and is refused, never sent twice.
 */
import { Effect, Option } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { CardPaymentInProgress, CardPaymentInvalidOrderState, type DomainError, invalidField, OrderNotFound } from "../../kernel/Errors.ts"
import { Ids } from "../../kernel/Ids.ts"
import * as OrderAggregate from "../Order.ts"
import type { Order, PaymentInstrument, Transaction } from "../Payment.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"
import { type CardDetails, PaymentProvider } from "../ProviderPorts.ts"
import { CvcStore } from "../../cards/CardPorts.ts"
import { revise } from "../../kernel/StateMachine.ts"
import { authorization, cardDetails, usableCard } from "./Cards.ts"
import { cardInstrument, holderOf, issuerOf } from "./Instrument.ts"
import { nowIso } from "../../kernel/Time.ts"
import { callInFlight, latestAttempt } from "../Transaction.ts"
import { guarded, loadTxn, lockOrder } from "./Load.ts"
import { decided, saveOrder, saveTxn, unitOfWork } from "./Persist.ts"
import { idempotencyKey, reserve, runAttempt, type StepName } from "./ProviderStep.ts"
import { onRoute, orderRoute, providerFields, RouteChosen } from "./Route.ts"
import { cardFacts as cardFactsOf } from "../../channels/operations/PlanRoute.ts"
import type { CardFacts } from "../../channels/RoutingModel.ts"

/** The attempt waits on the customer's card form, and nothing of it reached the provider yet. */
export const awaitsCardForm = (txn: Transaction) =>
  !callInFlight(txn) && (txn.next_action?.type === "collect_card" || txn.next_action?.type === "collect_cvv")

/**
 * Sends the form's card: reserve (under the order's lock, refused with `refuse` unless the form
 * still awaits) → authorize → record. A new card (collect_card) becomes the order's card and the
 * attempt's instrument in the reserving unit of work, so a 3-D Secure completion finds it; a
 * customer return URL, and that the attempt is a browser flow's, are kept on the attempt in the same
 * write, before any challenge can exist.
 */
export const submitCardForm = <E extends DomainError>(
  step: StepName,
  order: Order,
  attemptId: string,
  card: CardDetails,
  refuse: (current: Transaction) => E,
  extra: {
    readonly newCard?: { readonly token: string; readonly instrument: PaymentInstrument } | undefined
    readonly customerReturnUrl?: string | undefined
    /** The facts of the card being paid, for the rules that test them (issue 27); null when not known. */
    readonly cardFacts?: CardFacts | null
  } = {}
) =>
  // The form's attempt waited on the customer with nothing sent: it goes out on the route as it is now,
  // recording that route's decision.
  Effect.flatMap(orderRoute(order, extra.cardFacts ?? null), (route) => onRoute(route)(guarded(order.id, Effect.gen(function*() {
    const provider = yield* PaymentProvider
    const routing = yield* RouteChosen
    const reserved = yield* unitOfWork(Effect.gen(function*() {
      const locked = yield* lockOrder(order.id)
      const current = yield* loadTxn(attemptId)
      if (!awaitsCardForm(current)) return yield* Effect.fail(refuse(current))
      const at = yield* nowIso
      const { newCard, customerReturnUrl } = extra
      const txn = yield* reserve(
        {
          ...current,
          ...providerFields(provider),
          routing,
          // The customer pays here: a 3-D Secure challenge of this attempt completes on their answer.
          browser_flow: true,
          ...(newCard === undefined ? {} : { payment_instrument: newCard.instrument }),
          ...(customerReturnUrl === undefined ? {} : { customer_return_url: customerReturnUrl })
        },
        "authorize",
        idempotencyKey(current, "authorize"),
        at
      )
      yield* saveTxn(txn)
      // The customer acted: the order leaves requires_action for processing (a 3-D Secure challenge
      // can then bring it back), carrying the new card if there is one.
      const changes = newCard === undefined ? {} : { card_token: newCard.token }
      yield* saveOrder(locked.status === "requires_action"
        ? (yield* decided(OrderAggregate.transition(locked, "action_completed", at, changes))).next
        : revise(locked, changes, at))
      return txn
    }))
    // The customer's own payment (the SDK's pay) is retried once on the next channel after a retryable
    // decline (issue 27, smart retries); the sandbox's simulate acts for a test and is not.
    return yield* runAttempt(step, reserved, (provider, txn) => provider.authorizeCard(authorization(order, txn, card)), false, {
      smartRetry: step === "client_pay"
    })
  }))))

/** Why a form can no longer be paid: its call is out (in doubt), or the attempt moved on. */
const refusePay = (current: Transaction) =>
  callInFlight(current)
    ? new CardPaymentInProgress({ message: "This payment was already submitted; its outcome is not known yet" })
    : new CardPaymentInvalidOrderState({ message: "This payment no longer awaits a card: it was already submitted" })

/**
 * `url` with `tender_payment_id=<orderId>` appended to its query (contract.md, Browser SDK `pay`):
 * its own query parameters are kept as written (`&` when it has a query), a fragment stays last.
 */
export const withPaymentId = (url: string, orderId: string): string => {
  const hash = url.indexOf("#")
  const base = hash < 0 ? url : url.slice(0, hash)
  const fragment = hash < 0 ? "" : url.slice(hash)
  const query = base.indexOf("?")
  const separator = query < 0 ? "?" : query === base.length - 1 || base.endsWith("&") ? "" : "&"
  return `${base}${separator}tender_payment_id=${encodeURIComponent(orderId)}${fragment}`
}

/**
 * The browser SDK's pay: the payment's card form submitted with `token` (collect_card: a card just
 * vaulted for it; collect_cvv: the saved card, whose CVC was just collected). The CVC kept for the
 * token is used once. `returnUrl` (an http(s) URL the caller checked) is where a challenge of this
 * attempt sends the customer back to, with the payment's id appended. Returns the order and its
 * attempt as recorded.
 */
export const clientPay = Effect.fn("Payments.clientPay")(function*(account: Account, orderId: string, token: string, returnUrl?: string) {
  const found = yield* (yield* OrderRepo).find(account.id, orderId)
  if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${orderId}` })
  const order = found.value
  const attempt = latestAttempt(yield* (yield* TransactionRepo).listByOrder(order.id))
  if (attempt === undefined || !awaitsCardForm(attempt)) {
    return yield* Effect.fail(attempt === undefined
      ? new CardPaymentInvalidOrderState({ message: `Payment ${order.id} has no card form awaiting the customer` })
      : refusePay(attempt))
  }
  const savedCard = attempt.next_action?.type === "collect_cvv"
  if (savedCard && token !== order.card_token) return yield* invalidField("token", "must be the saved card's token for this payment")
  const card = yield* usableCard(account, token, "token")
  const cvc = yield* (yield* CvcStore).take(token)
  const issuer = yield* issuerOf(card.card.bin)
  const newCard = savedCard ? undefined : {
    token,
    instrument: cardInstrument(card.card, undefined, {
      id: yield* (yield* Ids).make("paymentInstrument"),
      issuer,
      holder: holderOf(order.customer, undefined, undefined)
    })
  }
  yield* submitCardForm("client_pay", order, attempt.id, cardDetails(card, Option.getOrUndefined(cvc)), refusePay, {
    newCard,
    customerReturnUrl: returnUrl === undefined ? undefined : withPaymentId(returnUrl, order.id),
    cardFacts: cardFactsOf({ bin: card.card.bin, brand: card.card.brand, funding: card.card.funding, issuer_country: issuer.country_code ?? null })
  })
    // An unreachable provider was recorded as the attempt's decline: the payment reads as failed.
    .pipe(Effect.catchTag("ProviderUnavailable", () => Effect.void))
  const orderNow = Option.getOrThrow(yield* (yield* OrderRepo).find(account.id, orderId))
  // The latest attempt: a smart retry's second try when the first was retried (issue 27).
  return { order: orderNow, txn: latestAttempt(yield* (yield* TransactionRepo).listByOrder(order.id)) ?? (yield* loadTxn(attempt.id)) }
})
