/**
 * Operation: end a live session, expired or canceled, and its order with it. Load under the one lock
 * order (the order's provider lock, the order row, then the session row) → decide (pure: planClose)
 * → persist (one unit of work: the rows and their events) → respond.
 */
import { Effect, Option, Result } from "effect"
import { CardPaymentInProgress, type InvalidOrderStatusTransition, type InvalidSessionState, type InvalidTransactionStatus } from "../../kernel/Errors.ts"
import { type Decided, type Moved, revise } from "../../kernel/StateMachine.ts"
import { isoOf, nowIso } from "../../kernel/Time.ts"
import * as OrderAggregate from "../../payments/Order.ts"
import type { Order, Transaction } from "../../payments/Payment.ts"
import { TransactionRepo } from "../../payments/PaymentPorts.ts"
import * as Txn from "../../payments/Transaction.ts"
import { guarded, lockOrder } from "../../payments/operations/Load.ts"
import { saveOrder, saveSession, saveTxn, unitOfWork } from "../../payments/operations/Persist.ts"
import * as Session from "../CheckoutSession.ts"
import { CheckoutSessionRepo } from "../SessionPorts.ts"

export type CloseTrigger = "expired" | "canceled"

/** The moves a session's end makes: the session's, its order's (unless an attempt may still report), its attempts'. */
export interface ClosePlan {
  readonly session: Moved<Session.CheckoutSession>
  /** Undefined while an attempt the customer started at a provider may still report (then it moves the order). */
  readonly order: Moved<Order> | undefined
  readonly transactions: ReadonlyArray<Decided<Transaction>>
}

/**
 * Pure: how a session ends. A provider call still in flight (`pending_call`) blocks the end: 409
 * `card_payment_in_progress`; a final session never changes: `invalid_session_state`. Otherwise a
 * cancel ends every attempt with the session, so no later outcome can settle the order of a canceled
 * session; an expiry leaves an attempt the customer already started at a provider to report (spec:
 * "can still report its outcome after expiry"), inside a bounded window after which the
 * window-expiry worker (payments/operations/ExpireWindows.ts) closes it.
 *
 * The order and its attempts move in the same unit of work as a live session, so a live session's
 * order is always in flight: their tables refusing the move (InvalidOrderStatusTransition,
 * InvalidTransactionStatus) means the records disagree, a defect the shell raises, never skips.
 */
export const planClose = (
  session: Session.CheckoutSession,
  order: Order,
  attempts: ReadonlyArray<Transaction>,
  trigger: CloseTrigger,
  at: string
): Result.Result<ClosePlan, CardPaymentInProgress | InvalidSessionState | InvalidOrderStatusTransition | InvalidTransactionStatus> =>
  Result.gen(function*() {
    if (attempts.some(Txn.callInFlight)) {
      return yield* Result.fail(new CardPaymentInProgress({ message: `An attempt on checkout session ${session.id} is at the provider; try again once it is recorded` }))
    }
    const moved = yield* Session.transition(session, trigger, at, { next_action: null })
    const open = attempts.filter((t) => Txn.isInFlight(t.status))
    const started = trigger === "expired" ? open.filter((t) => t.provider_transaction_id !== null) : []
    if (started.length > 0) {
      // Bounded: an abandoned provider page must not keep the order open for ever.
      const bound = isoOf(Date.parse(at) + Session.LATE_OUTCOME_WINDOW_MS)
      const bounded = started.filter((t) => t.expires_at === null || t.expires_at > bound).map((t) => revise(t, { expires_at: bound }, at))
      return { session: moved, order: undefined, transactions: bounded }
    }
    const orderMoved = yield* OrderAggregate.transition(order, "session_closed", at)
    const ended: Array<Decided<Transaction>> = []
    for (const t of open) ended.push((yield* Txn.transition(t, "canceled", at, { decline_code: `session_${trigger}`, next_action: null })).next)
    return { session: moved, order: orderMoved, transactions: ended }
  })

/** The records disagree (see planClose): a defect, which rolls the unit of work back. */
const invariant = (e: InvalidOrderStatusTransition | InvalidTransactionStatus) =>
  Effect.die(new Error(`Checkout session's records disagree: ${e.message}`, { cause: e }))

/** Ends the session; answers its new row. */
export const close = (session: Session.CheckoutSession, trigger: CloseTrigger) =>
  guarded(session.order_id, unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(session.order_id)
    const current = Option.getOrThrow(yield* (yield* CheckoutSessionRepo).lock(session.id))
    const attempts = yield* (yield* TransactionRepo).listByOrder(order.id)
    const plan = planClose(current, order, attempts, trigger, yield* nowIso)
    if (Result.isFailure(plan)) return yield* Effect.fail(plan.failure)
    yield* saveSession(plan.success.session)
    if (plan.success.order !== undefined) yield* saveOrder(plan.success.order.next)
    for (const t of plan.success.transactions) yield* saveTxn(t)
    return plan.success.session.next
  }))).pipe(
    Effect.catchTags({ InvalidOrderStatusTransition: invariant, InvalidTransactionStatus: invariant }),
    // The order's lock stayed held past the wait: a provider step is still running on it.
    Effect.catchTag("Conflict", () =>
      Effect.fail(new CardPaymentInProgress({ message: `An attempt on checkout session ${session.id} is at the provider; try again shortly` })))
  )
