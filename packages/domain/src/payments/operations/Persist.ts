/**
 * Persisting what an operation decided, in one unit of work: the moves a transition produced
 * (`Decided` records), their events (the transactional outbox), and a session's move with its own
 * events. A version conflict under a held row lock is a defect, never a client's problem.
 */
import { Context, Effect, Result } from "effect"
import { Conflict } from "../../kernel/Errors.ts"
import { UnitOfWork } from "../../kernel/Ports.ts"
import type { Decided, Moved } from "../../kernel/StateMachine.ts"
import * as Session from "../../sessions/CheckoutSession.ts"
import { CheckoutSessionRepo, PublicUrl } from "../../sessions/SessionPorts.ts"
import { Outbox } from "../../webhooks/Webhooks.ts"
import type { Order } from "../Order.ts"
import { type CaptureFacts, eventData, type PaymentEventType } from "../PaymentEvents.ts"
import { OrderRepo, TransactionRepo } from "../PaymentPorts.ts"
import type { Transaction } from "../Transaction.ts"

/** A transition's failure inside an operation: our own flows never ask for an impossible move. */
export const decided = <A, E>(result: Result.Result<A, E>): Effect.Effect<A> =>
  Result.isSuccess(result) ? Effect.succeed(result.success) : Effect.die(result.failure)

/** A version conflict under a held row lock is a bug, not a client's problem. */
export const orDieConflict = <A, E, R>(effect: Effect.Effect<A, E | Conflict, R>) =>
  Effect.catchIf(effect, (e): e is Conflict => e instanceof Conflict, (e) => Effect.die(e)) as Effect.Effect<A, Exclude<E, Conflict>, R>

/**
 * What the outermost unit of work runs once it has committed (`afterCommit`); `undefined` outside
 * any. Figures such as tender_authorizations_total count what was stored: a unit rolled back counts
 * nothing, and one run again counts once.
 */
const AfterCommit = Context.Reference<Array<Effect.Effect<void>> | undefined>("@tender/domain/payments/AfterCommit", {
  defaultValue: () => undefined
})

/** Runs `effect` once the enclosing unit of work has committed (at once outside any). */
export const afterCommit = (effect: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.flatMap(AfterCommit, (pending) => pending === undefined ? effect : Effect.sync(() => void pending.push(effect)))

/**
 * One unit of work whose version conflicts are defects (every write in it is under a row lock). One
 * inside another joins it (UnitOfWork), and what it leaves for `afterCommit` waits for the outer one.
 */
export const unitOfWork = <A, E, R>(effect: Effect.Effect<A, E | Conflict, R>) =>
  Effect.gen(function*() {
    const uow = yield* UnitOfWork
    if ((yield* AfterCommit) !== undefined) return yield* orDieConflict(uow.transaction(effect))
    let pending: Array<Effect.Effect<void>> = []
    const result = yield* orDieConflict(uow.transaction(Effect.suspend(() => {
      // Each run of the unit starts with nothing pending: a run that was rolled back and retried left its own.
      pending = []
      return Effect.provideService(effect, AfterCommit, pending)
    })))
    for (const committed of pending) yield* committed
    return result
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

