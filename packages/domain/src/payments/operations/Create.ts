/**
 * Operation: create a direct payment (POST /v1/payments). Validate → claim (the order and its
 * attempt, the reference taken by the insert, the provider call reserved, one unit of work) →
 * call → record → respond; claim, call and record in one unit of work when the provider answers
 * in it (the sandbox over PostgreSQL). A create answered 502 leaves its order open for the same
 * request again (contract.md, Idempotency): that retry claims the order under its row lock instead.
 */
import { Effect, Option } from "effect"
import type { Account } from "../../accounts/Account.ts"
import { Ids } from "../../kernel/Ids.ts"
import * as OrderAggregate from "../Order.ts"
import type { Order, Transaction } from "../Payment.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"
import { PaymentProvider } from "../ProviderPorts.ts"
import { type CreatePaymentInput, validateCreate, type ValidPayment } from "../PaymentRequest.ts"
import { CvcStore } from "../../cards/CardPorts.ts"
import { revise } from "../../kernel/StateMachine.ts"
import { authorization, cardDetails, clientSecretAction, paymentCard, type RevealedCard } from "./Cards.ts"
import { customerOf } from "../../customers/operations/FindCustomer.ts"
import type { CustomerRecord } from "../../customers/Customer.ts"
import { cardInstrument, holderOf, issuerOf } from "./Instrument.ts"
import { nowIso } from "../../kernel/Time.ts"
import { guarded } from "./Load.ts"
import { newTransaction } from "./NewTransaction.ts"
import { decided, saveOrder, unitOfWork } from "./Persist.ts"
import { snapshot } from "./Snapshot.ts"
import { lockRetry, requestHashOf, retryOf } from "./Retry.ts"
import { answersInUnitOfWork, idempotencyKey, joined, raise, reserve } from "./ProviderStep.ts"
import { runAttempt, runAttemptInUnitOfWork } from "./RunAttempt.ts"
import { Fallbacks, onRoute, routeOf } from "./Route.ts"
import { factsOf } from "../../channels/operations/PlanRoute.ts"
import { type AttemptOutcome, record } from "./RecordAttempt.ts"

/** What the create does after the claim: call the provider, or wait on the customer. */
type Plan =
  | { readonly _tag: "Authorize"; readonly card: RevealedCard; readonly cvc: string | undefined }
  | { readonly _tag: "Start" }
  | { readonly _tag: "AwaitCustomer"; readonly type: "collect_card" | "collect_cvv" }

/** The card form a create waits on (nothing is sent to a provider), known before routing; none when it sends. */
const awaitedForm = (valid: ValidPayment, card: RevealedCard | undefined): "collect_card" | "collect_cvv" | undefined => {
  if (valid.method.code !== "card") return undefined
  if (card === undefined) return "collect_card"
  return !valid.merchant_initiated && !valid.skip_cvv ? "collect_cvv" : undefined
}

const planOf = (valid: ValidPayment, card: RevealedCard | undefined, cvc: string | undefined): Plan => {
  if (valid.method.code !== "card") return { _tag: "Start" }
  const awaited = awaitedForm(valid, card)
  if (awaited !== undefined) return { _tag: "AwaitCustomer", type: awaited }
  // A merchant-initiated charge goes without the customer's code, whatever the token still holds.
  // (A card payment without a card awaits collect_card: here there is one.)
  return { _tag: "Authorize", card: card!, cvc: valid.merchant_initiated ? undefined : cvc }
}

