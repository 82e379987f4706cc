/**
 * One provider step, the same for every call: reserve (the intent and its idempotency key are
 * committed on the transaction, `pending_call`) → call the provider outside any unit of work →
 * record. An `Unknown` answer is never guessed: the transaction stays in flight with its pending
 * call, and reconciliation (Reconcile.ts) asks the provider by the same key.
 */
import { Clock, Effect, type Result } from "effect"
import { healthOf, isRetryable } from "../../channels/DeclineClasses.ts"
import type { Routing } from "../../channels/RoutingModel.ts"
import { ChannelHealth } from "../../channels/RoutingPorts.ts"
import { CardPaymentInProgress, DownstreamError, ProviderUnavailable } from "../../kernel/Errors.ts"
import { Faults } from "../../kernel/Faults.ts"
import type { Order, PendingCall, Transaction } from "../Payment.ts"
import { type OrderRepo, TransactionRepo } from "../PaymentPorts.ts"
import { type AuthorizeResult, PaymentProvider, ProviderRecordsInUnitOfWork, type StartResult, type Unknown } from "../ProviderPorts.ts"
import type { UnitOfWork } from "../../kernel/Ports.ts"
import { type Decided, revise } from "../../kernel/StateMachine.ts"
import * as Txn from "../Transaction.ts"
import { nowIso } from "../../kernel/Time.ts"
import { loadTxn, lockOrder } from "./Load.ts"
import { decided, saveTxn, unitOfWork } from "./Persist.ts"
import { Fallbacks, providerFields } from "./Route.ts"
import { newTransaction } from "./NewTransaction.ts"
import { type AttemptOutcome, record, recordOn } from "./RecordAttempt.ts"

export type Operation = PendingCall["operation"]

/**
 * How long Tender waits for a provider's answer. Shorter than reconciliation's grace (60 s by
 * default), so reconciliation never asks about a call its caller still waits on.
 */
export const PROVIDER_CALL_TIMEOUT_MS = 30_000

/** Past `ms`, a call may or may not have been applied: in doubt (`Unknown`), never guessed. */
const inDoubtAfter = (ms: number) =>
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
/** An attempt's provider call, for the (reserved) transaction it is made for. */
type AttemptCall = (provider: Provider, txn: Transaction) => Effect.Effect<AuthorizeResult | StartResult | Unknown, ProviderUnavailable>
type AttemptAnswer = Effect.Success<ReturnType<AttemptCall>>

/** Where a routed routing moves when the attempt goes on to `channel`: the next try, reason `retry`. */
const retried = (routing: Routing | null, channel: string | null | undefined): Routing | null =>
  routing === null || channel == null ? null : { ...routing, channel, reason: "retry", attempt: routing.attempt + 1 }

/**
 * The attempt moves to `next` before it is sent there: its reserved call (same key: `next` never
 * saw it) is recorded against `next`'s channel first, so that a crash or a lost answer from here on
 * is reconciled with the provider that may hold the money, never with the one that refused it. Its
 * routing says it is the next try, on `next`'s channel, after a retry.
 */
const moveTo = (txn: Transaction, next: Provider) =>
  unitOfWork(Effect.gen(function*() {
    yield* lockOrder(txn.order_id)
    const current = yield* loadTxn(txn.id)
    const at = yield* nowIso
    yield* saveTxn(revise(current, {
      ...providerFields(next),
      routing: retried(current.routing, next.channel_id),
      pending_call: { ...current.pending_call!, at }
    }, at))
  }))

/**
 * Tells the channels' health what `provider` answered for a routed attempt (issue 27): only
 * channels (not the sandbox), only attempts a route chose (routing recorded), so follow-ups and the
 * sandbox never count. Health is advice: a failure to record it never fails the payment.
 */
const observeHealth = (txn: Transaction, provider: Provider, answer: AttemptAnswer | ProviderUnavailable) =>
  txn.routing === null || provider.channel_id === undefined
    ? Effect.void
    : Effect.gen(function*() {
      const health = yield* ChannelHealth
      yield* health.observe({
        channel_id: provider.channel_id!,
        segment: { method: txn.payment_method, currency: txn.currency, brand: txn.payment_instrument?.card_brand ?? null },
        outcome: healthOf(answer._tag === "ProviderUnavailable" ? { _tag: "ProviderUnavailable" } : answer),
        at: yield* Clock.currentTimeMillis
      })
    }).pipe(Effect.ignoreCause)

/** Which provider answered an attempt, and the route's providers after it (a smart retry's next). */
interface Answered {
  readonly answer: AttemptAnswer
  readonly provider: Provider
  readonly rest: ReadonlyArray<Provider>
}

