/**
 * The provider step of a payment attempt (ProviderStep's reserve → call → record, for the calls a
 * route may move): the cascade over a new payment's route when a channel is definitely unreachable,
 * the health each answer tells of its channel, and smart retries (issue 27): a retryable decline of
 * a customer-initiated card payment tried once more on the route's next channel, crash-safe as any
 * step (both calls are reserved transactions).
 */
import { Clock, Effect } from "effect"
import { healthOf, isRetryable } from "../../channels/DeclineClasses.ts"
import type { Routing } from "../../channels/RoutingModel.ts"
import { ChannelHealth } from "../../channels/RoutingPorts.ts"
import type { ProviderUnavailable } from "../../kernel/Errors.ts"
import type { UnitOfWork } from "../../kernel/Ports.ts"
import { revise } from "../../kernel/StateMachine.ts"
import { nowIso } from "../../kernel/Time.ts"
import type { Order, Transaction } from "../Payment.ts"
import { type OrderRepo, TransactionRepo } from "../PaymentPorts.ts"
import { type AuthorizeResult, PaymentProvider, type StartResult, type Unknown } from "../ProviderPorts.ts"
import { loadTxn, lockOrder } from "./Load.ts"
import { newTransaction } from "./NewTransaction.ts"
import { afterCommit, decided, saveTxn, unitOfWork } from "./Persist.ts"
import { observeRoutingDecision } from "../../kernel/OperationalMetrics.ts"
import { callAndRecord, checkpoint, idempotencyKey, inDoubtAfter, PROVIDER_CALL_TIMEOUT_MS, reserve, type StepName, unreachable, attemptOutcome } from "./ProviderStep.ts"
import { type AttemptOutcome, countAuthorization, declinedTxn, record, recordOn } from "./RecordAttempt.ts"
import { Fallbacks, providerFields } from "./Route.ts"

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
    const routing = retried(current.routing, next.channel_id)
    yield* saveTxn(revise(current, { ...providerFields(next), routing, pending_call: { ...current.pending_call!, at } }, at))
    if (routing !== null) yield* afterCommit(observeRoutingDecision(routing.reason))
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
 * send again; runAttempt answers the failed payment, not a 502).
 */
const recordedOutcome = (step: StepName, answer: AuthorizeResult | StartResult | "unavailable", merchantInitiated: boolean, secondTry = false): AttemptOutcome =>
  answer !== "unavailable" ? attemptOutcome(answer, merchantInitiated) as AttemptOutcome : step === "create" && !secondTry ? { _tag: "Unreachable" } : unreachable

const unreachableAttempt = (step: StepName, secondTry = false) =>
  step === "create" && !secondTry
    ? "The payment provider is unreachable; nothing was charged. Retry the same request with the same merchant_reference"
    : "The payment provider is unreachable; the attempt was recorded as failed"

/**
 * Smart retry (issue 27, design27.md): the retry a first try's answer calls for, if any — the
 * decline and the route's next channel (with those after it). Only where the caller allows it (a
 * customer-initiated card create or client pay), only a decline with a retryable code
 * (DeclineClasses.RETRYABLE), only on channels, only when the route has a channel after the one
 * that declined.
 */
const retryOf = (answered: Answered | undefined, answer: AuthorizeResult | StartResult | "unavailable") => {
  if (answered === undefined || answer === "unavailable" || answer._tag !== "Declined" || !isRetryable(answer.decline_code)) return undefined
  const [next, ...after] = answered.rest
  if (answered.provider.channel_id === undefined || next?.channel_id === undefined) return undefined
  return { declined: answer, from: answered.provider, next, after }
}

/**
 * The smart retry's one unit of work, under the order's lock: the first try recorded failed with
 * its decline code (the order does not move: no event, the payment goes on) and the second
 * transaction inserted on the next channel with its call reserved, routing `retry`. Both calls are
 * reserved transactions, so reconciliation knows each whatever crashes. Undefined when the first
 * try's call was recorded meanwhile (reconciliation raced us: its record stands, no retry).
 */
const reserveRetry = (txn: Transaction, declined: Extract<AuthorizeResult, { readonly _tag: "Declined" }>, next: Provider) =>
  unitOfWork(Effect.gen(function*() {
    const order = yield* lockOrder(txn.order_id)
    const current = yield* loadTxn(txn.id)
    if (current.pending_call === null || current.pending_call.key !== txn.pending_call!.key) return undefined
    const at = yield* nowIso
    const failed = yield* decided(declinedTxn(current, declined, at))
    yield* saveTxn(failed.next)
    // The first try's decline is an authorization answer like any recorded one (/metrics).
    yield* countAuthorization(current, "declined")
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
    // Each try a route sends is a routing decision (/metrics), counted once committed.
    if (reserved.routing !== null) yield* afterCommit(observeRoutingDecision(reserved.routing.reason))
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
 * A smart retry's second try (`second`, reserved): call → record as any attempt. The first try was
 * a real decline, so the payment is declined whatever this one meets: an unreachable provider is
 * recorded as its decline (the order fails, one payment.failed) and the answer is that failed
 * payment, never a 502 inviting the same request again on an order already failed (contract.md,
 * Idempotency). callAndRecord raises ProviderUnavailable only after the record, so it is there.
 */
const secondTry = (step: StepName, second: Transaction, call: AttemptCall, merchantInitiated: boolean) => {
  let recorded: { readonly order: Order; readonly txn: Transaction } | undefined
  return callRoute(step, second, call, unreachableAttempt(step, true), (_, answer) =>
    Effect.tap(recordAnswerOf(step, second, merchantInitiated, true)(answer), (done) => Effect.sync(() => {
      recorded = done
    }))).pipe(
      Effect.catchTag("ProviderUnavailable", (unavailable) => recorded === undefined ? Effect.fail(unavailable) : Effect.succeed(recorded))
    )
}

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
      const retry = options.smartRetry === true ? retryOf(answered, answer) : undefined
      if (retry !== undefined) {
        const second = yield* reserveRetry(txn, retry.declined, retry.next)
        if (second !== undefined) {
          yield* Effect.logInfo(`${txn.id} declined ${retry.declined.decline_code} on channel ${retry.from.channel_id}; retrying once as ${second.id} on channel ${retry.next.channel_id}`)
          yield* checkpoint(step, "retry_reserved")
          return yield* secondTry(step, second, call, merchantInitiated).pipe(
            Effect.provideService(PaymentProvider, retry.next),
            Effect.provideService(Fallbacks, retry.after)
          )
        }
      }
      return yield* recordAnswerOf(step, txn, merchantInitiated, false)(answer)
    }))

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
