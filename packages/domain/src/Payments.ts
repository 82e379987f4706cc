/**
 * The Payments use case: direct payments, card authorization, manual capture and void, 3-D Secure
 * completion, the provider's asynchronous outcomes, and the reads. Every operation follows one
 * rhythm: decode, load under the order's lock, ask the pure state machines, persist the new state
 * and its events in one unit of work, return the view.
 *
 * Race safety. The order row is the unit of serialisation: each change re-reads it with
 * `OrderRepo.lock` (PostgreSQL: FOR UPDATE) inside a unit of work, so the outcome is right with no
 * Redis at all. Provider calls run between two units of work: the first reserves (inserts the
 * attempt, so captures in flight count against the remainder), the second records the outcome.
 * The `Locks` port wraps the whole sequence so that one order never has two provider calls in flight.
 */
import { isoOf, nowIso } from "./Time.ts"
import { Clock, Context, Effect, Layer, Option } from "effect"
import type { Account } from "./Account.ts"
import * as Authorization from "./AuthorizationStatus.ts"
import {
  AmountMismatchDecisionConflict,
  AmountMismatchDecisionInvalid,
  CaptureAmountExceedsAuthorized,
  CheckoutSessionNotFound,
  Conflict,
  type DomainError,
  InvalidOrderStatusTransition,
  InvalidSessionState,
  InvalidTransactionStatus,
  invalidField,
  OrderNotFound,
  PaymentMethodNotFound,
  PaymentUnexpectedState,
  PaymentUnroutable,
  ProviderUnavailable,
  TransactionNotFound,
  UnknownPaymentMethod,
  ValidationFailed
} from "./Errors.ts"
import { findMethod, homeCountry, routable } from "./PaymentMethods.ts"
import { Ids } from "./Ids.ts"
import * as Money from "./Money.ts"
import { OrderMachine, type OrderStatus, type OrderTrigger } from "./OrderStatus.ts"
import type { Customer, NextAction, Order, PaymentInstrument, Transaction } from "./Payment.ts"
import { type PaymentEventType, eventData } from "./PaymentEvents.ts"
import {
  type AuthorizeResult,
  type CaptureResult,
  type Unknown,
  OrderRepo,
  PaymentProvider,
  TransactionRepo
} from "./PaymentPorts.ts"
import { checkLocalFields, type CreatePaymentInput, validateCreate, type ValidPayment } from "./PaymentRequest.ts"
import {
  identifiersOf,
  major,
  type OrderView,
  orderView,
  type PaymentSnapshot,
  type TransactionView,
  transactionView
} from "./PaymentViews.ts"
import { CardVault, CvcStore, Locks, UnitOfWork, type VaultedCard } from "./Ports.ts"
import { search, type SearchInput, type SearchResult } from "./Search.ts"
import { step } from "./StateMachine.ts"
import { isInFlight, TransactionMachine, type TransactionTrigger } from "./TransactionStatus.ts"
import { Outbox } from "./Webhooks.ts"
import * as Session from "./CheckoutSession.ts"
import { CheckoutSessionRepo, PublicUrl } from "./SessionPorts.ts"

/** A client secret (collect_card / collect_cvv) lives 15 minutes (spec). */
export const CLIENT_SECRET_TTL_MS = 15 * 60 * 1000

export interface PaymentTarget {
  readonly order_id?: string | undefined
  readonly transaction_id?: string | undefined
  readonly merchant_reference?: string | undefined
}

export interface SessionAttemptInput {
  readonly payment_method: {
    readonly code: string
    readonly details?: { readonly card_token?: string | undefined; readonly document_id?: string | undefined } | undefined
  }
  readonly customer?: {
    readonly email?: string | undefined
    readonly name?: string | undefined
    readonly ip?: string | undefined
    readonly phone?: string | undefined
    readonly address?: Customer["address"] | undefined
  } | undefined
}

export type SimulateOutcome = "succeed" | "fail" | "expire" | "underpay" | "overpay"
export type ProviderOutcome = "succeed" | "fail" | "cancel" | "expire"

export type { SearchInput, SearchResult } from "./Search.ts"

/** The sandbox cards that stand for the customer when a test helper acts on a card form. */
/**
 * Until the payment core reserves and reconciles provider calls, an `Unknown` answer is treated as
 * unavailable (recorded as failed): a stop-gap the core rewrite replaces.
 */
const knownOrUnavailable = <A>(call: Effect.Effect<A | Unknown, ProviderUnavailable>): Effect.Effect<Exclude<A, Unknown> | "unavailable"> =>
  call.pipe(
    Effect.map((result) => (result as { readonly _tag: string })._tag === "Unknown" ? "unavailable" as const : result as Exclude<A, Unknown>),
    Effect.catchTag("ProviderUnavailable", () => Effect.succeed("unavailable" as const))
  )

const SIMULATED_CARDS = { succeed: "4242424242424242", fail: "4000000000000002" } as const

const cardInstrument = (card: VaultedCard, country: string | undefined): PaymentInstrument => ({
  type: "card",
  ...(country !== undefined ? { country_code: country } : {}),
  ...(card.holder_name !== null ? { holder_name: card.holder_name } : {}),
  card_brand: card.brand,
  last4_digits: card.last4,
  bin: card.bin,
  card_funding: card.funding
})

type Failure = DomainError

