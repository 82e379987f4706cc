/**
 * Operation: void a manual-capture authorization (POST /v1/payments/void, `tender payments void`):
 * release what remains. Reserve → call → record. A successful void transaction ends `canceled`
 * (spec, Transaction: "canceled — Void released the hold").
 *
 * Releases: what a capture in flight held when the void was asked, and then failed to capture, is
 * released too, by a void Tender makes itself (AuthorizationStatus.closingStep), reserved in the
 * unit of work that records the failure and called once it committed (`sendRelease`), the same
 * provider step as any call: an answer in doubt is left to reconciliation, and one never received
 * is sent again (`voidNotApplied`).
 */
import { Clock, Effect } from "effect"
import * as Authorization from "../Authorization.ts"
import type { Order, Transaction } from "../Payment.ts"
import { TransactionRepo } from "../PaymentPorts.ts"
import { type VoidResult } from "../ProviderPorts.ts"
import { askAgainAt, isoOf, nowIso } from "../../kernel/Time.ts"
import * as Txn from "../Transaction.ts"
import { type Books, booksOf, shownAs } from "./Books.ts"
import { applyEnd, lastSettled, type ReservedRelease, voidReleasesRemainder } from "./Closing.ts"
import { guarded, lockOrder } from "./Load.ts"
import { newTransaction } from "./NewTransaction.ts"
import { decided, saveTxn, unitOfWork } from "./Persist.ts"
import { snapshot } from "./Snapshot.ts"
import { callAndRecord, idempotencyKey, refusedCall, reserve } from "./ProviderStep.ts"
import { providerOf, refuseOtherChannel, sameProvider } from "./Route.ts"

/** What a void's answer shows as `voided_amount`: once closed, all that voids released; while closing, what this one did. */
const shownVoided = (books: Books, voidTxn: Transaction) => (books.book.status === "closing" ? voidTxn.amount : books.book.voided)

/**
 * The merchant's void recorded. With captures still in flight, or one that was in flight when it
 * was asked failed since, the authorization is left `closing` (the payment shows `settling`):
 * their own ends, and the release, close it.
 */
const recordMerchantVoid = (order: Order, books: Books, voidTxn: Transaction, answer: VoidResult | "unavailable", at: string) =>
  Effect.gen(function*() {
    const captured = books.book.captured
    if (answer === "unavailable" || answer._tag === "Refused") {
      const failed = yield* refusedCall(voidTxn, answer, at)
      yield* saveTxn(failed)
      return { snapshot: snapshot(order, failed, { as: "failed" }), release: undefined }
    }
    const done = yield* decided(Txn.transition(voidTxn, "canceled", at, {
      provider_transaction_id: answer.provider_transaction_id,
      pending_call: null
    }))
    yield* saveTxn(done.next)
    const rows = Authorization.voidWentThrough(books.book, voidTxn.amount, yield* voidReleasesRemainder(books))
    const last = lastSettled(books.captures)
    const ended = yield* applyEnd(order, books, rows, at, {
      ...(captured > 0 ? { capture: { captured, capture: last } } : {}),
      voided: voidTxn.amount
    }, { captured, voided: voidTxn.amount, voidedBy: done.next, lastSettled: last })
    // Closed at once, it released all the rest: a release then is one its void covered already.
    const voided = voidTxn.amount + (ended.status === "closing" ? 0 : rows.release?.amount ?? 0)
    const amounts = { voided, ...(captured > 0 ? { captured } : {}) }
    return { snapshot: snapshot(ended.order, done.next, { ...amounts, as: shownAs(ended.status) }), release: ended.release }
  })

/**
 * A release recorded: released, or refused (nothing more is asked for it: the provider holds nothing
 * it would let go of, and what it may still hold lapses with the authorization at the issuer).
 * `unavailable` records nothing: the call stays reserved, and reconciliation sends it again.
 */
const recordReleaseAnswer = (order: Order, books: Books, release: Transaction, answer: VoidResult | "unavailable", at: string) =>
  Effect.gen(function*() {
    if (answer === "unavailable") return { snapshot: snapshot(order, release, { as: "settling" }), release: undefined }
    const released = answer._tag === "Voided"
    const ended = released
      ? (yield* decided(Txn.transition(release, "canceled", at, { provider_transaction_id: answer.provider_transaction_id, pending_call: null }))).next
      : yield* refusedCall(release, answer, at)
    yield* saveTxn(ended)
    const rows = Authorization.releaseEnded(books.book, release.amount, released, yield* voidReleasesRemainder(books))
    const voided = books.book.voided + (released ? release.amount : 0)
    const done = yield* applyEnd(order, books, rows, at, {}, {
      captured: books.book.captured,
      voided,
      voidedBy: books.voided,
      lastSettled: lastSettled(books.captures)
    })
    return { snapshot: snapshot(done.order, ended, { as: shownAs(done.status), voided }), release: done.release }
  })