export const create = Effect.fn("Payments.create")(function*(account: Account, input: CreatePaymentInput) {
  const requestHash = yield* requestHashOf(input)
  const retrying = yield* retryOf(account.id, input.merchant_reference, "direct_payment", requestHash)
  const valid = validateCreate(account, input)
  if (valid instanceof Error) return yield* Effect.fail(valid)
  // Checked before anything is written: a payment names only a customer of its own account (and
  // this refusal comes first, as it did before routing read the card).
  const customer = valid.customer_id !== null ? yield* customerOf(account.id, valid.customer_id) : undefined
  // The card is read before routing (issue 27): its BIN, brand, funding and issuer country are facts
  // the account's rules may test. The issuer is looked up on the ambient provider, before any channel
  // is chosen (the built-in BIN table); the instrument's own issuer is still the route's provider's.
  const card = valid.card_token !== undefined ? yield* paymentCard(account, valid.card_token) : undefined
  const facts = factsOf(
    { method: valid.method.code, currency: valid.currency, country: valid.country, amount: valid.amount },
    card?.card,
    card === undefined ? undefined : yield* issuerOf(card.card.bin)
  )
  // A create that waits on the card form sends nothing: its route is planned (the attempt records it)
  // without claiming a breaker probe or counting a decision; the form's submission routes again.
  const route = yield* routeOf(account, facts, valid.processing_profile, { dryRun: awaitedForm(valid, card) !== undefined })
  return yield* onRoute(route)(claimAndProceed(account, valid, requestHash, retrying, card, customer))
})

/** Claim → call → record, on the route's provider (in context); on `retrying`'s order when it is a retry after a 502. */
const claimAndProceed = Effect.fnUntraced(function*(
  account: Account,
  valid: ValidPayment,
  requestHash: string,
  retrying: Order | undefined,
  card: RevealedCard | undefined,
  customer: CustomerRecord | undefined
) {
  // The token's CVC is taken (deleted) as soon as a payment uses the card, whatever the plan: a
  // merchant-initiated charge never sends it, and a collect_cvv payment asks the customer afresh.
  // A retry after a 502 finds it taken by the first create and authorizes without it.
  const cvc = card !== undefined ? Option.getOrUndefined(yield* (yield* CvcStore).take(card.card.token)) : undefined
  const issuer = card !== undefined ? yield* issuerOf(card.card.bin) : undefined
  const plan = planOf(valid, card, cvc)
  const ids = yield* Ids
  const at = yield* nowIso
  const base: Order = retrying ?? OrderAggregate.born({
    id: yield* ids.make("order"),
    owner: account,
    subtype: "direct_payment",
    merchant_reference: valid.merchant_reference,
    amount: valid.amount,
    currency: valid.currency,
    country: valid.country,
    payment_method: valid.method.code,
    capture_method: valid.capture_method,
    processing_profile: valid.processing_profile,
    customer: valid.customer,
    success_url: valid.success_url,
    cancel_url: valid.cancel_url,
    card_token: valid.card_token,
    customer_id: valid.customer_id,
    card_storage_consent: valid.card_storage_consent,
    request_hash: requestHash,
    created_at: at
  })
  const attempt = yield* newTransaction(base, valid.capture_method === "manual" ? "authorization" : "payment", base.amount, {
    // The order's one instrument id: its captures and voids copy the attempt's instrument.
    payment_instrument: card !== undefined
      ? cardInstrument(card.card, undefined, {
        id: yield* ids.make("paymentInstrument"),
        issuer,
        holder: holderOf(valid.customer, customer, valid.holder_document)
      })
      : null
  })
  // A provider call is reserved with the claim: the attempt goes out (processing) with its key.
  const operation = plan._tag === "Authorize" ? "authorize" as const : "start" as const
  const txn: Transaction = plan._tag === "AwaitCustomer"
    ? attempt
    : yield* reserve(attempt, operation, idempotencyKey(attempt, operation), at, { merchantInitiated: valid.merchant_initiated })
  const orders = yield* OrderRepo
  const transactions = yield* TransactionRepo
  /**
   * The order as the claim stores it, the reference claimed with it: a new order's insert, which
   * a concurrent duplicate fails; or, for a retry, the 502'd order under its row lock, still awaiting
   * this request (a concurrent retry finds it sent, 409: one provider attempt at a time).
   */
  const claimOrder = Effect.gen(function*() {
    if (retrying === undefined) {
      const order = plan._tag === "AwaitCustomer" ? base : (yield* decided(OrderAggregate.transition(base, "attempt_sent", at))).next
      // A refusal fails the claim's unit of work whole, wherever it is found: nothing here answers it.
      yield* orders.insert(order, { refusedWithUnit: true })
      return order
    }
    const current = yield* lockRetry(retrying, requestHash, at)
    const order = plan._tag === "AwaitCustomer"
      ? revise(current, { retry_until: null }, at)
      : (yield* decided(OrderAggregate.transition(current, "attempt_sent", at, { retry_until: null }))).next
    yield* saveOrder(order)
    return order
  })
  if (plan._tag === "Authorize" && answersInUnitOfWork(yield* PaymentProvider, yield* Fallbacks)) {
    // The provider answers in our transaction: the claim, the call and its record commit together
    // or not at all, so no one ever sees the order before its outcome, and its lock would guard
    // nothing. A concurrent duplicate reference waits on the insert, then fails it (or takes it,
    // should this one roll back). Uninterruptible as below: a client hanging up cuts nothing.
    const done = yield* Effect.uninterruptible(unitOfWork(Effect.gen(function*() {
      const order = yield* claimOrder
      yield* transactions.insert(txn)
      return yield* joined(runAttemptInUnitOfWork("create", order, txn, authorizeCall(order, valid, plan), valid.merchant_initiated))
    })))
    const recorded = yield* raise(done)
    return snapshot(recorded.order, recorded.txn)
  }
  // The reference is claimed here: a concurrent duplicate fails before any provider call. From the
  // claim on, nothing interrupts the attempt: its outcome must be recorded.
  const claim = unitOfWork(Effect.gen(function*() {
    const order = yield* claimOrder
    yield* transactions.insert(txn)
    return order
  }))
  // The order's lock is held from the call to its record, so reconciliation never asks about a call
  // its caller is still waiting on.
  return yield* Effect.uninterruptible(Effect.flatMap(claim, (order) => guarded(order.id, proceed(order, txn, valid, plan))))
})

