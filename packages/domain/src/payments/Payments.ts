/**
 * The Payments use case: a facade over the operations (operations/*), each one file in the rhythm
 * validate → load under lock → decide (pure, the aggregates' transition functions) → persist (one
 * unit of work: rows and their events) → respond; provider calls take the one provider step
 * (operations/ProviderStep.ts). This layer only captures the services the operations need.
 */
import { Context, Effect, Layer, type Option } from "effect"
import type { Account } from "../accounts/Account.ts"
import type { OrderNotFound, TransactionNotFound, ValidationFailed } from "../kernel/Errors.ts"
import type { CardStorageConsent, Order, Transaction } from "./Payment.ts"
import { PayoutRepo, RefundRepo } from "../money-out/OutflowPorts.ts"
import { OrderRepo, TransactionRepo } from "./PaymentPorts.ts"
import { PaymentProvider } from "./ProviderPorts.ts"
import { ChannelProviders, ChannelRepo, type NotificationDelivery } from "../channels/ChannelPorts.ts"
import type { ProviderName } from "../channels/Channel.ts"
import type { CreatePaymentInput } from "./PaymentRequest.ts"
import type { OrderView, PaymentSnapshot, TransactionView } from "./PaymentViews.ts"
import { CardVault, CvcStore } from "../cards/CardPorts.ts"
import type { AccountRepo } from "../accounts/AccountPorts.ts"
import type { ChannelHealth, RoutingRulesRepo } from "../channels/RoutingPorts.ts"
import { type KeyHasher, Locks, UnitOfWork } from "../kernel/Ports.ts"
import type { ClientSecretRepo } from "./ClientSecretPorts.ts"
import type { SearchInput, SearchResult } from "../kernel/Search.ts"
import { CheckoutSessionRepo } from "../sessions/SessionPorts.ts"
import { CustomerRepo } from "../customers/CustomerPorts.ts"
import { Ids } from "../kernel/Ids.ts"
import { type ErrorOf, seam } from "../kernel/Seam.ts"
import { TransferRepo } from "../money-out/TransferPorts.ts"
import { Outbox } from "../webhooks/Webhooks.ts"
import { attempt, type SessionAttemptInput } from "../sessions/operations/Attempt.ts"
import { capture } from "./operations/Capture.ts"
import { clientPay } from "./operations/ClientPay.ts"
import { assertConsent, type ConsentView } from "./operations/Consent.ts"
import { create } from "./operations/Create.ts"
import { expireWindows } from "./operations/ExpireWindows.ts"
import { viewOrder } from "./operations/Snapshot.ts"
import { findOrder, getOrder, getOrderByReference, getTransaction, hostedAttempt, searchOrders, searchTransactions } from "./operations/Read.ts"
import { decideAmountMismatch } from "./operations/Mismatch.ts"
import { type ProviderOutcome, providerOutcome } from "./operations/Outcome.ts"
import { DEFAULT_RECONCILE, reconcileDue, type ReconcileOptions } from "./operations/Reconcile.ts"
import { settleDue } from "./operations/SettleDue.ts"
import { simulate, type SimulateOutcome } from "./operations/Simulate.ts"
import { type PaymentTarget, resolveTarget } from "./operations/Target.ts"
import { answerChallenge, completeThreeDs, returnFromProvider } from "./operations/ThreeDs.ts"
import { voidAuthorization } from "./operations/Void.ts"
import { notify } from "./operations/Notify.ts"

export { CLIENT_SECRET_TTL_MS } from "./operations/Cards.ts"
export type { SessionAttemptInput } from "../sessions/operations/Attempt.ts"
export type { ConsentView } from "./operations/Consent.ts"
export type { ProviderOutcome } from "./operations/Outcome.ts"
export type { SimulateOutcome } from "./operations/Simulate.ts"
export type { ReconcileOptions } from "./operations/Reconcile.ts"
export type { SearchInput, SearchResult } from "../kernel/Search.ts"

export type { PaymentTarget } from "./operations/Target.ts"

/** The services the operations need, captured when the layer is built (kernel/Seam.ts). */
type Needs =
  | OrderRepo | TransactionRepo | CheckoutSessionRepo | Outbox | UnitOfWork | PaymentProvider | CardVault | CvcStore | Locks | Ids | CustomerRepo
  // routing: the account's channels and their providers (operations/Route.ts)
  | ChannelRepo | ChannelProviders | AccountRepo
  // smart routing (issue 27): the rules that decide a route, the channels' health it reads and feeds
  | RoutingRulesRepo | ChannelHealth
  // the settlement worker and reconciliation also record refunds, payouts (operations/Outflow.ts) and transfers
  | RefundRepo | PayoutRepo | TransferRepo
  // a card form's client secret is stored when minted (operations/Cards.ts)
  | ClientSecretRepo | KeyHasher