/**
 * contract.md, Providers: a definitely-unreachable provider (ProviderUnavailable: nothing was
 * applied) cascades to the next channel of the route; an answer in doubt never does (the money may
 * be at the first provider: reconciliation asks it). Every answer is observed for the channel's health.
 */
const cascade = (
  txn: Transaction,
  provider: Provider,
  rest: ReadonlyArray<Provider>,
  call: AttemptCall
): Effect.Effect<Answered, ProviderUnavailable, OrderRepo | TransactionRepo | UnitOfWork | ChannelHealth> =>
  // Each provider gets a call's whole time: a slow refusal by the first never shortens the next's.
  call(provider, txn).pipe(
    inDoubtAfter(PROVIDER_CALL_TIMEOUT_MS),
    Effect.tap((answer) => observeHealth(txn, provider, answer)),
    Effect.map((answer): Answered => ({ answer, provider, rest })),
    Effect.catchTag("ProviderUnavailable", (unavailable) => {
      const [next, ...after] = rest
      const observed = observeHealth(txn, provider, unavailable)
      if (next === undefined) return Effect.andThen(observed, Effect.fail(unavailable))
      return Effect.andThen(
        Effect.andThen(observed, Effect.andThen(Effect.logInfo(`${provider.name} channel ${provider.channel_id ?? "sandbox"} is unreachable for ${txn.id}; cascading to ${next.name} channel ${next.channel_id ?? "sandbox"}`), moveTo(txn, next))),
        cascade(txn, next, after, call)
      )
    })
  )

/**
 * What an attempt records for an answer: an unreachable provider fails it. A create's leaves its
 * order open for the same request again (contract.md, Idempotency); any later step's fails the
 * payment, and so does a smart retry's second try (the payment was declined already: nothing to
 * send again).
 */
const recordedOutcome = (step: StepName, answer: AuthorizeResult | StartResult | "unavailable", merchantInitiated: boolean, secondTry = false): AttemptOutcome =>
  answer !== "unavailable" ? attemptOutcome(answer, merchantInitiated) as AttemptOutcome : step === "create" && !secondTry ? { _tag: "Unreachable" } : unreachable

const unreachableAttempt = (step: StepName, secondTry = false) =>
  step === "create" && !secondTry
    ? "The payment provider is unreachable; nothing was charged. Retry the same request with the same merchant_reference"
    : "The payment provider is unreachable; the attempt was recorded as failed"

/**
 * Smart retry (issue 27, design27.md): whether a first try's answer is retried on the next channel
 * of the route. Only where the caller allows it (a customer-initiated card create or client pay),
 * only a decline with a retryable code (DeclineClasses.RETRYABLE), only on channels, only when the
 * route has a channel after the one that declined.
 */
const retryable = (answered: Answered | undefined, answer: AuthorizeResult | StartResult | "unavailable"): answered is Answered =>
  answered !== undefined && answer !== "unavailable" && answer._tag === "Declined" && isRetryable(answer.decline_code) &&
  answered.provider.channel_id !== undefined && answered.rest[0]?.channel_id !== undefined

/**
 * The smart retry's one unit of work, under the order's lock: the first try recorded failed with
 * its decline code (the order does not move: no event, the payment goes on) and the second
 * transaction inserted on the next channel with its call reserved, routing `retry`. Both calls are
 * reserved transactions, so reconciliation knows each whatever crashes. Undefined when the first
 * try's call was recorded meanwhile (reconciliation raced us: its record stands, no retry).
 */
const reserveRetry = (txn: Transaction, declineCode: string, providerTransactionId: string | null, next: Provider) =>
  unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(txn.order_id)
    const current = yield* loadTxn(txn.id)
    if (current.pending_call === null || current.pending_call.key !== txn.pending_call!.key) return undefined
    const at = yield* nowIso
    const failed = yield* decided(Txn.transition(current, Txn.viaSent(current, "declined"), at, {
      decline_code: declineCode,
      provider_transaction_id: providerTransactionId ?? current.provider_transaction_id,
      next_action: null,
      pending_call: null
    }))
    yield* saveTxn(failed.next)
    const second = yield* newTransaction(order, current.kind, current.amount, {
      ...providerFields(next),
      routing: retried(current.routing, next.channel_id),
      payment_instrument: current.payment_instrument,
      browser_flow: current.browser_flow,
      customer_return_url: current.customer_return_url
    })
    const reserved = yield* reserve(second, "authorize", idempotencyKey(second, "authorize"), at, {
      merchantInitiated: current.pending_call.merchant_initiated === true
    })
    yield* (yield* TransactionRepo).insert(reserved)
    return reserved
  }))