/** The authorization a create sends for an attempt (the first try, or a smart retry's second), under the key its reserve committed. */
const authorizeCall = (order: Order, valid: ValidPayment, plan: Extract<Plan, { readonly _tag: "Authorize" }>) =>
  (provider: PaymentProvider["Service"], txn: Transaction) =>
    provider.authorizeCard(authorization(order, txn, cardDetails(plan.card, plan.cvc), {
      authenticated: false,
      // merchant-initiated charges are exempt from the customer's authentication
      merchant_initiated: valid.merchant_initiated,
      ...(valid.merchant_initiated ? { stored_credential_reason: valid.stored_credential_reason } : {})
    }))

const proceed = (order: Order, txn: Transaction, valid: ValidPayment, plan: Plan) =>
  Effect.gen(function*() {
    switch (plan._tag) {
      case "AwaitCustomer": {
        const outcome: AttemptOutcome = { _tag: "AwaitsCustomer", next_action: yield* clientSecretAction(plan.type, order), provider_transaction_id: null }
        const recorded = yield* record(order.id, txn.id, outcome)
        return snapshot(recorded.order, recorded.txn)
      }
      case "Authorize": {
        // A customer-initiated card payment declined with a retryable code is tried once more on the
        // route's next channel (issue 27, smart retries); a merchant-initiated charge never is.
        const recorded = yield* runAttempt("create", txn, authorizeCall(order, valid, plan), valid.merchant_initiated, {
          smartRetry: !valid.merchant_initiated
        })
        return snapshot(recorded.order, recorded.txn)
      }
      case "Start": {
        const recorded = yield* runAttempt("create", txn, (provider) => provider.startPayment({
          reference: txn.id,
          idempotency_key: txn.pending_call!.key,
          method: valid.method.code,
          amount: order.amount,
          currency: order.currency,
          country: order.country,
          document_id: valid.document_id,
          customer_ip: valid.customer_ip
        }), false)
        return snapshot(recorded.order, recorded.txn)
      }
    }
  })
