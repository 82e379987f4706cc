/**
 * The record step of a payment attempt (a direct payment's, or one under a checkout session): what
 * the provider, the customer or the clock said, applied to the transaction, its order and its
 * session in one unit of work. Create, session attempts, 3-D Secure, provider outcomes,
 * reconciliation and window expiry all record through here, so an outcome means the same whatever
 * brought it. `decide` is pure; `record` loads under lock, decides, persists.
 */
import { Effect, Option, Result } from "effect"
import * as Session from "../../sessions/CheckoutSession.ts"
import { type DomainError, PaymentUnexpectedState } from "../../kernel/Errors.ts"
import * as OrderAggregate from "../Order.ts"
import type { OrderTrigger } from "../Order.ts"
import type { NextAction, Order, Transaction } from "../Payment.ts"
import { type Decided, type Moved, revise } from "../../kernel/StateMachine.ts"
import * as Txn from "../Transaction.ts"
import { nowIso } from "../../kernel/Time.ts"
import { observeAuthorization } from "../../kernel/OperationalMetrics.ts"
import { findMethod } from "../PaymentMethods.ts"
import { lockOrder, lockSessionOf, loadTxn } from "./Load.ts"
import { afterCommit, emit, saveOrder, saveSession, saveTxn, unitOfWork } from "./Persist.ts"
import { retryUntil } from "./Retry.ts"

export type AttemptOutcome =
  /** Money moved (automatic capture, a local method paid) or is held (manual capture). */
  | { readonly _tag: "Approved"; readonly provider_transaction_id: string | null; readonly multicapture: boolean }
  | { readonly _tag: "Declined"; readonly decline_code: string; readonly provider_transaction_id: string | null }
  /**
   * A direct payment's create reached no provider (nothing applied anywhere): the attempt fails
   * `provider_unavailable`, the order waits for the same request again (contract.md, Idempotency).
   */
  | { readonly _tag: "Unreachable" }
  /** 3-D Secure: the customer answers the issuer's challenge first. */
  | { readonly _tag: "Challenge"; readonly provider_transaction_id: string; readonly challenge_url: string; readonly merchantInitiated: boolean }
  /** A customer step: redirect, QR, voucher, bank transfer (sent), or card/CVC collection (not sent). */
  | { readonly _tag: "AwaitsCustomer"; readonly next_action: NextAction; readonly provider_transaction_id: string | null }
  /** The customer canceled at the provider, or the payment window closed. */
  | { readonly _tag: "Closed"; readonly how: "canceled" | "expired" }
  /** Crypto: funds arrived with the wrong amount; the merchant decides. */
  | { readonly _tag: "Mismatch"; readonly received: number }

export interface Decision {
  readonly order: Moved<Order> | undefined
  /** The attempt's next row; undefined when the outcome leaves it as it is (a crypto mismatch). */
  readonly txn: Decided<Transaction> | undefined
  readonly session: Moved<Session.CheckoutSession> | undefined
}

const collects = (action: NextAction) => action.type === "collect_card" || action.type === "collect_cvv"

/**
 * The order's trigger for a declined or closed attempt: a session's customer may retry while
 * attempts remain; a window closing behind a session that already ended releases the order as the
 * session's end did (its event told the merchant); a declined last attempt fails it.
 */
const endTrigger = (order: Order, session: Option.Option<Session.CheckoutSession>, closed?: "canceled" | "expired"): OrderTrigger => {
  if (Option.isSome(session) && Session.canRetry(session.value)) return "attempt_declined_retry"
  if (closed !== undefined && Option.isSome(session) && !Session.isLive(session.value.status)) return "session_closed"
  if (closed !== undefined && order.subtype !== "checkout") return closed
  return "attempt_declined_final"
}

/**
 * How long a customer step at a provider (a redirect, a 3-D Secure challenge) stays open when the
 * provider names no window: abandoned pages must not keep orders in flight for ever.
 */
export const CUSTOMER_STEP_WINDOW_MS = 60 * 60 * 1000

const windowOf = (action: NextAction, at: string): string =>
  action.expires_at ?? new Date(Date.parse(at) + CUSTOMER_STEP_WINDOW_MS).toISOString()

/**
 * Pure: an attempt the provider declined, failed with its code: what `decide` records, and what a
 * smart retry records of its first try (RunAttempt.reserveRetry) without moving the order.
 */
