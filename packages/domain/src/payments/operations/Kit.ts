/**
 * What every payment operation shares: loading under lock, persisting the moves a transition
 * produced with their events (one unit of work), the per-order provider lock, and the views.
 *
 * Lock order, for the whole codebase: the order's `Locks` key, then the order row (`OrderRepo.lock`),
 * then its checkout session row (`CheckoutSessionRepo.lock`). Nothing locks a session before its
 * order, so a session's cancel and its attempt's record can never deadlock.
 */
import { Effect, Option, Result } from "effect"
import * as Session from "../../sessions/CheckoutSession.ts"
import { Conflict } from "../../kernel/Errors.ts"
import { notCollecting } from "../../accounts/Account.ts"
import { type AccountId, Ids } from "../../kernel/Ids.ts"
import type { Order, Transaction } from "../Payment.ts"
import { type CaptureFacts, eventData, type PaymentEventType } from "../PaymentEvents.ts"
import { OrderRepo, PaymentProvider, TransactionRepo } from "../PaymentPorts.ts"
import { identifiersOf, major, orderView, type PaymentSnapshot, settlementReference } from "../PaymentViews.ts"
import { AccountRepo, Locks, UnitOfWork } from "../../kernel/Ports.ts"
import { CheckoutSessionRepo, PublicUrl } from "../../sessions/SessionPorts.ts"
import type { Decided, Moved } from "../../kernel/StateMachine.ts"
import { nowIso } from "../../kernel/Time.ts"
import * as Txn from "../Transaction.ts"
import { Outbox } from "../../webhooks/Webhooks.ts"

export { nowIso }

/** A transition's failure inside an operation: our own flows never ask for an impossible move. */
export const decided = <A, E>(result: Result.Result<A, E>): Effect.Effect<A> =>
  Result.isSuccess(result) ? Effect.succeed(result.success) : Effect.die(result.failure)

/** A version conflict under a held row lock is a bug, not a client's problem. */
export const orDieConflict = <A, E, R>(effect: Effect.Effect<A, E | Conflict, R>) =>
  Effect.catchIf(effect, (e): e is Conflict => e instanceof Conflict, (e) => Effect.die(e)) as Effect.Effect<A, Exclude<E, Conflict>, R>

/** One unit of work whose version conflicts are defects (every write in it is under a row lock). */
export const unitOfWork = <A, E, R>(effect: Effect.Effect<A, E | Conflict, R>) =>
  Effect.gen(function*() {
    const uow = yield* UnitOfWork
    return yield* orDieConflict(uow.transaction(effect))
  })

export const lockOrder = (orderId: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* OrderRepo).lock(orderId)
    if (Option.isNone(found)) return yield* Effect.die(new Error(`Order ${orderId} vanished`))
    return found.value
  })

export const loadTxn = (txnId: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* TransactionRepo).findAny(txnId)
    if (Option.isNone(found)) return yield* Effect.die(new Error(`Transaction ${txnId} vanished`))
    return found.value
  })

/** The checkout session behind an order, locked (after the order, per the lock order). */
export const lockSessionOf = (order: Order) =>
  order.subtype !== "checkout"
    ? Effect.succeed(Option.none<Session.CheckoutSession>())
    : Effect.gen(function*() {
      const sessions = yield* CheckoutSessionRepo
      const found = yield* sessions.findByOrder(order.id)
      return Option.isNone(found) ? found : yield* sessions.lock(found.value.id)
    })

/**
 * Serialises provider steps per order (Redis across processes when configured), and runs to the end
 * once started: a client hanging up must not cut a provider call from the record of its outcome.
 */
export const guarded = <A, E, R>(orderId: string, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const locks = yield* Locks
    return yield* Effect.uninterruptible(locks.withLock(`order:${orderId}`, effect, { waitMs: 30_000, ttlMs: 60_000 }))
  })

/** Writes the payment events a move emitted (the table's `emits`), in the caller's unit of work. */
export const emit = (
  types: ReadonlyArray<string>,
  order: Order,
  txn: Transaction,
  extra: { readonly capture?: CaptureFacts; readonly voided?: number; readonly received?: number } = {}
) => recordEvents(types, order, eventData(order, txn, extra))

/** Writes events of an order with one payload (payments', refunds', payouts'), in the caller's unit of work. */
export const recordEvents = (types: ReadonlyArray<string>, order: Order, data: Record<string, unknown>) =>
  Effect.gen(function*() {
    const outbox = yield* Outbox
    for (const type of types) {
      yield* outbox.record({
        account_id: order.account_id,
        type: type as PaymentEventType,
        livemode: order.livemode,
        processing_profile: order.processing_profile,
        order_id: order.id,
        data
      })
    }
  })

export const saveOrder = (next: Decided<Order>) => Effect.gen(function*() { yield* (yield* OrderRepo).update(next) })
export const saveTxn = (next: Decided<Transaction>) => Effect.gen(function*() { yield* (yield* TransactionRepo).update(next) })

