/**
 * The end of one piece of a manual-capture authorization — a capture settling or failing, the
 * merchant's void going through, a release recorded — on its books, in the caller's unit of work:
 * the authorization's rows (AuthorizationStatus.EndRows) with their events, the release it still
 * owes reserved (or recorded, when the provider's void already released it), and its close.
 */
import { Effect } from "effect"
import * as Authorization from "../Authorization.ts"
import * as OrderAggregate from "../Order.ts"
import type { Order, Transaction } from "../Payment.ts"
import type { CaptureFacts } from "../PaymentEvents.ts"
import { TransactionRepo } from "../PaymentPorts.ts"
import * as Txn from "../Transaction.ts"
import type { Books } from "./Books.ts"
import { newTransaction } from "./NewTransaction.ts"
import { decided, emit, saveOrder } from "./Persist.ts"
import { idempotencyKey, reserve } from "./ProviderStep.ts"
import { providerOf, sameProvider } from "./Route.ts"

export interface Ended {
  readonly order: Order
  readonly status: Authorization.AuthorizationStatus
  /** A release reserved in this unit of work: the caller sends it once this unit of work committed (Void.sendRelease). */
  readonly release: ReservedRelease | undefined
}

/** A release reserved for its call, with the provider's id of the authorization it releases of. */
export interface ReservedRelease {
  readonly txn: Transaction
  readonly authorization: string
}

/**
 * A release of `amount`, completing the merchant's void `voided` (it points at it). `covered`: the
 * provider's void released it already: recorded `canceled` at once, with that void's provider id,
 * and no call. Otherwise reserved for its call (Void.sendRelease).
 */
const recordRelease = (order: Order, books: Books, voided: Transaction, release: Authorization.Release, at: string) =>
  Effect.gen(function*() {
    const born = yield* newTransaction(order, "void", release.amount, {
      ...sameProvider(books.auth),
      parent_transaction_id: voided.id,
      payment_instrument: books.auth.payment_instrument
    })
    const txn = release.covered
      ? (yield* decided(Txn.transition(born, "canceled", at, { provider_transaction_id: voided.provider_transaction_id }))).next
      : yield* reserve(born, "void", idempotencyKey(born, "void"), at)
    yield* (yield* TransactionRepo).insert(txn)
    return release.covered ? undefined : { txn, authorization: books.auth.provider_transaction_id ?? "" } satisfies ReservedRelease
  })

/**
 * Applies `rows` to `books` (which count the piece that ended neither way): the own row's events
 * (`own`: their facts), the release owed, and the close with its order move and events. `after`:
 * the captured total with this end, and what voids released with it (the merchant's void once it
 * went through: `voided`).
 */
export const applyEnd = (
  order: Order,
  books: Books,
  rows: Authorization.EndRows,
  at: string,
  own: { readonly capture?: CaptureFacts; readonly voided?: number },
  after: { readonly captured: number; readonly voided: number; readonly voidedBy: Transaction | undefined; readonly lastSettled: Transaction | undefined }
) =>
  Effect.gen(function*() {
    const moved = yield* decided(Authorization.transition(books.book.status, rows.own))
    if (rows.release !== undefined && after.voidedBy === undefined) {
      return yield* Effect.die(new Error(`A release owed on ${books.auth.id} with no void gone through`))
    }
    const release = rows.release === undefined ? undefined : yield* recordRelease(order, books, after.voidedBy!, rows.release, at)
    const close = rows.close === undefined ? undefined : yield* decided(Authorization.transition(moved.status, rows.close))
    const status = close?.status ?? moved.status
    let current = order
    if (status === "completed" || status === "canceled") {
      const next = yield* decided(status === "completed"
        ? OrderAggregate.transition(order, "authorization_closed_settled", at, { payment_instrument: books.auth.payment_instrument })
        : OrderAggregate.transition(order, "authorization_voided", at))
      yield* saveOrder(next.next)
      current = next.next
    }
    yield* emit(moved.events, current, books.auth, own)
    if (close !== undefined) {
      // The close names the capture that settled last, and all that voids released (when one went through).
      const voided = after.voided + (rows.release?.covered === true ? rows.release.amount : 0)
      yield* emit(close.events, current, books.auth, {
        capture: { captured: after.captured, capture: after.lastSettled },
        ...(after.voidedBy !== undefined ? { voided } : {})
      })
    }
    return { order: current, status, release } satisfies Ended
  })

/** Whether the authorization's provider releases all it has not captured on a void (PaymentProvider.voidReleasesRemainder). */
export const voidReleasesRemainder = (books: Books) => Effect.map(providerOf(books.auth), (provider) => provider.voidReleasesRemainder === true)

/** The capture that settled last, of `captures`. */
export const lastSettled = (captures: ReadonlyArray<Transaction>) => [...captures].reverse().find((t) => t.status === "completed")
