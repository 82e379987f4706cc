/**
 * One provider step, the same for every call: reserve (the intent and its idempotency key are
 * committed on the transaction, `pending_call`) → call the provider outside any unit of work →
 * record. An `Unknown` answer is never guessed: the transaction stays in flight with its pending
 * call, and reconciliation (Reconcile.ts) asks the provider by the same key.
 */
import { Effect, type Result } from "effect"
import { CardPaymentInProgress, DownstreamError, ProviderUnavailable } from "../../kernel/Errors.ts"
import { Faults } from "../../kernel/Faults.ts"
import type { PendingCall, Transaction } from "../Payment.ts"
import { type AuthorizeResult, PaymentProvider, ProviderRecordsInUnitOfWork, type StartResult, type Unknown } from "../ProviderPorts.ts"
import { type Decided, revise } from "../../kernel/StateMachine.ts"
import * as Txn from "../Transaction.ts"
import { decided } from "./Persist.ts"
import type { AttemptOutcome } from "./RecordAttempt.ts"

export type Operation = PendingCall["operation"]

/**
 * How long Tender waits for a provider's answer. Shorter than reconciliation's grace (60 s by
 * default), so reconciliation never asks about a call its caller still waits on.
 */
export const PROVIDER_CALL_TIMEOUT_MS = 30_000

/** Past `ms`, a call may or may not have been applied: in doubt (`Unknown`), never guessed. */
export const inDoubtAfter = (ms: number) =>
  Effect.timeoutOrElse({ duration: ms, orElse: () => Effect.succeed<Unknown>({ _tag: "Unknown", reason: "timeout" }) })

/**
 * Step names of the crash tests: `<op>.after_reserve`; `<op>.before_record`, once the provider
 * answered (it may have paid) and before Tender recorded it; `<op>.after_record`. `settle` is the
 * settlement worker's step (Settlement.ts): the provider said a pending one settled, not recorded yet.
 * `<op>.retry_reserved` (create, client_pay): a smart retry's unit committed (the first try failed,
 * the second reserved on the next channel), its call not sent yet.
 */
export type StepName =
  | "create"
  | "attempt"
  | "capture"
  | "void"
  /** A void Tender makes itself: what a capture that failed after the merchant's void held (Void.ts). */
  | "release"
  | "complete3ds"
  | "simulate"
  | "client_pay"
  | "refund"
  | "payout"
  | "transfer"
  | "transfer_execute"
  | "settle"

export const checkpoint = (step: StepName, boundary: "after_reserve" | "before_record" | "after_record" | "retry_reserved") =>
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

/**
 * Pure: the transaction with its call reserved; an attempt not yet sent moves to processing.
 * `merchantInitiated` rides along so that reconciliation records a lost answer as the caller would
 * have (payment.requires_action never fires for merchant-initiated charges). `retryAt`: when
 * reconciliation may first ask about it, for a call sent again by reconciliation itself (Void.voidNotApplied).
 */
