/**
 * Operation: void a manual-capture authorization (POST /v1/payments/void, `tender payments void`):
 * release what remains. Reserve → call → record. A successful void transaction ends `canceled`
 * (spec, Transaction: "canceled — Void released the hold").
 */
import { Effect } from "effect"
import * as Authorization from "../AuthorizationStatus.ts"
import * as OrderAggregate from "../OrderStatus.ts"
import { TransactionRepo, type VoidResult } from "../PaymentPorts.ts"
import * as Txn from "../TransactionStatus.ts"
import { type Books, booksOf, shownAs } from "./Books.ts"
import { decided, emit, guarded, lockOrder, newTransaction, nowIso, saveOrder, saveTxn, snapshot, unitOfWork } from "./Kit.ts"
import { callAndRecord, idempotencyKey, refusedCall, reserve } from "./ProviderStep.ts"
import { providerOf, refuseOtherChannel, sameProvider } from "./Route.ts"

/**
 * The record step of a void; a no-op answering the current state when `key` was recorded already.
 * With captures still in flight the authorization is left `closing` (the payment shows `settling`):
 * their own ends close it (Capture.endCapture).
 */
export const recordVoid = (orderId: string, voidId: string, answer: VoidResult | "unavailable", key: string) =>
  unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(orderId)
    const txns = yield* (yield* TransactionRepo).listByOrder(order.id)
    const voidTxn = txns.find((t) => t.id === voidId)!
    const books = booksOf(order, txns.filter((t) => t.id !== voidId), "void")
    if (books instanceof Error) return yield* Effect.die(books)
    const captured = books.book.captured
    const amounts = { voided: voidTxn.amount, ...(captured > 0 ? { captured } : {}) }
    if (voidTxn.pending_call?.key !== key) {
      // Recorded already: the payment as it stands, this void included.
      const now = booksOf(order, txns, "void") as Books
      return snapshot(order, voidTxn, voidTxn.status === "canceled" ? { ...amounts, as: shownAs(now.book.status) } : { as: "failed" })
    }
    const at = yield* nowIso
    if (answer === "unavailable" || answer._tag === "Refused") {
      const failed = yield* refusedCall(voidTxn, answer, at)
      yield* saveTxn(failed)
      return snapshot(order, failed, { as: "failed" })
    }
    const done = yield* decided(Txn.transition(voidTxn, "canceled", at, {
      provider_transaction_id: answer.provider_transaction_id,
      pending_call: null
    }))
    yield* saveTxn(done.next)
    const auth = yield* decided(Authorization.transition(books.book.status, Authorization.voidTrigger(books.book)))
    if (auth.status === "closing") return snapshot(order, done.next, { ...amounts, as: shownAs(auth.status) })
    const closed = yield* decided(auth.status === "canceled"
      ? OrderAggregate.transition(order, "authorization_voided", at)
      : OrderAggregate.transition(order, "authorization_closed_settled", at, { payment_instrument: books.auth.payment_instrument }))
    yield* saveOrder(closed.next)
    const lastCapture = [...books.captures].reverse().find((t) => t.status === "completed")
    yield* emit(auth.events, closed.next, books.auth, { ...(captured > 0 ? { capture: { captured, capture: lastCapture } } : {}), voided: voidTxn.amount })
    return snapshot(closed.next, done.next, amounts)
  }))

export const voidAuthorization = (orderId: string, channelId?: string) =>
  guarded(orderId, Effect.gen(function*() {
    const reserved = yield* unitOfWork(Effect.gen(function*() {
      const order = yield* lockOrder(orderId)
      const transactions = yield* TransactionRepo
      const books = booksOf(order, yield* transactions.listByOrder(order.id), "void")
      if (books instanceof Error) return yield* Effect.fail(books)
      yield* refuseOtherChannel(channelId, books.auth)
      const plan = Authorization.planVoid(books.book)
      if (plan instanceof Error) return yield* Effect.fail(plan)
      const born = yield* newTransaction(order, "void", plan.release, {
        ...sameProvider(books.auth),
        parent_transaction_id: books.auth.id,
        payment_instrument: books.auth.payment_instrument
      })
      const txn = yield* reserve(born, "void", idempotencyKey(born, "void"), yield* nowIso)
      yield* transactions.insert(txn)
      return { auth: books.auth, voidTxn: txn }
    }))
    const key = reserved.voidTxn.pending_call!.key
    const provider = yield* providerOf(reserved.voidTxn)
    return yield* callAndRecord("void", "void", provider.voidCard({
      reference: reserved.voidTxn.id,
      idempotency_key: key,
      authorization: reserved.auth.provider_transaction_id ?? "",
      amount: reserved.voidTxn.amount
    }), (answer) => recordVoid(orderId, reserved.voidTxn.id, answer, key), "The card service is unreachable; the void was recorded as failed and the authorization stands")
  }))
