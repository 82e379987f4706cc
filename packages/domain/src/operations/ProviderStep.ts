/**
 * One provider step, the same for every call: reserve (the intent and its idempotency key are
 * committed on the transaction, `pending_call`) → call the provider outside any unit of work →
 * record. An `Unknown` answer is never guessed: the transaction stays in flight with its pending
 * call, and reconciliation (Reconcile.ts) asks the provider by the same key.
 */
import { Effect } from "effect"
import { CardPaymentInProgress, ProviderUnavailable } from "../Errors.ts"
import { Faults } from "../Faults.ts"
import type { PendingCall, Transaction } from "../Payment.ts"
import type { AuthorizeResult, StartResult, Unknown } from "../PaymentPorts.ts"
import { revise } from "../StateMachine.ts"
import * as Txn from "../TransactionStatus.ts"
import { decided } from "./Kit.ts"
import { type AttemptOutcome, record } from "./RecordAttempt.ts"

export type Operation = PendingCall["operation"]

/** Step names of the crash tests: `<op>.after_reserve`, `<op>.after_record`. */
export type StepName = "create" | "attempt" | "capture" | "void" | "complete3ds"

export const checkpoint = (step: StepName, boundary: "after_reserve" | "after_record") =>
  Effect.gen(function*() {
    const faults = yield* Faults
    yield* faults.at(`${step}.${boundary}`)
  })

/**
 * The idempotency key of a call: our transaction id, suffixed when one transaction makes a second
 * call of the same operation (the authorization after a 3-D Secure challenge).
 */
export const idempotencyKey = (txn: Transaction, operation: Operation, round = 1) =>
  `${txn.id}:${operation}${round > 1 ? `:${round}` : ""}`

/** Pure: the transaction with its call reserved; an attempt not yet sent moves to processing. */
export const reserve = (txn: Transaction, operation: Operation, key: string, at: string): Effect.Effect<Transaction> => {
  const pending_call: PendingCall = { key, operation, at }
  return txn.status === "initial"
    ? Effect.map(decided(Txn.transition(txn, "sent", at, { pending_call })), (m) => m.next)
    : Effect.succeed(revise(txn, { pending_call }, at))
}

/** What an authorization or a start answered, as an attempt outcome; `Unknown` stays unknown. */
export const attemptOutcome = (
  answer: AuthorizeResult | StartResult | Unknown,
  merchantInitiated: boolean
): AttemptOutcome | Unknown => {
  switch (answer._tag) {
    case "Approved":
      return { _tag: "Approved", provider_transaction_id: answer.provider_transaction_id, multicapture: answer.multicapture }
    case "Declined":
      return { _tag: "Declined", decline_code: answer.decline_code, provider_transaction_id: answer.provider_transaction_id }
    case "ChallengeRequired":
      return { _tag: "Challenge", provider_transaction_id: answer.provider_transaction_id, challenge_url: answer.challenge_url, merchantInitiated }
    case "Started":
      return { _tag: "AwaitsCustomer", next_action: answer.next_action, provider_transaction_id: answer.provider_transaction_id }
    case "Unknown":
      return answer
  }
}

export const unreachable: AttemptOutcome = { _tag: "Declined", decline_code: "provider_unavailable", provider_transaction_id: null }

export const inDoubt = (what: string) =>
  new CardPaymentInProgress({
    message: `The provider's answer to this ${what} was lost; it stays in flight until reconciliation learns the outcome from the provider (read the payment, or wait for its webhook)`
  })

/**
 * Call → record for an attempt whose call is reserved (`txn.pending_call`). A definitely-unreachable
 * provider is recorded as a decline (`provider_unavailable`) and answers 502; an unknown answer
 * leaves the attempt in flight and answers 409 `card_payment_in_progress`.
 */
export const runAttempt = (
  step: StepName,
  txn: Transaction,
  call: Effect.Effect<AuthorizeResult | StartResult | Unknown, ProviderUnavailable>,
  merchantInitiated: boolean
) =>
  Effect.gen(function*() {
    const key = txn.pending_call!.key
    yield* checkpoint(step, "after_reserve")
    const answer = yield* call.pipe(Effect.map((a) => attemptOutcome(a, merchantInitiated)), Effect.catchTag("ProviderUnavailable", () => Effect.succeed(unreachable)))
    if (answer._tag === "Unknown") return yield* inDoubt("payment")
    const recorded = yield* record(txn.order_id, txn.id, answer, key)
    yield* checkpoint(step, "after_record")
    if (answer === unreachable) {
      return yield* new ProviderUnavailable({ message: "The payment provider is unreachable; the attempt was recorded as failed" })
    }
    return recorded
  })

export const isUnknown = <A extends { readonly _tag: string }>(a: A | Unknown): a is Unknown => a._tag === "Unknown"
