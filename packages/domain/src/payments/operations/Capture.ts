/**
 * Operation: capture a manual-capture authorization (POST /v1/payments/capture, `tender payments
 * capture`). Reserve (the capture, in flight, counts against the remainder at once) → call → record;
 * all three in one unit of work when the provider answers in it (the sandbox over PostgreSQL).
 * The settlement worker settles captures the provider accepted for later (`settleDue`).
 */
import { Effect } from "effect"
import * as Authorization from "../Authorization.ts"
import { CaptureAmountExceedsAuthorized, invalidField } from "../../kernel/Errors.ts"
import * as Money from "../../kernel/Money.ts"
import type { Order, Transaction } from "../Payment.ts"
import { TransactionRepo } from "../PaymentPorts.ts"
import { type CaptureResult, type PaymentProvider } from "../ProviderPorts.ts"
import type { PaymentSnapshot } from "../PaymentViews.ts"
import { revise } from "../../kernel/StateMachine.ts"
import * as Txn from "../Transaction.ts"
import { type Books, booksOf, shownAs } from "./Books.ts"
import { applyEnd, lastSettled, voidReleasesRemainder } from "./Closing.ts"
import { nowIso } from "../../kernel/Time.ts"
import { guarded, lockOrder } from "./Load.ts"
import { newTransaction } from "./NewTransaction.ts"
import { decided, saveTxn, unitOfWork } from "./Persist.ts"
import { snapshot } from "./Snapshot.ts"
import { answersInUnitOfWork, callAndRecord, idempotencyKey, joined, raise, refusedCall, reserve } from "./ProviderStep.ts"
import { whenSettled } from "./Settlement.ts"
import { providerOf, refuseOtherChannel, sameProvider } from "./Route.ts"
import { sendRelease } from "./Void.ts"

const parseCaptureAmount = (amount: string | undefined, currency: string) => {
  if (amount === undefined) return undefined
  const parsed = Money.parseAmount(amount, currency)
  if ("minor" in parsed) return parsed.minor
  return parsed.error === "not_positive"
    ? new CaptureAmountExceedsAuthorized({ message: "The capture amount must be positive" })
    : invalidField("amount", Money.amountErrorMessage(parsed.error, currency))
}

/**
 * A capture's end on the books — `capture` already moved to completed, or to failed — the
 * authorization's rows (Authorization.captureEnded) with their events, the release it owes, and the
 * order's close when the authorization closed. `books` counts the capture neither as settled nor as
 * in flight. Shared by the capture's record and the settlement worker; the caller sends the release
 * (Void.sendRelease) once its unit of work committed.
 */
export const endCapture = (order: Order, books: Books, capture: Transaction, at: string) =>
  Effect.gen(function*() {
    const settled = capture.status === "completed"
    // Only a closing authorization can owe a release.
    const rows = Authorization.captureEnded(
      books.book,
      { amount: capture.amount, final: capture.final === true, accepted: capture.provider_transaction_id !== null },
      settled,
      books.book.status === "closing" && (yield* voidReleasesRemainder(books))
    )
    const captured = books.book.captured + (settled ? capture.amount : 0)
    const ended = yield* applyEnd(order, books, rows, at, { capture: { captured, capture } }, {
      captured,
      voided: books.book.voided,
      voidedBy: books.voided,
      lastSettled: settled ? capture : lastSettled(books.captures)
    })
    return { ...ended, captured }
  })

/** The record step of a capture; a no-op answering the current state when `key` was recorded already. */
export const recordCapture = (orderId: string, captureId: string, answer: CaptureResult | "unavailable", key: string) =>
  Effect.flatMap(unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(orderId)
    const txns = yield* (yield* TransactionRepo).listByOrder(order.id)
    const capture = txns.find((t) => t.id === captureId)!
    const books = booksOf(order, txns.filter((t) => t.id !== capture.id), "capture")
    if (books instanceof Error) return yield* Effect.die(books)
    if (capture.pending_call?.key !== key) {
      // Recorded already: the books as they stand, this capture included.
      const now = booksOf(order, txns, "capture") as Books
      const as = capture.status === "failed" ? "failed" : capture.status === "completed" ? shownAs(now.book.status) : "settling"
      return { snapshot: snapshot(order, capture, { as, captured: now.book.captured }), release: undefined }
    }
    return yield* recordCaptureOn(order, books, capture, answer)
  })), ({ release, snapshot }) => Effect.as(sendRelease(release), snapshot))

/**
 * The record on rows the caller holds as they stand in its unit of work: loaded under the order's
 * lock (`recordCapture`), or read under it by the reserve of this very unit of work, which still
 * holds that lock (a capture whose provider answers in it): no re-read could tell anything new.
 * With the release its failure reserved, for the caller to send once its unit of work committed.
 */
