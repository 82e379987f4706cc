/**
 * Reconciliation: provider calls whose answer never got recorded (the process died, the answer was
 * lost) are asked about by their idempotency key, and the answer goes through the same record step
 * the call would have taken. A key the provider never received is fenced by the lookup, so the
 * call can no longer land later: the attempt fails with `provider_unavailable`, as a refused call
 * would have. Past the horizon, an unanswerable call fails the same way.
 */
import { Clock, Effect, Option } from "effect"
import type { Transaction } from "../Payment.ts"
import { type LookupResult, PaymentProvider, TransactionRepo } from "../PaymentPorts.ts"
import { isoOf } from "../Time.ts"
import { recordCapture } from "./Capture.ts"
import { guarded } from "./Kit.ts"
import { attemptOutcome, unreachable } from "./ProviderStep.ts"
import { record } from "./RecordAttempt.ts"
import { recordVoid } from "./Void.ts"

export interface ReconcileOptions {
  /** Calls younger than this are left to their caller (default 60 s). */
  readonly graceMs: number
  /** Past this, a call the provider cannot answer about fails (default 24 h). */
  readonly horizonMs: number
}

export const DEFAULT_RECONCILE: ReconcileOptions = { graceMs: 60_000, horizonMs: 24 * 60 * 60 * 1000 }

/** Applies what the provider said about one pending call. */
const apply = (txn: Transaction, key: string, answer: LookupResult | "unanswerable") => {
  const notApplied = answer === "unanswerable" || answer._tag === "NotReceived"
  switch (txn.pending_call!.operation) {
    case "capture":
      return recordCapture(txn.order_id, txn.id, notApplied ? "unavailable" : (answer as Extract<LookupResult, { _tag: "Capture" }>).result, key)
    case "void":
      return recordVoid(txn.order_id, txn.id, notApplied ? "unavailable" : (answer as Extract<LookupResult, { _tag: "Void" }>).result, key)
    default: {
      if (notApplied) return record(txn.order_id, txn.id, unreachable, key)
      const result = (answer as Extract<LookupResult, { _tag: "Authorize" | "Start" }>).result
      const outcome = attemptOutcome(result, txn.pending_call!.merchant_initiated === true)
      return outcome._tag === "Unknown" ? Effect.void : record(txn.order_id, txn.id, outcome, key)
    }
  }
}

const reconcileOne = (candidate: Transaction, now: number, options: ReconcileOptions) =>
  guarded(candidate.order_id, Effect.gen(function*() {
    const txn = Option.getOrUndefined(yield* (yield* TransactionRepo).findAny(candidate.id))
    const call = txn?.pending_call
    if (txn === undefined || call == null) return false
    const provider = yield* PaymentProvider
    const answer = yield* provider.lookup(call.key).pipe(
      Effect.map((a): LookupResult | "unanswerable" | "later" => a),
      Effect.catchTag("ProviderUnavailable", () =>
        Effect.succeed(now - Date.parse(call.at) >= options.horizonMs ? "unanswerable" as const : "later" as const))
    )
    if (answer === "later") return false
    yield* apply(txn, call.key, answer)
    return true
  }))

/** One round of the reconciliation worker; returns how many calls it resolved. */
export const reconcileDue = (options: ReconcileOptions = DEFAULT_RECONCILE) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const due = yield* (yield* TransactionRepo).listPendingCalls(isoOf(now - options.graceMs), 50)
    let resolved = 0
    for (const txn of due) {
      const done = yield* reconcileOne(txn, now, options).pipe(
        Effect.catchCause((cause) => Effect.as(Effect.logWarning(`reconciliation of ${txn.id} failed`, cause), false))
      )
      if (done) resolved++
    }
    return resolved
  })