export const declinedTxn = (
  txn: Transaction,
  declined: { readonly decline_code: string; readonly provider_transaction_id: string | null },
  at: string
) =>
  Txn.transition(txn, Txn.viaSent(txn, "declined"), at, {
    decline_code: declined.decline_code,
    provider_transaction_id: declined.provider_transaction_id ?? txn.provider_transaction_id,
    // A provider's challenge is marked answered before its verdict is known: a failed one reads denied.
    ...(txn.three_ds !== null && declined.decline_code === "authentication_failed" ? { three_ds: "denied" as const } : {}),
    next_action: null,
    pending_call: null
  })

/** Pure: the moves an outcome makes. A transition the tables refuse is an error value. */
export const decide = (
  order: Order,
  txn: Transaction,
  session: Option.Option<Session.CheckoutSession>,
  outcome: AttemptOutcome,
  at: string
): Result.Result<Decision, DomainError> =>
  Result.gen(function*() {
    // Funds arrived with the wrong amount: only the merchant's decision moves the order now.
    if (order.received_amount !== null) {
      return yield* Result.fail(new PaymentUnexpectedState({ message: `Order ${order.id} awaits the merchant's amount-mismatch decision` }))
    }
    const sent: ReadonlyArray<OrderTrigger> = order.status === "pending" ? ["attempt_sent"] : []
    const live = Option.getOrUndefined(session)
    const follow = (o: Session.AttemptOutcome) => (live === undefined ? undefined : Session.follow(live, o, at))
    switch (outcome._tag) {
      case "Approved": {
        const manual = order.capture_method === "manual"
        const done = yield* Txn.transition(txn, Txn.viaSent(txn, "succeeded"), at, {
          provider_transaction_id: outcome.provider_transaction_id ?? txn.provider_transaction_id,
          multicapture: manual ? outcome.multicapture : null,
          next_action: null,
          three_ds: txn.three_ds === null ? null : "approved",
          pending_call: null
        })
        const moved = yield* OrderAggregate.transition(order, [...sent, manual ? "authorization_succeeded" : "payment_settled"], at, {
          // spec: the order carries the instrument once it succeeded
          payment_instrument: manual ? order.payment_instrument : done.next.payment_instrument
        })
        return { order: moved, txn: done.next, session: follow({ _tag: "Succeeded", transaction_id: txn.id }) }
      }
      case "Declined": {
        const failed = yield* declinedTxn(txn, outcome, at)
        const moved = yield* OrderAggregate.transition(order, endTrigger(order, session), at)
        return { order: moved, txn: failed.next, session: follow({ _tag: "Declined" }) }
      }
      case "Unreachable": {
        const failed = yield* Txn.transition(txn, Txn.viaSent(txn, "declined"), at, {
          decline_code: "provider_unavailable",
          next_action: null,
          pending_call: null
        })
        const moved = yield* OrderAggregate.transition(order, [...sent, "attempt_unreachable"], at, { retry_until: retryUntil(at) })
        return { order: moved, txn: failed.next, session: undefined }
      }
      case "Closed": {
        const closed = yield* Txn.transition(txn, "canceled", at, {
          decline_code: outcome.how === "canceled" ? "canceled_by_customer" : "expired",
          next_action: null,
          pending_call: null
        })
        const moved = yield* OrderAggregate.transition(order, endTrigger(order, session, outcome.how), at)
        return { order: moved, txn: closed.next, session: follow({ _tag: "Declined" }) }
      }
      case "Challenge": {
        const action: NextAction = { type: "redirect", redirect_url: outcome.challenge_url }
        const fields = {
          provider_transaction_id: outcome.provider_transaction_id,
          three_ds: "required" as const,
          next_action: action,
          expires_at: windowOf(action, at),
          pending_call: null
        }
        const waiting = txn.status === "initial" ? (yield* Txn.transition(txn, "sent", at, fields)).next : revise(txn, fields, at)
        // Challenged again by the authorization after a challenge (a provider's second action): the
        // order still awaits the customer; it stays as it is, with no second requires_action event.
        const moved = order.status === "requires_action"
          ? undefined
          : yield* OrderAggregate.transition(order, [...sent, outcome.merchantInitiated ? "merchant_action_required" : "action_required"], at)
        return { order: moved, txn: waiting, session: follow({ _tag: "AwaitsCustomer", next_action: action }) }
      }
      case "AwaitsCustomer": {
        // Card and CVC collection happen before anything reaches the provider: the attempt stays initial.
        const fields = {
          next_action: outcome.next_action,
          provider_transaction_id: outcome.provider_transaction_id,
          expires_at: windowOf(outcome.next_action, at),
          pending_call: null
        }
        const waiting = txn.status === "initial" && !collects(outcome.next_action)
          ? (yield* Txn.transition(txn, "sent", at, fields)).next
          : revise(txn, fields, at)
        const moved = yield* OrderAggregate.transition(order, "action_required", at)
        return { order: moved, txn: waiting, session: follow({ _tag: "AwaitsCustomer", next_action: outcome.next_action }) }
      }
      case "Mismatch": {
        const moved = yield* OrderAggregate.transition(order, outcome.received < order.amount ? "underpaid" : "overpaid", at, {
          received_amount: outcome.received
        })
        // The funds arrived: a hosted checkout completes now; a declined mismatch later returns them.
        // The payment window no longer applies: the attempt waits on the merchant.
        return { order: moved, txn: revise(txn, { expires_at: null }, at), session: follow({ _tag: "Succeeded", transaction_id: txn.id }) }
      }
    }
  })