const recordCaptureOn = (order: Order, books: Books, capture: Transaction, answer: CaptureResult | "unavailable") =>
  Effect.gen(function*() {
    const at = yield* nowIso
    if (answer === "unavailable" || answer._tag === "Refused") {
      const failed = yield* refusedCall(capture, answer, at)
      yield* saveTxn(failed)
      const ended = yield* endCapture(order, books, failed, at)
      return { snapshot: snapshot(ended.order, failed, { as: "failed", captured: ended.captured }), release: ended.release }
    }
    if (answer._tag === "Settling") {
      const settling = revise(capture, { provider_transaction_id: answer.provider_transaction_id, pending_call: null }, at)
      yield* saveTxn(settling)
      return { snapshot: snapshot(order, settling, { as: "settling", captured: books.book.captured }), release: undefined }
    }
    const settled = yield* decided(Txn.transition(capture, "succeeded", at, {
      provider_transaction_id: answer.provider_transaction_id,
      pending_call: null
    }))
    yield* saveTxn(settled.next)
    const ended = yield* endCapture(order, books, settled.next, at)
    return { snapshot: snapshot(ended.order, settled.next, { as: shownAs(ended.status), captured: ended.captured }), release: ended.release }
  })

interface Reserved {
  readonly order: Order
  readonly books: Books
  readonly capture: Transaction
  /** Captures before this one that did not fail: the provider's multicapture check. */
  readonly previous: number
  readonly provider: PaymentProvider["Service"]
}

/** Call → record of a reserved capture, the record made by `recordAnswer`. */
const callCapture = <E, R>(
  reserved: Reserved,
  final: boolean,
  recordAnswer: (answer: CaptureResult | "unavailable") => Effect.Effect<PaymentSnapshot, E, R>
) =>
  callAndRecord("capture", "capture", reserved.provider.captureCard({
    reference: reserved.capture.id,
    idempotency_key: reserved.capture.pending_call!.key,
    authorization: reserved.books.auth.provider_transaction_id ?? "",
    amount: reserved.capture.amount,
    currency: reserved.capture.currency,
    final,
    previousCaptures: reserved.previous
  }), recordAnswer, "The card service is unreachable; the capture was recorded as failed and the authorization stands")

export const capture = (orderId: string, amountText: string | undefined, final: boolean, channelId?: string) =>
  guarded(orderId, Effect.gen(function*() {
    const step = yield* unitOfWork(Effect.gen(function*() {
      const order = yield* lockOrder(orderId)
      const transactions = yield* TransactionRepo
      const books = booksOf(order, yield* transactions.listByOrder(order.id), "capture")
      if (books instanceof Error) return yield* Effect.fail(books)
      yield* refuseOtherChannel(channelId, books.auth)
      const requested = parseCaptureAmount(amountText, order.currency)
      if (requested instanceof Error) return yield* Effect.fail(requested)
      const plan = Authorization.planCapture(books.book, requested)
      if (plan instanceof Error) return yield* Effect.fail(plan)
      const born = yield* newTransaction(order, "capture", plan.amount, {
        ...sameProvider(books.auth),
        parent_transaction_id: books.auth.id,
        final,
        payment_instrument: books.auth.payment_instrument
      })
      const txn = yield* reserve(born, "capture", idempotencyKey(born, "capture"), yield* nowIso)
      yield* transactions.insert(txn)
      const reserved: Reserved = {
        order,
        books,
        capture: txn,
        previous: books.captures.filter((c) => c.status !== "failed").length,
        provider: yield* providerOf(txn)
      }
      // A provider that answers in this unit of work is called in it, under the order's row lock
      // taken above: reserve, call and record commit together or not at all (ProviderStep.joined).
      if (!answersInUnitOfWork(reserved.provider)) return { reserved, done: undefined }
      // Its books are those of an authorization that took it: its failure owes no release.
      const recordAnswer = (answer: CaptureResult | "unavailable") => Effect.map(recordCaptureOn(order, books, txn, answer), (recorded) => recorded.snapshot)
      return { reserved, done: yield* joined(callCapture(reserved, final, recordAnswer)) }
    }))
    if (step.done !== undefined) return yield* raise(step.done)
    const { reserved } = step
    return yield* callCapture(reserved, final, (answer) => recordCapture(orderId, reserved.capture.id, answer, reserved.capture.pending_call!.key))
  }))

/** Settles one capture the provider accepted for later, when the provider says it settled (or failed it). */
export const settleSettlingCapture = (capture: Transaction) =>
  whenSettled(capture, (order, current, at, outcome) =>
    Effect.gen(function*() {
      const txns = yield* (yield* TransactionRepo).listByOrder(order.id)
      const books = booksOf(order, txns.filter((t) => t.id !== current.id), "settle")
      if (books instanceof Error) return false
      // Accepted, then failed: as a refused capture, nothing moved.
      const ended = outcome === "failed"
        ? yield* refusedCall(current, { decline_code: "capture_failed" }, at)
        : (yield* decided(Txn.transition(current, "succeeded", at))).next
      yield* saveTxn(ended)
      const { release } = yield* endCapture(order, books, ended, at)
      return { afterCommit: sendRelease(release) }
    }))