export const reserve = (
  txn: Transaction,
  operation: Operation,
  key: string,
  at: string,
  options: { readonly merchantInitiated?: boolean; readonly retryAt?: string } = {}
): Effect.Effect<Decided<Transaction>> => {
  const pending_call: PendingCall = {
    key,
    operation,
    at,
    ...(options.merchantInitiated === true ? { merchant_initiated: true } : {}),
    ...(options.retryAt !== undefined ? { retry_at: options.retryAt } : {})
  }
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

/** A capture or void the provider refused, or could not be reached for: the transaction fails. */
export const refusedCall = (txn: Transaction, answer: { readonly decline_code: string } | "unavailable", at: string) =>
  Effect.map(decided(Txn.transition(txn, "declined", at, {
    decline_code: answer === "unavailable" ? "provider_unavailable" : answer.decline_code,
    pending_call: null
  })), (m) => m.next)

/**
 * A refund, payout or transfer the provider accepted to pay later: the call is answered, so the
 * transaction waits `pending` (no longer processing) with the provider's id, for the settlement worker.
 */
export const queuedCall = (txn: Transaction, providerTransactionId: string, at: string) =>
  Effect.map(decided(Txn.transition(txn, "queued", at, { provider_transaction_id: providerTransactionId, pending_call: null })), (m) => m.next)

export const unreachable: AttemptOutcome = { _tag: "Declined", decline_code: "provider_unavailable", provider_transaction_id: null }

/** Why a call in doubt is answered "in progress" (money back out's own codes say it with this). */
export const ANSWER_LOST =
  "the provider's answer was lost; it stays pending until reconciliation learns the outcome (read it again, or wait for its webhook)"

export const inDoubt = (what: string) =>
  new CardPaymentInProgress({
    message: `The provider's answer to this ${what} was lost; it stays in flight until reconciliation learns the outcome from the provider (read the payment, or wait for its webhook)`
  })

/** How much of a provider's report a message relays (its own words can be long, or odd). */
const MAX_REPORT = 300

/**
 * The provider answered an error that does not say whether the call was applied (spec:
 * `downstream_error` 502, "message relays its report"); the call stays in flight as `inDoubt`'s.
 */
export const downstream = (what: string, report: string) =>
  new DownstreamError({
    message: `The payment provider failed: ${JSON.stringify(report.replace(/\p{Cc}/gu, " ").slice(0, MAX_REPORT))}. ` +
      `The ${what} stays in flight until reconciliation learns the outcome from the provider (read it again, or wait for its webhook)`
  })

/**
 * Call → record, after the reserve: the crash points around it (after the reserve, between the
 * provider's answer and its record, after the record), a definitely-unreachable provider recorded
 * (then 502 `provider_unavailable`), an unknown answer left in flight for reconciliation (409
 * `card_payment_in_progress`; 502 `downstream_error` relaying the provider's report when it
 * answered an error).
 */
export const callAndRecord = <A extends { readonly _tag: string }, B, E, R, RC = never>(
  step: StepName,
  what: string,
  call: Effect.Effect<A | Unknown, ProviderUnavailable, RC>,
  recordAnswer: (answer: A | "unavailable") => Effect.Effect<B, E, R>,
  unreachableMessage: string,
  /** How long the whole call may take: one provider call's time per provider it may try. */
  timeoutMs: number = PROVIDER_CALL_TIMEOUT_MS
) =>
  Effect.gen(function*() {
    yield* checkpoint(step, "after_reserve")
    // The call alone may be cut short (the step around it is uninterruptible): past the timeout it
    // may or may not have been applied, so it is in doubt, never guessed.
    const answer = yield* Effect.interruptible(call).pipe(
      inDoubtAfter(timeoutMs),
      Effect.catchTag("ProviderUnavailable", () => Effect.succeed("unavailable" as const))
    )
    if (answer !== "unavailable" && answer._tag === "Unknown") {
      const { report } = answer as Unknown
      return yield* (report === undefined ? inDoubt(what) : downstream(what, report))
    }
    yield* checkpoint(step, "before_record")
    const recorded = yield* recordAnswer(answer as A | "unavailable")
    yield* checkpoint(step, "after_record")
    if (answer === "unavailable") return yield* new ProviderUnavailable({ message: unreachableMessage })
    return recorded
  })

type Provider = PaymentProvider["Service"]

/**
 * Whether the call reserved now can be made, and its answer recorded, in the reserving unit of
 * work: the provider answers in it (PaymentProvider.answersInUnitOfWork) and nothing would move
 * the call to another provider (no fallbacks: a move commits on its own, RunAttempt.ts).
 */
export const answersInUnitOfWork = (provider: Provider, fallbacks: ReadonlyArray<Provider> = []) =>
  provider.answersInUnitOfWork === true && fallbacks.length === 0

/**
 * Call → record inside the unit of work that reserved the call, for a provider that answers in it:
 * its records join that transaction (ProviderRecordsInUnitOfWork), and the step's outcome — a
 * failure included — comes back as a value, so that the unit of work commits what the step left
 * (an answer in doubt: the reserve, for reconciliation; an unreachable provider: its record).
 * `raise` turns it back into the failure once committed. A defect rolls back everything, the
 * provider's records with ours: then nothing was reserved, applied or recorded.
 */
export const joined = <A, E, R>(step: Effect.Effect<A, E, R>): Effect.Effect<Result.Result<A, E>, never, R> =>
  Effect.result(Effect.provideService(step, ProviderRecordsInUnitOfWork, true))

export const raise = <A, E>(outcome: Result.Result<A, E>): Effect.Effect<A, E> => Effect.fromResult(outcome)