/** The Payments use case: create, capture, void, complete and read payments; settle and reconcile them. */
export class Payments extends Context.Service<Payments, {
  /** Validates and routes a payment request, and creates the payment. */
  create(account: Account, input: CreatePaymentInput): Effect.Effect<PaymentSnapshot, ErrorOf<typeof create>>
  /** Captures (part of) a manual-capture authorization; `final` closes it. */
  capture(account: Account, input: PaymentTarget & { readonly amount?: string | undefined; readonly final?: boolean | undefined }): Effect.Effect<PaymentSnapshot, ErrorOf<typeof resolveTarget | typeof capture>>
  /** Voids a manual-capture authorization: releases what it holds uncaptured. */
  void(account: Account, target: PaymentTarget): Effect.Effect<PaymentSnapshot, ErrorOf<typeof resolveTarget | typeof voidAuthorization>>
  /** Completes a card payment whose 3-D Secure challenge was answered. */
  completeThreeDs(account: Account, orderId: string): Effect.Effect<PaymentSnapshot, ErrorOf<typeof completeThreeDs>>
  /** The sandbox's helper: makes a test payment succeed, fail, expire, or be under- or overpaid. */
  simulate(account: Account, orderId: string, input: { readonly outcome: SimulateOutcome; readonly amount?: string | undefined }): Effect.Effect<OrderView, ErrorOf<typeof simulate>>
  /** Accepts an under- or overpaid payment as received, or declines it (the funds go back to its `refund_destination`). */
  decideAmountMismatch(account: Account, orderId: string, input: { readonly decision: "accept" | "decline"; readonly refund_destination?: { readonly address?: string | undefined } | undefined }): Effect.Effect<OrderView, ErrorOf<typeof decideAmountMismatch>>
  /** The account's payment with this order id. */
  getOrder(account: Account, id: string): Effect.Effect<OrderView, OrderNotFound>
  /** The account's payment holding this merchant reference. */
  getOrderByReference(account: Account, reference: string): Effect.Effect<OrderView, OrderNotFound>
  /** The account's transaction with this id. */
  getTransaction(account: Account, id: string): Effect.Effect<TransactionView, TransactionNotFound>
  /** A page of the account's payments matching the filters. */
  searchOrders(account: Account, input: SearchInput): Effect.Effect<SearchResult<OrderView>, ValidationFailed>
  /** A page of the account's transactions matching the filters. */
  searchTransactions(account: Account, input: SearchInput): Effect.Effect<SearchResult<TransactionView>, ValidationFailed>
  /** Hosted provider pages (the customer's browser): the attempt behind a page. */
  hostedAttempt(transactionId: string): Effect.Effect<Option.Option<{ readonly order: Order; readonly transaction: Transaction }>>
  /** The provider reports a redirect, QR, voucher or bank-transfer outcome; returns where to send the customer. */
  providerOutcome(transactionId: string, outcome: ProviderOutcome): Effect.Effect<{ readonly return_url: string | null }, ErrorOf<typeof providerOutcome>>
  /**
   * The browser SDK's pay: the payment's card form submitted with a token (operations/ClientPay.ts);
   * `returnUrl`, when given, is where a challenge of this attempt sends the customer back to.
   */
  clientPay(account: Account, orderId: string, token: string, returnUrl?: string): Effect.Effect<{ readonly order: Order; readonly txn: Transaction }, ErrorOf<typeof clientPay>>
  /**
   * The customer answers a 3-D Secure challenge (operations/ThreeDs.ts): in a browser flow (the SDK's
   * pay, a checkout session) the payment completes now; otherwise the merchant then calls 3ds/complete.
   */
  answerChallenge(transactionId: string, approved: boolean): Effect.Effect<{ readonly return_url: string | null }, ErrorOf<typeof answerChallenge>>
  /**
   * The customer is back from a channel's provider 3-D Secure page to `returnedTo` (operations/ThreeDs.ts):
   * the authorization after the challenge runs now; returns where to send the customer.
   */
  returnFromProvider(channelId: string, transactionId: string, returnedTo: string): Effect.Effect<{ readonly return_url: string | null }, ErrorOf<typeof returnFromProvider>>
  /** One attempt of a checkout session's customer (operations/Attempt.ts). */
  attemptSession(sessionId: string, input: SessionAttemptInput): Effect.Effect<void, ErrorOf<typeof attempt>>
  /** Workers' rounds: settle accepted captures, reconcile lost provider answers, close expired windows. */
  settleDue(): Effect.Effect<number>
  /** Asks the providers what became of calls whose answer was lost; returns how many were resolved. */
  reconcileDue(options?: ReconcileOptions): Effect.Effect<number>
  /** Closes lapsed payment windows and lapsed retry windows; returns how many. */
  expireWindows(): Effect.Effect<number>
  /**
   * A provider's notification to one channel (operations/Notify.ts): 401 `invalid_signature` when
   * unverified or the channel is unknown, 422 when an amount or currency disagrees; otherwise the
   * channel's provider (how to acknowledge) and how many notices changed something.
   */
  notify(channelId: string, delivery: NotificationDelivery): Effect.Effect<{ readonly provider: ProviderName; readonly applied: number }, ErrorOf<typeof notify>>
  /** Asserts a payment's card-storage consent: stored once; the same again is a no-op; another is 409 consent_conflict. */
  assertConsent(account: Account, orderId: string, consent: CardStorageConsent): Effect.Effect<ConsentView, ErrorOf<typeof assertConsent>>
  /** Operator access by order id, whatever the account (CLI). */
  operator: {
    /** Any account's payment with this order id. */
    get(orderId: string): Effect.Effect<OrderView, OrderNotFound>
    /** Captures any account's authorization (the operator's capture). */
    capture(orderId: string, amount: string | undefined, final: boolean): Effect.Effect<PaymentSnapshot, ErrorOf<typeof findOrder | typeof capture>>
    /** Voids any account's authorization (the operator's void). */
    void(orderId: string): Effect.Effect<PaymentSnapshot, ErrorOf<typeof findOrder | typeof voidAuthorization>>
  }
}>()("@tender/domain/payments/Payments") {
  static readonly layer = Layer.effect(
    Payments,
    Effect.gen(function*() {
      const run = yield* seam<Needs>()

      return Payments.of({
        create: (account, input) => run(create(account, input)),
        attemptSession: (id, input) => run(attempt(id, input)),
        capture: (account, input) => run(Effect.flatMap(resolveTarget(account.id, input), (id) => capture(id, input.amount, input.final ?? true, input.channel_id))),
        void: (account, target) => run(Effect.flatMap(resolveTarget(account.id, target), (id) => voidAuthorization(id, target.channel_id))),
        completeThreeDs: (account, orderId) => run(completeThreeDs(account, orderId)),
        simulate: (account, orderId, input) => run(simulate(account, orderId, input)),
        decideAmountMismatch: (account, orderId, input) => run(decideAmountMismatch(account, orderId, input)),
        getOrder: (account, id) => run(getOrder(account.id, id)),
        getOrderByReference: (account, reference) => run(getOrderByReference(account.id, reference)),
        getTransaction: (account, id) => run(getTransaction(account.id, id)),
        searchOrders: (account, input) => run(searchOrders(account.id, input)),
        searchTransactions: (account, input) => run(searchTransactions(account.id, input)),
        hostedAttempt: (transactionId) => run(hostedAttempt(transactionId)),
        providerOutcome: (transactionId, outcome) => run(providerOutcome(transactionId, outcome)),
        answerChallenge: (transactionId, approved) => run(answerChallenge(transactionId, approved)),
        returnFromProvider: (channelId, transactionId, returnedTo) => run(returnFromProvider(channelId, transactionId, returnedTo)),
        clientPay: (account, orderId, token, returnUrl) => run(clientPay(account, orderId, token, returnUrl)),
        settleDue: () => run(settleDue()),
        reconcileDue: (options = DEFAULT_RECONCILE) => run(reconcileDue(options)),
        expireWindows: () => run(expireWindows),
        notify: (channelId, delivery) => run(notify(channelId, delivery)),
        assertConsent: (account, orderId, consent) => run(assertConsent(account, orderId, consent)),
        operator: {
          get: (orderId) => run(Effect.flatMap(findOrder(undefined, orderId), viewOrder)),
          capture: (orderId, amount, final) => run(Effect.flatMap(findOrder(undefined, orderId), (o) => capture(o.id, amount, final))),
          void: (orderId) => run(Effect.flatMap(findOrder(undefined, orderId), (o) => voidAuthorization(o.id)))
        }
      })
    })
  )
}