/** Persists a session's move and its events (`checkout.session.*`, from the session's table). */
export const saveSession = (moved: Moved<Session.CheckoutSession> | undefined) =>
  moved === undefined ? Effect.void : Effect.gen(function*() {
    const sessions = yield* CheckoutSessionRepo
    const outbox = yield* Outbox
    const publicUrl = yield* PublicUrl
    yield* sessions.update(moved.next)
    for (const type of moved.events) yield* outbox.record(Session.sessionEvent(moved.next, type, publicUrl))
  })

/** A new attempt (or capture, or void) under an order: `initial`, on the order's provider. */
export const newTransaction = (order: Order, kind: Transaction["kind"], amount: number, fields: Partial<Omit<Transaction, "status">> = {}) =>
  Effect.gen(function*() {
    const ids = yield* Ids
    const provider = yield* PaymentProvider
    const at = yield* nowIso
    return Txn.born({
      id: yield* ids.make("transaction"),
      order_id: order.id,
      account_id: order.account_id,
      livemode: order.livemode,
      kind,
      amount,
      currency: order.currency,
      payment_method: order.payment_method,
      processing_profile: order.processing_profile,
      provider: provider.name,
      channel_id: provider.channel_id ?? null,
      provider_transaction_id: null,
      decline_code: null,
      payment_instrument: null,
      parent_transaction_id: null,
      final: null,
      multicapture: null,
      next_action: null,
      three_ds: null,
      customer_return_url: null,
      browser_flow: false,
      expires_at: null,
      pending_call: null,
      settlement_check_at: null,
      created_at: at,
      ...fields
    })
  })

/** Card instruments have their own home (Instrument.ts); re-exported for the operations that make them. */

// --- views --------------------------------------------------------------------------------

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

export const snapshot = (
  order: Order,
  txn: Transaction,
  /** `as`: the payment status to show when the verb's own outcome differs from the order's (a refused capture). */
  extra: { readonly as?: PaymentSnapshot["status"] | undefined; readonly captured?: number; readonly voided?: number } = {}
): PaymentSnapshot => {
  const status = extra.as ?? paymentStatus(order)
  return {
    order_id: order.id,
    transaction_id: txn.id,
    merchant_reference: order.merchant_reference,
    status,
    amount: major(order.amount, order.currency),
    currency: order.currency,
    provider_transaction_id: settlementReference(txn),
    additional_identifiers: identifiersOf(order),
    next_action: status === "requires_action" ? txn.next_action : null,
    ...(order.processing_profile !== null ? { processing_profile: order.processing_profile } : {}),
    ...(extra.captured !== undefined ? { captured_amount: major(extra.captured, order.currency) } : {}),
    ...(extra.voided !== undefined ? { voided_amount: major(extra.voided, order.currency) } : {})
  }
}

export const capturedOf = (txns: ReadonlyArray<Transaction>) =>
  txns.filter((t) => t.kind === "capture" && t.status === "completed").reduce((sum, t) => sum + t.amount, 0)

const viewWith = (order: Order, txns: ReadonlyArray<Transaction>) =>
  orderView(order, txns, order.capture_method === "manual" && order.status !== "pending" ? capturedOf(txns) : undefined)

export const viewOrder = (order: Order) =>
  Effect.gen(function*() {
    return viewWith(order, yield* (yield* TransactionRepo).listByOrder(order.id))
  })

/** A page of orders viewed with one read of all their transactions, not one per order (no N+1). */
export const viewOrders = (orders: ReadonlyArray<Order>) =>
  Effect.gen(function*() {
    const txns = yield* (yield* TransactionRepo).listByOrders(orders.map((o) => o.id))
    const byOrder = new Map<string, Array<Transaction>>()
    for (const t of txns) byOrder.set(t.order_id, [...byOrder.get(t.order_id) ?? [], t])
    return orders.map((order) => viewWith(order, byOrder.get(order.id) ?? []))
  })

/** A provider call reserved and not recorded yet: the outcome is in doubt until it is. */
export const callInFlight = (t: Transaction): boolean => t.pending_call !== null

/** The payment attempt of an order (payment or authorization), newest first. */
export const latestAttempt = (txns: ReadonlyArray<Transaction>) =>
  [...txns].reverse().find((t) => t.kind === "payment" || t.kind === "authorization")

/**
 * The paths a customer drives (the hosted page, the sandbox's pages, a provider's 3-D Secure return)
 * collect nothing for an account that is not active (suspended), as the API and the SDK refuse it.
 */
export const refuseInactive = (accountId: string) =>
  Effect.gen(function*() {
    const account = Option.getOrUndefined(yield* (yield* AccountRepo).findById(accountId as AccountId))
    const refused = account === undefined ? undefined : notCollecting(account)
    if (refused !== undefined) return yield* refused
  })