/** The record step of a void (the merchant's, or a release) in its own unit of work; a no-op answering the current state when `key` was recorded already. */
const recordVoidStep = (orderId: string, voidId: string, answer: VoidResult | "unavailable", key: string) =>
  unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(orderId)
    const txns = yield* (yield* TransactionRepo).listByOrder(order.id)
    const voidTxn = txns.find((t) => t.id === voidId)!
    const books = booksOf(order, txns.filter((t) => t.id !== voidId), "void")
    if (books instanceof Error) return yield* Effect.die(books)
    if (voidTxn.pending_call?.key !== key) {
      // Recorded already: the payment as it stands, this void included.
      const now = booksOf(order, txns, "void") as Books
      const captured = now.book.captured
      const shown = voidTxn.status === "canceled"
        ? { voided: shownVoided(now, voidTxn), ...(captured > 0 ? { captured } : {}), as: shownAs(now.book.status) }
        : { as: voidTxn.status === "failed" ? "failed" as const : "settling" as const }
      return { snapshot: snapshot(order, voidTxn, shown), release: undefined }
    }
    const at = yield* nowIso
    return voidTxn.parent_transaction_id === books.auth.id
      ? yield* recordMerchantVoid(order, books, voidTxn, answer, at)
      : yield* recordReleaseAnswer(order, books, voidTxn, answer, at)
  }))

/**
 * Call → record of a release reserved in a unit of work that committed. Nothing of it reaches the
 * caller, whose own step is recorded already: an answer in doubt, or a provider unreachable, leaves
 * the call reserved for reconciliation. A release's record never owes another (what it releases
 * was owed already); were one reserved, reconciliation would send it.
 */
export const sendRelease = (release: ReservedRelease | undefined) =>
  release === undefined ? Effect.void : Effect.gen(function*() {
    const { txn, authorization } = release
    const key = txn.pending_call!.key
    const provider = yield* providerOf(txn)
    yield* callAndRecord("release", "release", provider.voidCard({
      reference: txn.id,
      idempotency_key: key,
      authorization,
      amount: txn.amount
    }), (answer) => Effect.map(recordVoidStep(txn.order_id, txn.id, answer, key), (recorded) => recorded.snapshot), "The card service is unreachable; the release is sent again by reconciliation").pipe(
      Effect.catch((error) => Effect.logWarning(`release ${txn.id} of order ${txn.order_id} not recorded yet: ${error.message}`))
    )
  })

/** The record step of a void, then the release it reserved (when a capture failed while it was at the provider) sent. */
export const recordVoid = (orderId: string, voidId: string, answer: VoidResult | "unavailable", key: string) =>
  Effect.flatMap(recordVoidStep(orderId, voidId, answer, key), ({ release, snapshot }) => Effect.as(sendRelease(release), snapshot))

/**
 * Reconciliation learned that a void's call was never applied: the provider never received it
 * (the lookup fenced its key), or cannot tell and the call is past the horizon (`giveUp`). The
 * merchant's void fails (`provider_unavailable`): the authorization stands, and the merchant may void
 * again. A release is owed whatever happens: it is sent again under a new key, backing off, until
 * `giveUp`; then it is recorded failed (`provider_unavailable`) and the authorization closes without it.
 */
export const voidNotApplied = (voidTxn: Transaction, key: string, giveUp: boolean) =>
  Effect.gen(function*() {
    const step = yield* unitOfWork(Effect.gen(function*() {
      const order = yield* lockOrder(voidTxn.order_id)
      const txns = yield* (yield* TransactionRepo).listByOrder(order.id)
      const current = txns.find((t) => t.id === voidTxn.id)!
      const books = booksOf(order, txns.filter((t) => t.id !== current.id), "void")
      if (books instanceof Error) return yield* Effect.die(books)
      if (current.pending_call?.key !== key) return "recorded" as const
      if (current.parent_transaction_id === books.auth.id) return "merchant" as const
      if (giveUp) return "given_up" as const
      // Due again as reconciliation's put-offs are (half the release's age, 1 s to 10 min): each
      // round fences a key at the provider, so a release nobody answers is not sent every round for a day.
      const now = yield* Clock.currentTimeMillis
      const again = yield* reserve(current, "void", idempotencyKey(current, "void", current.version), isoOf(now), {
        retryAt: isoOf(askAgainAt(now, Date.parse(current.created_at)))
      })
      yield* saveTxn(again)
      return { txn: again, authorization: books.auth.provider_transaction_id ?? "" } satisfies ReservedRelease
    }))
    switch (step) {
      case "recorded":
        return
      case "merchant":
        return yield* recordVoid(voidTxn.order_id, voidTxn.id, "unavailable", key)
      case "given_up":
        // As a refusal: the provider's last word on it, so the authorization closes without it.
        return yield* recordVoid(voidTxn.order_id, voidTxn.id, { _tag: "Refused", decline_code: "provider_unavailable" }, key)
      default:
        return yield* sendRelease(step)
    }
  })

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