/**
 * Call → record for an attempt whose call is reserved (`txn.pending_call`), on the provider in
 * context and, should it be definitely unreachable, on its fallbacks (Route.ts) in turn; `recordAnswer`
 * is told which provider answered and which were left after it.
 */
const callRoute = <B, E, R>(
  step: StepName,
  txn: Transaction,
  call: AttemptCall,
  unreachableMessage: string,
  recordAnswer: (answered: Answered | undefined, answer: AuthorizeResult | StartResult | "unavailable") => Effect.Effect<B, E, R>
) =>
  Effect.gen(function*() {
    const provider = yield* PaymentProvider
    const fallbacks = yield* Fallbacks
    let answered: Answered | undefined
    const tracked = Effect.map(cascade(txn, provider, fallbacks, call), (a) => {
      answered = a
      return a.answer
    })
    return yield* callAndRecord(step, "payment", tracked, (answer) => recordAnswer(answered, answer), unreachableMessage,
      // Each provider tried gets a call's time (cascade), plus a margin for moving the call between them.
      (PROVIDER_CALL_TIMEOUT_MS + 1_000) * (1 + fallbacks.length))
  })

/** The record of an attempt's answer, unless its call was recorded meanwhile (reconciliation raced us). */
const recordAnswerOf = (step: StepName, txn: Transaction, merchantInitiated: boolean, secondTry: boolean) =>
  (answer: AuthorizeResult | StartResult | "unavailable") =>
    record(txn.order_id, txn.id, recordedOutcome(step, answer, merchantInitiated, secondTry), txn.pending_call!.key)

/**
 * Call → record for an attempt whose call is reserved (`txn.pending_call`), on the provider in
 * context and, should it be definitely unreachable, on its fallbacks (Route.ts) in turn. With
 * `smartRetry` (a customer-initiated card create or client pay), a retryable decline is tried once
 * more on the next channel of the route: the first try is recorded failed and the second reserved
 * in one unit of work (`reserveRetry`, then the `<step>.retry_reserved` fault point), then the
 * second call → record runs as any step and its outcome moves the order.
 */
export const runAttempt = (
  step: StepName,
  txn: Transaction,
  call: AttemptCall,
  merchantInitiated: boolean,
  options: { readonly smartRetry?: boolean } = {}
) =>
  callRoute(step, txn, call, unreachableAttempt(step), (answered, answer) =>
    Effect.gen(function*() {
      if (options.smartRetry === true && retryable(answered, answer) && answer !== "unavailable" && answer._tag === "Declined") {
        const [next, ...after] = answered.rest
        const second = yield* reserveRetry(txn, answer.decline_code, answer.provider_transaction_id, next!)
        if (second !== undefined) {
          yield* Effect.logInfo(`${txn.id} declined ${answer.decline_code} on channel ${answered.provider.channel_id}; retrying once as ${second.id} on channel ${next!.channel_id}`)
          yield* checkpoint(step, "retry_reserved")
          return yield* callRoute(step, second, call, unreachableAttempt(step, true), (_, secondAnswer) =>
            recordAnswerOf(step, second, merchantInitiated, true)(secondAnswer)).pipe(
              Effect.provideService(PaymentProvider, next!),
              Effect.provideService(Fallbacks, after)
            )
        }
      }
      return yield* recordAnswerOf(step, txn, merchantInitiated, false)(answer)
    }))

/**
 * Whether the call reserved now can be made, and its answer recorded, in the reserving unit of
 * work: the provider answers in it (PaymentProvider.answersInUnitOfWork) and nothing would move
 * the call to another provider (no fallbacks: a move commits on its own, Route.ts).
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

/**
 * `runAttempt` in the unit of work that inserted `order` and its attempt `txn` with its call
 * reserved (see `joined`): the rows are recorded on as they were inserted, since nothing else can
 * see them before the commit. Only where `answersInUnitOfWork`: no fallbacks, one provider.
 */
export const runAttemptInUnitOfWork = (step: StepName, order: Order, txn: Transaction, call: AttemptCall, merchantInitiated: boolean) =>
  Effect.gen(function*() {
    const provider = yield* PaymentProvider
    return yield* callAndRecord(step, "payment", call(provider, txn), (answer) =>
      recordOn(order, txn, recordedOutcome(step, answer, merchantInitiated)), unreachableAttempt(step))
  })
