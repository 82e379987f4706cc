/**
 * Reconciliation: provider calls whose answer never got recorded (the process died, the answer was
 * lost) are asked about by their idempotency key, and the answer goes through the same record step
 * the call would have taken. A key the provider never received is fenced by the lookup, so the
 * call can no longer land later: the attempt fails with `provider_unavailable`, as a refused call
 * would have. Past the horizon, an unanswerable call fails the same way.
 */
import { Clock, Effect, Option } from "effect"
import type { Transaction } from "../Payment.ts"
import { TransactionRepo } from "../PaymentPorts.ts"
import { type LookupResult } from "../ProviderPorts.ts"
import { askAgainAt, isoOf } from "../../kernel/Time.ts"
import { recordCapture } from "./Capture.ts"
import { guarded, loadTxn, lockOrder } from "./Load.ts"
import { saveTxn, unitOfWork } from "./Persist.ts"
import { recordPayout, recordRefund } from "../../money-out/operations/Outflow.ts"
import { revise } from "../../kernel/StateMachine.ts"
import { attemptOutcome, unreachable } from "./ProviderStep.ts"
import { type AttemptOutcome, record } from "./RecordAttempt.ts"
import { recordTransfer } from "../../money-out/operations/RecordTransfer.ts"
import { recordVoid, voidNotApplied } from "./Void.ts"
import { providerOf } from "./Route.ts"

/** How reconciliation picks provider calls whose answer was lost: how old, and how far back. */
export interface ReconcileOptions {
  /** Calls younger than this are left to their caller (default 60 s). */
  readonly graceMs: number
  /** Past this, a call the provider cannot answer about fails (default 24 h). */
  readonly horizonMs: number
}

export const DEFAULT_RECONCILE: ReconcileOptions = { graceMs: 60_000, horizonMs: 24 * 60 * 60 * 1000 }

/** A lookup answering another operation than the call's is the provider adapter's bug. */
const mismatched = (txn: Transaction, answer: LookupResult) =>
  Effect.die(new Error(`The provider answered a ${answer._tag} lookup for the ${txn.pending_call!.operation} call of ${txn.id}`))

/**
 * Applies what the provider said about one pending call, through the call's own record step
 * (reconciliation's lookups, and provider notifications: Notify.ts). `pastHorizon`: the transaction
 * is older than reconciliation's horizon (a release never received is no longer sent again).
 */
export const apply = (txn: Transaction, key: string, answer: LookupResult | "unanswerable", pastHorizon = false) =>
  Effect.gen(function*() {
    const notApplied = answer === "unanswerable" || answer._tag === "NotReceived"
    switch (txn.pending_call!.operation) {
      case "capture":
        if (notApplied) return yield* recordCapture(txn.order_id, txn.id, "unavailable", key)
        return answer._tag === "Capture" ? yield* recordCapture(txn.order_id, txn.id, answer.result, key) : yield* mismatched(txn, answer)
      case "void":
        // A release Tender owes is sent again rather than failed (Void.voidNotApplied).
        if (notApplied) return yield* voidNotApplied(txn, key, answer === "unanswerable" || pastHorizon)
        return answer._tag === "Void" ? yield* recordVoid(txn.order_id, txn.id, answer.result, key) : yield* mismatched(txn, answer)
      case "refund":
        if (notApplied) return yield* recordRefund(txn.order_id, txn.id, "unavailable", key)
        return answer._tag === "Refund" ? yield* recordRefund(txn.order_id, txn.id, answer.result, key) : yield* mismatched(txn, answer)
      case "payout": {
        // A transfer's provider call is a payout on its kind "transfer" transaction.
        const recordIt = txn.kind === "transfer" ? recordTransfer : recordPayout
        if (notApplied) return yield* recordIt(txn.order_id, txn.id, "unavailable", key)
        return answer._tag === "Payout" ? yield* recordIt(txn.order_id, txn.id, answer.result, key) : yield* mismatched(txn, answer)
      }
      default: {
        if (notApplied) return yield* record(txn.order_id, txn.id, unreachable, key)
        if (answer._tag !== "Authorize" && answer._tag !== "Start") return yield* mismatched(txn, answer)
        const outcome = attemptOutcome(answer.result, txn.pending_call!.merchant_initiated === true) as AttemptOutcome
        return yield* record(txn.order_id, txn.id, outcome, key)
      }
    }
  })

const reconcileOne = (candidate: Transaction, now: number, options: ReconcileOptions) =>
  guarded(candidate.order_id, Effect.gen(function*() {
    const txn = Option.getOrUndefined(yield* (yield* TransactionRepo).findAny(candidate.id))
    const call = txn?.pending_call
    if (txn === undefined || call == null) return false
    // Asked where the call went: after a cascade, the channel the transaction moved to.
    const provider = yield* providerOf(txn)
    const answer = yield* provider.lookup(call.key).pipe(
      Effect.map((a): LookupResult | "unanswerable" | "later" => a),
      Effect.catchTag("ProviderUnavailable", () =>
        Effect.succeed(now - Date.parse(call.at) >= options.horizonMs ? "unanswerable" as const : "later" as const))
    )
    if (answer === "later") {
      yield* askLater(txn, now, Date.parse(call.at) + options.horizonMs)
      return false
    }
    yield* apply(txn, call.key, answer, now - Date.parse(txn.created_at) >= options.horizonMs)
    return true
  }))

/**
 * A call reconciliation could not settle this round is asked about again later, the longer the
 * older it is (Time.askAgainAt: half its age, 1 s to 10 min), persisted on its pending call
 * (`retry_at`), so that calls stuck in an outage, or whose record keeps failing, do not starve newer
 * ones nor hammer the provider every round. A lookup the provider cannot answer is retried no later
 * than the call's horizon (then it fails: `until`).
 */
const askLater = (candidate: Transaction, now: number, until?: number) =>
  unitOfWork(Effect.gen(function*() {
    yield* lockOrder(candidate.order_id)
    const txn = yield* loadTxn(candidate.id)
    const call = txn.pending_call
    if (call === null || call.key !== candidate.pending_call?.key) return
    yield* saveTxn(revise(txn, { pending_call: { ...call, retry_at: isoOf(askAgainAt(now, Date.parse(call.at), until)) } }, isoOf(now)))
  }))

/**
 * One round of the reconciliation worker; returns how many calls it resolved. A call whose round
 * failed (the lookup, or the record step of whatever kind: attempt, capture, void, refund, payout,
 * transfer) backs off like one the provider could not answer.
 */
export const reconcileDue = (options: ReconcileOptions = DEFAULT_RECONCILE) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const due = yield* (yield* TransactionRepo).listPendingCalls(isoOf(now - options.graceMs), 50)
    let resolved = 0
    for (const txn of due) {
      const done = yield* reconcileOne(txn, now, options).pipe(
        Effect.catchCause((cause) =>
          Effect.logWarning(`reconciliation of ${txn.id} failed; asked again later`, cause).pipe(
            Effect.andThen(askLater(txn, now)),
            Effect.catchCause((again) => Effect.logWarning(`reconciliation of ${txn.id} could not be put off`, again)),
            Effect.as(false)
          ))
      )
      if (done) resolved++
    }
    return resolved
  })