/**
 * Records an outcome on an attempt, in one unit of work under the order's row lock (then the
 * session's). `expectedKey`: the provider call this answers; when that call was recorded meanwhile
 * (reconciliation raced the caller), nothing changes and the current rows are returned.
 */
export const record = (orderId: string, txnId: string, outcome: AttemptOutcome, expectedKey?: string) =>
  unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(orderId)
    const txn = yield* loadTxn(txnId)
    if (expectedKey !== undefined && txn.pending_call?.key !== expectedKey) return { order, txn }
    return yield* recordOn(order, txn, outcome)
  }))

/**
 * The record on rows the caller holds as they stand in its unit of work: loaded under the order's
 * lock (`record`), or inserted by this very unit of work, invisible to everyone else until it
 * commits (a create whose provider answers in it), which no re-read could tell anything new about.
 */
export const recordOn = (order: Order, txn: Transaction, outcome: AttemptOutcome) =>
  Effect.gen(function*() {
    const session = yield* lockSessionOf(order)
    const decision = decide(order, txn, session, outcome, yield* nowIso)
    if (Result.isFailure(decision)) return yield* Effect.fail(decision.failure)
    const { order: moved, txn: changed, session: sessionMoved } = decision.success
    if (changed !== undefined) yield* saveTxn(changed)
    const nextTxn = changed ?? txn
    if (moved !== undefined) yield* saveOrder(moved.next)
    const nextOrder = moved?.next ?? order
    yield* emit(moved?.events ?? [], nextOrder, nextTxn, outcome._tag === "Mismatch" ? { received: outcome.received } : {})
    yield* saveSession(sessionMoved)
    // Counted where an answer first changes an attempt (not when a late copy of it is a no-op), and
    // only once that change is committed (a unit rolled back or run again must not count).
    if (changed !== undefined && changed.status !== txn.status && (outcome._tag === "Approved" || outcome._tag === "Declined")) {
      yield* countAuthorization(txn, outcome._tag === "Approved" ? "approved" : "declined")
    }
    return { order: nextOrder, txn: nextTxn }
  })

/** The providers Tender ships; any other (an operator's HTTP provider, named as they like) is `http`: labels stay few. */
const BUILT_IN_PROVIDERS = new Set(["sandbox", "stripe", "adyen"])

const channelLabel = (provider: string) => BUILT_IN_PROVIDERS.has(provider) ? provider : "http"

/**
 * Counts an attempt's authorization answer (tender_authorizations_total) once its unit of work
 * commits: here for every recorded answer, and for a smart retry's first try, which RunAttempt's
 * reserveRetry records itself. The one home of the counter's labels.
 */
export const countAuthorization = (txn: Transaction, outcome: "approved" | "declined") =>
  afterCommit(observeAuthorization(
    channelLabel(txn.provider),
    findMethod(txn.payment_method) !== undefined ? txn.payment_method : "other",
    outcome
  ))