export class Payments extends Context.Service<Payments, {
  create(account: Account, input: CreatePaymentInput): Effect.Effect<PaymentSnapshot, Failure>
  capture(account: Account, input: PaymentTarget & { readonly amount?: string | undefined; readonly final?: boolean | undefined }): Effect.Effect<PaymentSnapshot, Failure>
  void(account: Account, target: PaymentTarget): Effect.Effect<PaymentSnapshot, Failure>
  completeThreeDs(account: Account, orderId: string): Effect.Effect<PaymentSnapshot, Failure>
  simulate(account: Account, orderId: string, input: { readonly outcome: SimulateOutcome; readonly amount?: string | undefined }): Effect.Effect<OrderView, Failure>
  decideAmountMismatch(account: Account, orderId: string, input: { readonly decision: "accept" | "decline"; readonly refund_destination?: { readonly address?: string | undefined } | undefined }): Effect.Effect<OrderView, Failure>
  getOrder(account: Account, id: string): Effect.Effect<OrderView, OrderNotFound>
  getOrderByReference(account: Account, reference: string): Effect.Effect<OrderView, OrderNotFound>
  getTransaction(account: Account, id: string): Effect.Effect<TransactionView, TransactionNotFound>
  searchOrders(account: Account, input: SearchInput): Effect.Effect<SearchResult<OrderView>, ValidationFailed>
  searchTransactions(account: Account, input: SearchInput): Effect.Effect<SearchResult<TransactionView>, ValidationFailed>
  /** Hosted provider pages (the customer's browser): the attempt behind a page. */
  hostedAttempt(transactionId: string): Effect.Effect<Option.Option<{ readonly order: Order; readonly transaction: Transaction }>>
  /** The provider reports a redirect, QR, voucher or bank-transfer outcome; returns where to send the customer. */
  providerOutcome(transactionId: string, outcome: ProviderOutcome): Effect.Effect<{ readonly return_url: string | null }, Failure>
  /** The customer answers a 3-D Secure challenge; the merchant then calls 3ds/complete. */
  answerChallenge(transactionId: string, approved: boolean): Effect.Effect<{ readonly return_url: string | null }, Failure>
  /**
   * One attempt of a checkout session's customer: a transaction under the session's order, run like
   * a direct payment's. The method must be offered by the session; a card arrives vaulted (token).
   */
  attemptSession(sessionId: string, input: SessionAttemptInput): Effect.Effect<void, Failure>
  /** Settles captures the provider accepted earlier (`settling`); returns how many settled. */
  settleDue(): Effect.Effect<number>
  /** Operator access by order id, whatever the account (CLI). */
  operator: {
    get(orderId: string): Effect.Effect<OrderView, OrderNotFound>
    capture(orderId: string, amount: string | undefined, final: boolean): Effect.Effect<PaymentSnapshot, Failure>
    void(orderId: string): Effect.Effect<PaymentSnapshot, Failure>
  }
}>()("@tender/domain/Payments") {
  static readonly layer = Layer.effect(
    Payments,
    Effect.gen(function*() {
      const orders = yield* OrderRepo
      const transactions = yield* TransactionRepo
      const outbox = yield* Outbox
      const sessions = yield* CheckoutSessionRepo
      const publicUrl = yield* PublicUrl
      const uow = yield* UnitOfWork
      const provider = yield* PaymentProvider
      const vault = yield* CardVault
      const cvcs = yield* CvcStore
      const locks = yield* Locks
      const ids = yield* Ids

      const nowMs = Clock.currentTimeMillis

      // --- pure moves through the state machines -------------------------------------------

      const moveOrder = (
        order: Order,
        triggers: ReadonlyArray<OrderTrigger>,
        at: string
      ): Effect.Effect<Order, InvalidOrderStatusTransition> => {
        let status: OrderStatus = order.status
        for (const trigger of triggers) {
          const next = step(OrderMachine, status, trigger)
          if (next === undefined) {
            return Effect.fail(new InvalidOrderStatusTransition({ message: `Order ${order.id} cannot go from ${status} on ${trigger}` }))
          }
          status = next
        }
        return Effect.succeed({ ...order, status, updated_at: at, version: order.version + 1 })
      }

      const moveTransaction = (
        txn: Transaction,
        triggers: ReadonlyArray<TransactionTrigger>,
        changes: Partial<Transaction>,
        at: string
      ): Transaction => {
        let status = txn.status
        for (const trigger of triggers) {
          // A transaction's moves are fixed by our own flows; an impossible one is a bug.
          status = step(TransactionMachine, status, trigger) ?? ((): never => {
            throw new Error(`Transaction ${txn.id} cannot go from ${status} on ${trigger}`)
          })()
        }
        return { ...txn, ...changes, status, updated_at: at, version: txn.version + 1 }
      }

      /** From wherever a fresh attempt stands (initial or already sent) to `processing`. */
      const sentTriggers = (txn: Transaction): ReadonlyArray<TransactionTrigger> =>
        txn.status === "processing" ? [] : ["sent"]

      const orderIsSent = (order: Order): ReadonlyArray<OrderTrigger> => (order.status === "pending" ? ["attempt_sent"] : [])

      const emit = (type: PaymentEventType, order: Order, txn: Transaction, extra: Parameters<typeof eventData>[2] = {}) =>
        Effect.gen(function*() {
          yield* outbox.record({
            account_id: order.account_id,
            type,
            livemode: order.livemode,
            processing_profile: order.processing_profile,
            order_id: order.id,
            data: eventData(order, txn, extra)
          })
        })

      // --- checkout sessions: an order of subtype `checkout` belongs to a session --------------

      const sessionOf = (order: Order) =>
        order.subtype !== "checkout"
          ? Effect.succeed(Option.none<Session.CheckoutSession>())
          : Effect.flatMap(sessions.findByOrder(order.id), (found) =>
            Option.isNone(found) ? Effect.succeed(found) : sessions.lock(found.value.id))

      /** A declined attempt: the session's customer may retry while attempts remain; a direct payment may not. */
      const declineTrigger = (order: Order) =>
        Effect.map(sessionOf(order), (session): OrderTrigger =>
          Option.isSome(session) && Session.isLive(session.value.status) && session.value.attempts < session.value.max_payment_attempts
            ? "attempt_declined_retry"
            : "attempt_declined_final")

      const emitSession = (session: Session.CheckoutSession, type: string) =>
        outbox.record(Session.sessionEvent(session, type, publicUrl))

      /** Moves the session behind an order with its attempt's outcome (in the same unit of work). */
      const followSession = (order: Order, txn: Transaction, what: "succeeded" | "declined" | "action", at: string) =>
        Effect.gen(function*() {
          const found = yield* sessionOf(order)
          // A final session never changes: a late outcome only moves the order (spec: after expiry).
          if (Option.isNone(found) || !Session.isLive(found.value.status)) return
          const session = found.value
          const [trigger, changes]: [Session.SessionTrigger | undefined, Partial<Session.CheckoutSession>] =
            what === "succeeded"
              ? ["payment_succeeded", { transaction_id: txn.id, next_action: null }]
              : what === "action"
              ? [session.status === "open" ? "external_step" : undefined, { next_action: txn.next_action }]
              : session.attempts < session.max_payment_attempts
              ? [session.status === "pending_action" ? "attempt_declined_retry" : undefined, { next_action: null }]
              : ["last_attempt_declined", { next_action: null }]
          const status = trigger === undefined ? session.status : step(Session.SessionMachine, session.status, trigger)!
          const next: Session.CheckoutSession = { ...session, ...changes, status, updated_at: at, version: session.version + 1 }
          yield* orDieConflict(sessions.update(next))
          const event = status !== session.status ? Session.sessionEventOf(status) : undefined
          if (event !== undefined) yield* emitSession(next, event)
        })

      const persist = (order: Order | undefined, ...txns: ReadonlyArray<Transaction>) =>
        Effect.gen(function*() {
          if (order !== undefined) yield* orders.update(order)
          for (const t of txns) yield* transactions.update(t)
        })

      const orDieConflict = <A, E, R>(effect: Effect.Effect<A, E | Conflict, R>) =>
        Effect.catchIf(effect, (e): e is Conflict => e instanceof Conflict, (e) => Effect.die(e)) as Effect.Effect<A, Exclude<E, Conflict>, R>

      const loadLocked = (orderId: string) =>
        Effect.flatMap(orders.lock(orderId), Option.match({
          onNone: () => Effect.die(new Error(`Order ${orderId} vanished`)),
          onSome: Effect.succeed
        }))

      const loadTxn = (txnId: string) =>
        Effect.flatMap(transactions.findAny(txnId), Option.match({
          onNone: () => Effect.die(new Error(`Transaction ${txnId} vanished`)),
          onSome: Effect.succeed
        }))

      /**
       * Serialises provider calls per order (Redis across processes when configured), and runs to
       * the end once started: a client hanging up must not leave a claimed order or a reserved
       * capture without the outcome of a provider call that may already have moved money.
       */
      const guarded = <A, E, R>(orderId: string, effect: Effect.Effect<A, E, R>) =>
        Effect.uninterruptible(locks.withLock(`order:${orderId}`, effect, { waitMs: 30_000, ttlMs: 60_000 }))

      // --- views --------------------------------------------------------------------------

      const paymentStatus = (order: Order): PaymentSnapshot["status"] => {
        switch (order.status) {
          case "succeeded":
            return "completed"
          case "authorized":
            return "authorized"
          case "canceled":
            return "canceled"
          case "failed":
          case "returned":
            return "failed"
          default:
            return "requires_action"
        }
      }

      const snapshot = (
        order: Order,
        txn: Transaction,
        extra: { readonly status?: PaymentSnapshot["status"]; readonly captured?: number; readonly voided?: number } = {}
      ): PaymentSnapshot => {
        const status = extra.status ?? paymentStatus(order)
        return {
          order_id: order.id,
          transaction_id: txn.id,
          merchant_reference: order.merchant_reference,
          status,
          amount: major(order.amount, order.currency),
          currency: order.currency,
          provider_transaction_id: txn.provider_transaction_id,
          additional_identifiers: identifiersOf(order),
          next_action: status === "requires_action" ? txn.next_action : null,
          ...(order.processing_profile !== null ? { processing_profile: order.processing_profile } : {}),
          ...(extra.captured !== undefined ? { captured_amount: major(extra.captured, order.currency) } : {}),
          ...(extra.voided !== undefined ? { voided_amount: major(extra.voided, order.currency) } : {})
        }
      }

      const capturedOf = (txns: ReadonlyArray<Transaction>) =>
        txns.filter((t) => t.kind === "capture" && t.status === "completed").reduce((sum, t) => sum + t.amount, 0)

      const viewOrder = (order: Order) =>
        Effect.map(transactions.listByOrder(order.id), (txns) =>
          orderView(order, txns, order.capture_method === "manual" && order.status !== "pending" ? capturedOf(txns) : undefined))

      // --- creating a payment -------------------------------------------------------------

      const newTransaction = (
        order: Order,
        kind: Transaction["kind"],
        amount: number,
        fields: Partial<Transaction> = {}
      ) =>
        Effect.gen(function*() {
          const at = yield* nowIso
          const txn: Transaction = {
            id: yield* ids.make("transaction"),
            order_id: order.id,
            account_id: order.account_id,
            livemode: order.livemode,
            kind,
            status: "initial",
            amount,
            currency: order.currency,
            payment_method: order.payment_method,
            processing_profile: order.processing_profile,
            provider: provider.name,
            provider_transaction_id: null,
            decline_code: null,
            payment_instrument: null,
            parent_transaction_id: null,
            final: null,
            multicapture: null,
            next_action: null,
            three_ds: null,
            expires_at: null,
            created_at: at,
            updated_at: at,
            version: 1,
            ...fields
          }
          return txn
        })

      /**
       * Records an authorization outcome on a card attempt (create, 3-D Secure completion, a test
       * helper acting as the customer). Runs inside the second unit of work, under the order lock.
       */
      const recordAuthorization = (orderId: string, txnId: string, result: AuthorizeResult | "unavailable", merchantInitiated: boolean) =>
        uow.transaction(Effect.gen(function*() {
          const order = yield* loadLocked(orderId)
          const txn = yield* loadTxn(txnId)
          const at = yield* nowIso
          if (result === "unavailable") {
            const failedTxn = moveTransaction(txn, [...sentTriggers(txn), "declined"], { decline_code: "provider_unavailable" }, at)
            const failedOrder = yield* moveOrder(order, [...orderIsSent(order), yield* declineTrigger(order)], at)
            yield* persist(failedOrder, failedTxn)
            yield* emit("payment.failed", failedOrder, failedTxn)
            yield* followSession(failedOrder, failedTxn, "declined", at)
            return { order: failedOrder, txn: failedTxn }
          }
          switch (result._tag) {
            case "Approved": {
              const manual = order.capture_method === "manual"
              const done = moveTransaction(txn, [...sentTriggers(txn), "succeeded"], {
                provider_transaction_id: result.provider_transaction_id,
                multicapture: manual ? result.multicapture : null,
                next_action: null,
                three_ds: txn.three_ds === null ? null : "approved"
              }, at)
              const triggers: ReadonlyArray<OrderTrigger> = [
                ...orderIsSent(order),
                ...(order.status === "requires_action" ? ["action_completed" as const] : []),
                manual ? "authorization_succeeded" : "payment_settled"
              ]
              const moved = yield* moveOrder(order, triggers, at)
              const next = manual ? moved : { ...moved, payment_instrument: done.payment_instrument }
              yield* persist(next, done)
              yield* emit(manual ? "payment.authorized" : "payment.succeeded", next, done)
              yield* followSession(next, done, "succeeded", at)
              return { order: next, txn: done }
            }
            case "Declined": {
              const failedTxn = moveTransaction(txn, [...sentTriggers(txn), "declined"], {
                decline_code: result.decline_code,
                provider_transaction_id: result.provider_transaction_id,
                next_action: null
              }, at)
              const failedOrder = yield* moveOrder(order, [...orderIsSent(order), yield* declineTrigger(order)], at)
              yield* persist(failedOrder, failedTxn)
              yield* emit("payment.failed", failedOrder, failedTxn)
              yield* followSession(failedOrder, failedTxn, "declined", at)
              return { order: failedOrder, txn: failedTxn }
            }
            case "ChallengeRequired": {
              const waiting = moveTransaction(txn, sentTriggers(txn), {
                provider_transaction_id: result.provider_transaction_id,
                three_ds: "required",
                next_action: { type: "redirect", redirect_url: result.challenge_url }
              }, at)
              const moved = yield* moveOrder(order, [...orderIsSent(order), "action_required"], at)
              yield* persist(moved, waiting)
              // spec: payment.requires_action never fires for merchant-initiated charges
              if (!merchantInitiated) yield* emit("payment.requires_action", moved, waiting)
              yield* followSession(moved, waiting, "action", at)
              return { order: moved, txn: waiting }
            }
          }
        }))

      /** Calls the provider for a card attempt and records the outcome; 502 when it is unreachable. */
      const authorizeAttempt = (
        order: Order,
        txn: Transaction,
        card: { readonly number: string; readonly exp_month: number; readonly exp_year: number; readonly cvc: string | undefined },
        options: { readonly merchantInitiated: boolean; readonly authenticated: boolean }
      ) =>
        Effect.gen(function*() {
          const result = yield* provider.authorizeCard({
            reference: txn.id,
            // The authenticated retry after 3-D Secure is a second call on the same attempt.
            idempotency_key: options.authenticated ? `${txn.id}:authenticated` : txn.id,
            card,
            amount: order.amount,
            currency: order.currency,
            capture: order.capture_method === "automatic",
            // merchant-initiated charges are exempt from the customer's authentication
            authenticated: options.authenticated || options.merchantInitiated
          }).pipe(knownOrUnavailable)
          const recorded = yield* orDieConflict(recordAuthorization(order.id, txn.id, result, options.merchantInitiated))
          if (result === "unavailable") {
            return yield* new ProviderUnavailable({ message: "The card authorization service is unreachable; the attempt was recorded as failed" })
          }
          return snapshot(recorded.order, recorded.txn)
        })

      const revealCard = (accountId: string, token: string) =>
        Effect.gen(function*() {
          const card = yield* vault.find(accountId as VaultedCard["account_id"], token)
          const number = yield* vault.reveal(accountId as VaultedCard["account_id"], token)
          if (Option.isNone(card) || Option.isNone(number)) {
            return yield* new PaymentMethodNotFound({ message: `No card ${token} in this account's vault` })
          }
          return { card: card.value, number: number.value }
        })

      const clientSecretAction = (type: "collect_card" | "collect_cvv", order: Order) =>
        Effect.gen(function*() {
          const expires = (yield* nowMs) + CLIENT_SECRET_TTL_MS
          const action: NextAction = {
            type,
            client_secret: `${order.id}_secret_${yield* ids.randomHex(16)}`,
            expires_at: isoOf(expires)
          }
          return action
        })

      const create = Effect.fn("Payments.create")(function*(account: Account, input: CreatePaymentInput) {
        const valid = validateCreate(account, input)
        if (valid instanceof Error) return yield* Effect.fail(valid)
        // contract.md: the sandbox serves test mode only, and no live provider is configured yet.
        if (account.mode === "live" && provider.name === "sandbox") {
          return yield* new PaymentUnroutable({ message: "No live provider is configured for this account" })
        }
        const card = valid.card_token !== undefined ? yield* revealCard(account.id, valid.card_token) : undefined
        const at = yield* nowIso
        const order: Order = {
          id: yield* ids.make("order"),
          account_id: account.id,
          livemode: account.mode === "live",
          merchant_reference: valid.merchant_reference,
          subtype: "direct_payment",
          status: "pending",
          amount: valid.amount,
          currency: valid.currency,
          country: valid.country,
          payment_method: valid.method.code,
          capture_method: valid.capture_method,
          processing_profile: valid.processing_profile,
          customer: valid.customer,
          success_url: valid.success_url,
          cancel_url: valid.cancel_url,
          card_token: valid.card_token ?? null,
          payment_instrument: null,
          received_amount: null,
          created_at: at,
          updated_at: at,
          version: 1
        }
        const txn = yield* newTransaction(order, valid.capture_method === "manual" ? "authorization" : "payment", order.amount, {
          payment_instrument: card !== undefined ? cardInstrument(card.card, undefined) : null
        })
        // The reference is claimed by the insert: a concurrent duplicate fails here, before any provider
        // call. From the claim on, nothing interrupts the attempt (see `guarded`).
        const claim = uow.transaction(Effect.gen(function*() {
          yield* orders.insert(order)
          yield* transactions.insert(txn)
        }))
        return yield* Effect.uninterruptible(Effect.andThen(claim, guarded(order.id, startAttempt(order, txn, valid, card))))
      })

      const startAttempt = (
        order: Order,
        txn: Transaction,
        valid: ValidPayment,
        card: { readonly card: VaultedCard; readonly number: string } | undefined
      ): Effect.Effect<PaymentSnapshot, Failure> =>
        Effect.gen(function*() {
          if (valid.method.code === "card") {
            if (card === undefined) return yield* awaitCustomer(order, txn, yield* clientSecretAction("collect_card", order))
            if (!valid.merchant_initiated && !valid.skip_cvv) {
              return yield* awaitCustomer(order, txn, yield* clientSecretAction("collect_cvv", order))
            }
            const cvc = valid.merchant_initiated ? Option.none() : yield* cvcs.take(card.card.token)
            return yield* authorizeAttempt(order, txn, {
              number: card.number,
              exp_month: card.card.exp_month,
              exp_year: card.card.exp_year,
              cvc: Option.getOrUndefined(cvc)
            }, { merchantInitiated: valid.merchant_initiated, authenticated: false })
          }
          const started = yield* provider.startPayment({
            reference: txn.id,
            idempotency_key: txn.id,
            method: valid.method.code,
            amount: order.amount,
            currency: order.currency,
            country: order.country,
            document_id: valid.document_id,
            customer_ip: valid.customer_ip
          }).pipe(knownOrUnavailable)
          if (started === "unavailable") {
            yield* orDieConflict(recordAuthorization(order.id, txn.id, "unavailable", false))
            return yield* new ProviderUnavailable({ message: "The payment provider is unreachable; the attempt was recorded as failed" })
          }
          return yield* awaitCustomer(order, txn, started.next_action, started.provider_transaction_id)
        })

      /** The attempt waits on the customer: redirect, QR, voucher, bank transfer, card or CVC collection. */
      const awaitCustomer = (order: Order, txn: Transaction, action: NextAction, providerId: string | null = null) =>
        orDieConflict(uow.transaction(Effect.gen(function*() {
          const current = yield* loadLocked(order.id)
          const currentTxn = yield* loadTxn(txn.id)
          const at = yield* nowIso
          // Card and CVC collection happen before anything reaches the provider: the attempt stays initial.
          const sent = action.type !== "collect_card" && action.type !== "collect_cvv"
          const waiting = moveTransaction(currentTxn, sent ? sentTriggers(currentTxn) : [], {
            next_action: action,
            provider_transaction_id: providerId,
            expires_at: action.expires_at ?? null
          }, at)
          const moved = yield* moveOrder(current, ["action_required"], at)
          yield* persist(moved, waiting)
          yield* emit("payment.requires_action", moved, waiting)
          yield* followSession(moved, waiting, "action", at)
          return snapshot(moved, waiting)
        })))

      // --- manual capture -----------------------------------------------------------------

      const resolveTarget = (accountId: string, target: PaymentTarget) =>
        Effect.gen(function*() {
          const given = (["order_id", "transaction_id", "merchant_reference"] as const).filter((k) => target[k] !== undefined)
          if (given.length !== 1) {
            return yield* new ValidationFailed({
              message: "Name the authorization with exactly one of order_id, transaction_id, merchant_reference",
              errors: (given.length === 0 ? ["order_id", "transaction_id", "merchant_reference"] : given).map((field) => ({
                field,
                message: "exactly one of order_id, transaction_id, merchant_reference is required"
              }))
            })
          }
          if (target.transaction_id !== undefined) {
            const txn = yield* Effect.flatMap(transactions.find(accountId, target.transaction_id), Option.match({
              onNone: () => Effect.fail(new TransactionNotFound({ message: `No transaction ${target.transaction_id}` })),
              onSome: Effect.succeed
            }))
            if (txn.kind !== "authorization") {
              return yield* new InvalidTransactionStatus({
                message: `Transaction ${txn.id} is a ${txn.kind}; name the authorization's transaction_id`
              })
            }
            return txn.order_id
          }
          const found = target.order_id !== undefined
            ? yield* orders.find(accountId, target.order_id)
            : yield* orders.findByReference(accountId, target.merchant_reference!)
          if (Option.isNone(found)) {
            return yield* new OrderNotFound({ message: `No order ${target.order_id ?? `with merchant_reference ${target.merchant_reference}`}` })
          }
          return found.value.id
        })

      /** The authorization's books, from the order and its transactions; refuses non-card or automatic payments. */
      const bookOf = (order: Order, txns: ReadonlyArray<Transaction>, verb: string) => {
        const auth = txns.find((t) => t.kind === "authorization" && t.status === "completed")
        if (order.capture_method !== "manual" || auth === undefined) {
          return new PaymentUnexpectedState({
            message: `Cannot ${verb} payment ${order.id}: it is ${order.payment_method === "card" ? `a ${order.capture_method}-capture payment in status ${order.status}` : `a ${order.payment_method} payment`}; expected an authorized manual-capture card payment`
          })
        }
        const captures = txns.filter((t) => t.kind === "capture" && t.parent_transaction_id === auth.id)
        const settled = captures.filter((t) => t.status === "completed")
        const inFlight = captures.filter((t) => isInFlight(t.status))
        const book: Authorization.AuthorizationBook = {
          status: order.status === "authorized" ? "authorized" : order.status === "succeeded" ? "completed" : "canceled",
          amount: auth.amount,
          captured: settled.reduce((s, t) => s + t.amount, 0),
          inFlight: inFlight.reduce((s, t) => s + t.amount, 0),
          closing: inFlight.some((t) => t.final === true),
          settledCaptures: settled.length,
          multicapture: auth.multicapture === true
        }
        return { auth, book, captures }
      }

      const parseCaptureAmount = (amount: string | undefined, currency: string) => {
        if (amount === undefined) return undefined
        const parsed = Money.parseAmount(amount, currency)
        if ("minor" in parsed) return parsed.minor
        return parsed.error === "not_positive"
          ? new CaptureAmountExceedsAuthorized({ message: "The capture amount must be positive" })
          : invalidField("amount", Money.amountErrorMessage(parsed.error, currency))
      }

      /**
       * A settled capture on the books: the authorization's row (partial, final, total), the order's
       * move and the event. Shared by the capture call and the settlement worker.
       */
      const settleCapture = (order: Order, auth: Transaction, book: Authorization.AuthorizationBook, capture: Transaction, at: string) =>
        Effect.gen(function*() {
          const trigger = Authorization.settledTrigger(book, capture.amount, capture.final === true)
          const captured = book.captured + capture.amount
          const facts = { capture: { captured, capture } }
          if (trigger === "partial_capture_settled") {
            yield* emit("payment.partially_captured", order, auth, facts)
            return { order, captured }
          }
          const moved = yield* moveOrder(order, ["authorization_closed_settled"], at)
          const next = { ...moved, payment_instrument: auth.payment_instrument }
          yield* orders.update(next)
          yield* emit("payment.succeeded", next, auth, facts)
          return { order: next, captured }
        })

      const captureOrder = (orderId: string, amountText: string | undefined, final: boolean) =>
        guarded(orderId, Effect.gen(function*() {
          // 1. reserve: the capture is recorded in flight, so concurrent captures see it
          const reserved = yield* uow.transaction(Effect.gen(function*() {
            const order = yield* loadLocked(orderId)
            const txns = yield* transactions.listByOrder(order.id)
            const books = bookOf(order, txns, "capture")
            if (books instanceof Error) return yield* Effect.fail(books)
            const requested = parseCaptureAmount(amountText, order.currency)
            if (requested instanceof Error) return yield* Effect.fail(requested)
            const plan = Authorization.planCapture(books.book, requested)
            if (plan instanceof Error) return yield* Effect.fail(plan)
            const capture = yield* newTransaction(order, "capture", plan.amount, {
              parent_transaction_id: books.auth.id,
              final,
              payment_instrument: books.auth.payment_instrument,
              status: "processing"
            })
            yield* transactions.insert(capture)
            return { order, auth: books.auth, capture, previous: books.captures.filter((c) => c.status !== "failed").length }
          }))
          // 2. the provider
          const result: CaptureResult | "unavailable" = yield* provider.captureCard({
            reference: reserved.capture.id,
            idempotency_key: reserved.capture.id,
            authorization: reserved.auth.provider_transaction_id ?? "",
            amount: reserved.capture.amount,
            currency: reserved.capture.currency,
            final,
            previousCaptures: reserved.previous
          }).pipe(knownOrUnavailable)
          // 3. record
          const recorded = yield* orDieConflict(uow.transaction(Effect.gen(function*() {
            const order = yield* loadLocked(orderId)
            const txns = yield* transactions.listByOrder(order.id)
            const capture = txns.find((t) => t.id === reserved.capture.id)!
            const books = bookOf(order, txns.filter((t) => t.id !== capture.id), "capture")
            if (books instanceof Error) return yield* Effect.die(books)
            const at = yield* nowIso
            if (result === "unavailable" || result._tag === "Refused") {
              const failed = moveTransaction(capture, ["declined"], {
                decline_code: result === "unavailable" ? "provider_unavailable" : result.decline_code
              }, at)
              yield* transactions.update(failed)
              yield* emit("payment.capture_failed", order, books.auth, { capture: { captured: books.book.captured, capture: failed } })
              return snapshot(order, failed, { status: "failed", captured: books.book.captured })
            }
            if (result._tag === "Settling") {
              const settling = moveTransaction(capture, [], { provider_transaction_id: result.provider_transaction_id }, at)
              yield* transactions.update(settling)
              return snapshot(order, settling, { status: "settling", captured: books.book.captured })
            }
            const settledTxn = moveTransaction(capture, ["succeeded"], { provider_transaction_id: result.provider_transaction_id }, at)
            yield* transactions.update(settledTxn)
            const settled = yield* settleCapture(order, books.auth, books.book, settledTxn, at)
            return snapshot(settled.order, settledTxn, { captured: settled.captured })
          })))
          if (result === "unavailable") {
            return yield* new ProviderUnavailable({ message: "The card service is unreachable; the capture was recorded as failed and the authorization stands" })
          }
          return recorded
        }))

      const voidOrder = (orderId: string) =>
        guarded(orderId, Effect.gen(function*() {
          const reserved = yield* uow.transaction(Effect.gen(function*() {
            const order = yield* loadLocked(orderId)
            const txns = yield* transactions.listByOrder(order.id)
            const books = bookOf(order, txns, "void")
            if (books instanceof Error) return yield* Effect.fail(books)
            const plan = Authorization.planVoid(books.book)
            if (plan instanceof Error) return yield* Effect.fail(plan)
            const voidTxn = yield* newTransaction(order, "void", plan.release, {
              parent_transaction_id: books.auth.id,
              payment_instrument: books.auth.payment_instrument,
              status: "processing"
            })
            yield* transactions.insert(voidTxn)
            return { auth: books.auth, voidTxn, plan }
          }))
          const result = yield* provider.voidCard({
            reference: reserved.voidTxn.id,
            idempotency_key: reserved.voidTxn.id,
            authorization: reserved.auth.provider_transaction_id ?? "",
            amount: reserved.plan.release
          }).pipe(knownOrUnavailable)
          const recorded = yield* orDieConflict(uow.transaction(Effect.gen(function*() {
            const order = yield* loadLocked(orderId)
            const txns = yield* transactions.listByOrder(order.id)
            const voidTxn = txns.find((t) => t.id === reserved.voidTxn.id)!
            const at = yield* nowIso
            if (result === "unavailable" || result._tag === "Refused") {
              const failed = moveTransaction(voidTxn, ["declined"], {
                decline_code: result === "unavailable" ? "provider_unavailable" : result.decline_code
              }, at)
              yield* transactions.update(failed)
              return snapshot(order, failed, { status: "failed" })
            }
            const done = moveTransaction(voidTxn, ["succeeded"], { provider_transaction_id: result.provider_transaction_id }, at)
            yield* transactions.update(done)
            const captured = capturedOf(txns)
            if (reserved.plan.trigger === "void_nothing_captured") {
              const canceled = yield* moveOrder(order, ["authorization_voided"], at)
              yield* orders.update(canceled)
              yield* emit("payment.canceled", canceled, reserved.auth, { voided: reserved.plan.release })
              return snapshot(canceled, done, { voided: reserved.plan.release })
            }
            const moved = yield* moveOrder(order, ["authorization_closed_settled"], at)
            const closed = { ...moved, payment_instrument: reserved.auth.payment_instrument }
            yield* orders.update(closed)
            const lastCapture = [...txns].reverse().find((t) => t.kind === "capture" && t.status === "completed")
            yield* emit("payment.succeeded", closed, reserved.auth, { capture: { captured, capture: lastCapture }, voided: reserved.plan.release })
            return snapshot(closed, done, { captured, voided: reserved.plan.release })
          })))
          if (result === "unavailable") {
            return yield* new ProviderUnavailable({ message: "The card service is unreachable; the void was recorded as failed and the authorization stands" })
          }
          return recorded
        }))

      // --- 3-D Secure and the customer's steps --------------------------------------------

      const latestAttempt = (txns: ReadonlyArray<Transaction>) =>
        [...txns].reverse().find((t) => t.kind === "payment" || t.kind === "authorization")

      const completeThreeDs = Effect.fn("Payments.completeThreeDs")(function*(account: Account, orderId: string) {
        const found = yield* orders.find(account.id, orderId)
        if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${orderId}` })
        return yield* guarded(orderId, Effect.gen(function*() {
          const order = (yield* orders.find(account.id, orderId)).pipe(Option.getOrThrow)
          const attempt = latestAttempt(yield* transactions.listByOrder(order.id))
          if (attempt === undefined || attempt.payment_method !== "card") {
            return yield* new PaymentUnexpectedState({ message: `Payment ${order.id} is not a card payment; 3-D Secure does not apply` })
          }
          // Idempotent: unanswered → the same requires_action snapshot; already decided → the outcome.
          if (attempt.three_ds !== "approved" || attempt.status !== "processing") {
            if (attempt.three_ds === "denied" && attempt.status === "processing") {
              const recorded = yield* orDieConflict(recordAuthorization(order.id, attempt.id, {
                _tag: "Declined",
                decline_code: "authentication_failed",
                provider_transaction_id: attempt.provider_transaction_id
              }, false))
              return snapshot(recorded.order, recorded.txn)
            }
            return snapshot(order, attempt)
          }
          const card = yield* revealCard(account.id, order.card_token ?? "")
          return yield* authorizeAttempt(order, attempt, {
            number: card.number,
            exp_month: card.card.exp_month,
            exp_year: card.card.exp_year,
            cvc: undefined
          }, { merchantInitiated: false, authenticated: true })
        }))
      })

      const findAttemptForPage = (transactionId: string) =>
        Effect.gen(function*() {
          const txn = yield* transactions.findAny(transactionId)
          if (Option.isNone(txn)) return yield* new TransactionNotFound({ message: `No transaction ${transactionId}` })
          const order = yield* orders.findAny(txn.value.order_id)
          return { order: Option.getOrThrow(order), txn: txn.value }
        })

      const answerChallenge = Effect.fn("Payments.answerChallenge")(function*(transactionId: string, approved: boolean) {
        const { order } = yield* findAttemptForPage(transactionId)
        return yield* orDieConflict(uow.transaction(Effect.gen(function*() {
          const locked = yield* loadLocked(order.id)
          const txn = yield* loadTxn(transactionId)
          if (txn.three_ds !== "required" || txn.status !== "processing") {
            return yield* new PaymentUnexpectedState({ message: `No 3-D Secure challenge is awaiting an answer on ${transactionId}` })
          }
          yield* transactions.update(moveTransaction(txn, [], { three_ds: approved ? "approved" : "denied" }, yield* nowIso))
          return { return_url: approved ? locked.success_url : locked.cancel_url }
        })))
      })

      /** An asynchronous outcome for a redirect, QR, voucher or bank-transfer attempt. */
      const applyOutcome = (orderId: string, txnId: string, outcome: ProviderOutcome, received?: number) =>
        orDieConflict(uow.transaction(Effect.gen(function*() {
          const order = yield* loadLocked(orderId)
          const txn = yield* loadTxn(txnId)
          if (!isInFlight(txn.status) || txn.payment_method === "card") {
            return yield* new PaymentUnexpectedState({ message: `Transaction ${txnId} is ${txn.status}; it awaits no provider outcome` })
          }
          const at = yield* nowIso
          if (received !== undefined) {
            const moved = yield* moveOrder(order, ["amount_mismatch"], at)
            const next = { ...moved, received_amount: received }
            yield* orders.update(next)
            yield* emit(received < order.amount ? "payment.underpaid" : "payment.overpaid", next, txn, { received })
            // The funds arrived: a hosted checkout completes now; a declined mismatch later returns them.
            yield* followSession(next, txn, "succeeded", at)
            return next
          }
          // Under a checkout session, a failed, canceled or expired attempt leaves the customer free
          // to retry while attempts remain.
          const retryable = order.subtype === "checkout" && outcome !== "succeed"
          const [txnTriggers, orderTrigger, declineCode]: [ReadonlyArray<TransactionTrigger>, OrderTrigger, string | null] =
            outcome === "succeed"
              ? [["succeeded"], "payment_settled", null]
              : outcome === "fail"
              ? [["declined"], yield* declineTrigger(order), "payment_declined"]
              : outcome === "cancel"
              ? [["canceled"], retryable ? yield* declineTrigger(order) : "canceled", "canceled_by_customer"]
              : [["canceled"], retryable ? yield* declineTrigger(order) : "expired", "expired"]
          const doneTxn = moveTransaction(txn, [...sentTriggers(txn), ...txnTriggers], { decline_code: declineCode }, at)
          const moved = yield* moveOrder(order, [...(order.status === "requires_action" ? ["action_completed" as const] : []), orderTrigger], at)
          const doneOrder = outcome === "succeed" ? { ...moved, payment_instrument: doneTxn.payment_instrument } : moved
          yield* persist(doneOrder, doneTxn)
          yield* emit(outcome === "succeed" ? "payment.succeeded" : "payment.failed", doneOrder, doneTxn)
          yield* followSession(doneOrder, doneTxn, outcome === "succeed" ? "succeeded" : "declined", at)
          return doneOrder
        })))

      const providerOutcome = Effect.fn("Payments.providerOutcome")(function*(transactionId: string, outcome: ProviderOutcome) {
        const { order, txn } = yield* findAttemptForPage(transactionId)
        const done = yield* guarded(order.id, applyOutcome(order.id, txn.id, outcome))
        return { return_url: done.status === "succeeded" ? done.success_url : done.cancel_url }
      })

      const simulate = Effect.fn("Payments.simulate")(function*(
        account: Account,
        orderId: string,
        input: { readonly outcome: SimulateOutcome; readonly amount?: string | undefined }
      ) {
        const found = yield* orders.find(account.id, orderId)
        if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${orderId}` })
        const order = found.value
        const attempt = latestAttempt(yield* transactions.listByOrder(order.id))
        if (attempt === undefined || !isInFlight(attempt.status)) {
          return yield* new PaymentUnexpectedState({ message: `Order ${order.id} is ${order.status}; no attempt is pending` })
        }
        const mismatch = input.outcome === "underpay" || input.outcome === "overpay"
        if (mismatch) {
          if (order.payment_method !== "crypto") {
            return yield* invalidField("outcome", "underpay and overpay apply to crypto payments only")
          }
          const received = input.amount === undefined ? undefined : Money.parseAmountOption(input.amount, order.currency)
          if (received === undefined || Option.isNone(received)) {
            return yield* invalidField("amount", "is required: the amount received, as a decimal string")
          }
          if (input.outcome === "underpay" ? received.value >= order.amount : received.value <= order.amount) {
            return yield* invalidField("amount", `must be ${input.outcome === "underpay" ? "below" : "above"} the order amount`)
          }
          yield* guarded(order.id, applyOutcome(order.id, attempt.id, "succeed", received.value))
        } else if (attempt.payment_method === "card") {
          if (attempt.three_ds === "required") {
            yield* answerChallenge(attempt.id, input.outcome === "succeed")
          } else if (attempt.next_action?.type === "collect_cvv" || attempt.next_action?.type === "collect_card") {
            if (input.outcome === "expire") {
              return yield* invalidField("outcome", "a card form awaiting the customer can succeed or fail")
            }
            // The customer submits the form: the saved card with its CVC, or a sandbox card typed in.
            const card = attempt.next_action.type === "collect_cvv"
              ? yield* Effect.map(revealCard(account.id, order.card_token ?? ""), (c) => ({ number: c.number, exp_month: c.card.exp_month, exp_year: c.card.exp_year }))
              : { number: SIMULATED_CARDS[input.outcome], exp_month: 12, exp_year: new Date(yield* nowMs).getUTCFullYear() + 3 }
            const number = attempt.next_action.type === "collect_cvv" && input.outcome === "fail" ? SIMULATED_CARDS.fail : card.number
            yield* guarded(order.id, authorizeAttempt(order, attempt, { ...card, number, cvc: "123" }, { merchantInitiated: false, authenticated: false }))
              .pipe(Effect.catchTag("ProviderUnavailable", () => Effect.void))
          } else {
            return yield* new PaymentUnexpectedState({ message: `Order ${order.id} has no customer step to simulate` })
          }
        } else {
          yield* guarded(order.id, applyOutcome(order.id, attempt.id, input.outcome === "expire" ? "expire" : input.outcome))
        }
        return yield* viewOrder((yield* orders.find(account.id, orderId)).pipe(Option.getOrThrow))
      })

      const decideAmountMismatch = Effect.fn("Payments.decideAmountMismatch")(function*(
        account: Account,
        orderId: string,
        input: { readonly decision: "accept" | "decline"; readonly refund_destination?: { readonly address?: string | undefined } | undefined }
      ) {
        const found = yield* orders.find(account.id, orderId)
        if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${orderId}` })
        if (input.decision === "decline" && !input.refund_destination?.address) {
          return yield* new AmountMismatchDecisionInvalid({ message: "A decline needs refund_destination.address to send the funds back to" })
        }
        const decided = yield* guarded(orderId, orDieConflict(uow.transaction(Effect.gen(function*() {
          const order = yield* loadLocked(orderId)
          // A decision already taken: the same one again is safe, the opposite one conflicts.
          if (order.received_amount !== null && (order.status === "succeeded" || order.status === "returned")) {
            if ((order.status === "succeeded") === (input.decision === "accept")) return order
            return yield* new AmountMismatchDecisionConflict({ message: `The opposite decision was already taken: the order is ${order.status}` })
          }
          if (order.status !== "processing" || order.received_amount === null) {
            return yield* new PaymentUnexpectedState({ message: `Order ${order.id} has no amount mismatch awaiting a decision` })
          }
          const attempt = latestAttempt(yield* transactions.listByOrder(order.id))!
          const at = yield* nowIso
          const accept = input.decision === "accept"
          const txn = moveTransaction(attempt, [...sentTriggers(attempt), accept ? "succeeded" : "returned"], {}, at)
          const next = yield* moveOrder(order, [accept ? "mismatch_accepted" : "mismatch_returned"], at)
          yield* persist(next, txn)
          yield* emit(accept ? "payment.succeeded" : "payment.returned", next, txn, { received: order.received_amount })
          return next
        }))))
        return yield* viewOrder(decided)
      })


      const attemptSession = Effect.fn("Payments.attemptSession")(function*(sessionId: string, input: SessionAttemptInput) {
        const claimed = yield* orDieConflict(uow.transaction(Effect.gen(function*() {
          const found = yield* sessions.lock(sessionId)
          if (Option.isNone(found)) return yield* new CheckoutSessionNotFound({ message: `No checkout session ${sessionId}` })
          const session = found.value
          if (session.status !== "open") {
            return yield* new InvalidSessionState({ message: `Checkout session ${session.id} is ${session.status}; an attempt needs it open` })
          }
          const method = findMethod(input.payment_method.code)
          if (method === undefined) return yield* new UnknownPaymentMethod({ message: `Unknown payment method ${input.payment_method.code}` })
          if (session.payment_methods !== null && !session.payment_methods.includes(method.code)) {
            return yield* invalidField("payment_method.code", `${method.code} is not offered by this checkout session`)
          }
          const country = session.country ?? homeCountry(session.currency)
          if (!routable(method, country, session.currency)) {
            return yield* new PaymentUnroutable({ message: `${method.code} cannot be routed for ${country} / ${session.currency}` })
          }
          const details = input.payment_method.details
          const errors: Array<{ field: string; message: string }> = []
          const document = checkLocalFields(method, details?.document_id, input.customer?.ip, (field, message) => errors.push({ field, message }))
          if (method.code === "card" && details?.card_token === undefined) errors.push({ field: "payment_method.details.card_token", message: "is required: the card, vaulted" })
          if (errors.length > 0) return yield* new ValidationFailed({ message: "Invalid attempt", errors })
          const card = details?.card_token !== undefined && method.code === "card" ? yield* revealCard(session.account_id, details.card_token) : undefined
          const order = yield* loadLocked(session.order_id)
          const manual = session.capture_method === "manual" && method.code === "card"
          const at = yield* nowIso
          // What the customer typed on the hosted page (the IP is a risk signal, never stored).
          const { ip: _ip, ...typed } = input.customer ?? {}
          const customer = Object.values(typed).some((v) => v !== undefined) ? { ...order.customer, ...typed } : order.customer
          const updated: Order = {
            ...order,
            customer: customer as Order["customer"],
            payment_method: method.code,
            capture_method: manual ? "manual" : "automatic",
            country,
            card_token: card?.card.token ?? null,
            updated_at: at,
            version: order.version + 1
          }
          yield* orders.update(updated)
          yield* sessions.update({ ...session, attempts: session.attempts + 1, updated_at: at, version: session.version + 1 })
          const txn = yield* newTransaction(updated, manual ? "authorization" : "payment", updated.amount, {
            payment_instrument: card !== undefined ? cardInstrument(card.card, undefined) : null
          })
          yield* transactions.insert(txn)
          return { order: updated, txn, card, method, document }
        })))
        yield* guarded(claimed.order.id, Effect.gen(function*() {
          if (claimed.card !== undefined) {
            const cvc = yield* cvcs.take(claimed.card.card.token)
            yield* authorizeAttempt(claimed.order, claimed.txn, {
              number: claimed.card.number,
              exp_month: claimed.card.card.exp_month,
              exp_year: claimed.card.card.exp_year,
              cvc: Option.getOrUndefined(cvc)
            }, { merchantInitiated: false, authenticated: false })
            return
          }
          const started = yield* provider.startPayment({
            reference: claimed.txn.id,
            idempotency_key: claimed.txn.id,
            method: claimed.method.code,
            amount: claimed.order.amount,
            currency: claimed.order.currency,
            country: claimed.order.country,
            document_id: claimed.document,
            customer_ip: input.customer?.ip
          }).pipe(knownOrUnavailable)
          if (started === "unavailable") {
            yield* orDieConflict(recordAuthorization(claimed.order.id, claimed.txn.id, "unavailable", false))
            return
          }
          yield* awaitCustomer(claimed.order, claimed.txn, started.next_action, started.provider_transaction_id)
        }).pipe(Effect.catchTag("ProviderUnavailable", () => Effect.void)))
      })

      // --- settlement worker --------------------------------------------------------------

      const settleOne = (capture: Transaction) =>
        guarded(capture.order_id, Effect.gen(function*() {
          if (capture.provider_transaction_id === null) return false
          const state = yield* provider.settlement(capture.provider_transaction_id).pipe(
            Effect.catchTag("ProviderUnavailable", () => Effect.succeed("pending" as const))
          )
          if (state !== "settled") return false
          return yield* orDieConflict(uow.transaction(Effect.gen(function*() {
            const order = yield* loadLocked(capture.order_id)
            const txns = yield* transactions.listByOrder(order.id)
            const current = txns.find((t) => t.id === capture.id)
            if (current === undefined || current.status !== "processing") return false
            const books = bookOf(order, txns.filter((t) => t.id !== capture.id), "settle")
            if (books instanceof Error) return false
            const at = yield* nowIso
            const settledTxn = moveTransaction(current, ["succeeded"], {}, at)
            yield* transactions.update(settledTxn)
            yield* settleCapture(order, books.auth, books.book, settledTxn, at)
            return true
          })))
        }))

      const settleDue = Effect.fn("Payments.settleDue")(function*() {
        const due = yield* transactions.listSettling(50)
        let settled = 0
        for (const capture of due) {
          if (yield* settleOne(capture).pipe(Effect.catch(() => Effect.succeed(false)))) settled++
        }
        return settled
      })

      // --- reads --------------------------------------------------------------------------

      const getOrder = Effect.fn("Payments.getOrder")(function*(account: Account, id: string) {
        const found = yield* orders.find(account.id, id)
        if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${id}` })
        return yield* viewOrder(found.value)
      })

      const orderOf = (accountId: string, orderId: string) =>
        Effect.map(orders.find(accountId, orderId), Option.getOrThrow)

      return Payments.of({
        create,
        attemptSession,
        capture: Effect.fn("Payments.capture")(function*(account, input) {
          const orderId = yield* resolveTarget(account.id, input)
          return yield* captureOrder(orderId, input.amount, input.final ?? true)
        }),
        void: Effect.fn("Payments.void")(function*(account, target) {
          const orderId = yield* resolveTarget(account.id, target)
          return yield* voidOrder(orderId)
        }),
        completeThreeDs,
        simulate,
        decideAmountMismatch,
        getOrder,
        getOrderByReference: Effect.fn("Payments.getOrderByReference")(function*(account, reference) {
          const found = yield* orders.findByReference(account.id, reference)
          if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order with merchant_reference ${reference}` })
          return yield* viewOrder(found.value)
        }),
        getTransaction: Effect.fn("Payments.getTransaction")(function*(account, id) {
          const found = yield* transactions.find(account.id, id)
          if (Option.isNone(found)) return yield* new TransactionNotFound({ message: `No transaction ${id}` })
          return transactionView(yield* orderOf(account.id, found.value.order_id), found.value)
        }),
        searchOrders: (account, input) => search(input, (q) => orders.search(account.id, q), viewOrder),
        searchTransactions: (account, input) =>
          search(input, (q) => transactions.search(account.id, q), (t) => Effect.map(orderOf(account.id, t.order_id), (o) => transactionView(o, t))),
        hostedAttempt: (transactionId) =>
          Effect.gen(function*() {
            const txn = yield* transactions.findAny(transactionId)
            if (Option.isNone(txn)) return Option.none()
            const order = yield* orders.findAny(txn.value.order_id)
            return Option.map(order, (o) => ({ order: o, transaction: txn.value }))
          }),
        providerOutcome,
        answerChallenge,
        settleDue,
        operator: {
          get: Effect.fn("Payments.operator.get")(function*(orderId) {
            const found = yield* orders.findAny(orderId)
            if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${orderId}` })
            return yield* viewOrder(found.value)
          }),
          capture: Effect.fn("Payments.operator.capture")(function*(orderId, amount, final) {
            const found = yield* orders.findAny(orderId)
            if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${orderId}` })
            return yield* captureOrder(orderId, amount, final)
          }),
          void: Effect.fn("Payments.operator.void")(function*(orderId) {
            const found = yield* orders.findAny(orderId)
            if (Option.isNone(found)) return yield* new OrderNotFound({ message: `No order ${orderId}` })
            return yield* voidOrder(orderId)
          })
        }
      })
    })
  )
}
