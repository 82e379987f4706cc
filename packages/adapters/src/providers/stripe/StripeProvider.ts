/**
 * The Stripe provider: the domain's PaymentProvider over PaymentIntents and Refunds (card only).
 * Every mutating call carries Tender's idempotency key as Stripe's Idempotency-Key, so a retry
 * replays Stripe's saved answer and never charges twice.
 *
 * Lookup (reconciliation) cannot replay a lost call: it has only the key, not the call's
 * parameters. Instead each mutating call leaves a tag on the PaymentIntent it concerns, metadata
 * `tk_<sha256(key)>` = the operation, written by the call itself where Stripe takes metadata
 * (create, capture, refund) and by a tagging update just before it where it does not (cancel). A
 * lookup first fences the key: it creates an inert, never-confirmed PaymentIntent under the key.
 * Stripe answers that with the fence (the key was never used: NotReceived, and a late copy of the
 * lost call now gets `idempotency_error`, which maps to ProviderUnavailable) or with
 * `idempotency_error` (the key was used): then the tag is searched for and the PaymentIntent (and
 * its refunds) say what became of the call. docs/decisions.md, "Stripe provider", says why.
 */
import { PaymentProvider } from "@tender/domain"
import type { AuthorizeResult, CaptureResult, LookupResult, PayoutResult, Unknown, VoidResult } from "@tender/domain"
import { Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import type Stripe from "stripe"
import { answersFor } from "../shared/CallFailure.ts"
import { returnUrlFor } from "../shared/ChallengeReturn.ts"
import { call, make, type StripeClientConfig, type StripeFailure, type StripeRawError, type StripeSdk } from "./StripeClient.ts"
import { normalize } from "./StripeDeclines.ts"

type Port = PaymentProvider["Service"]

export interface StripeProviderConfig extends StripeClientConfig {
  /** Whose money the channel moves: a `sk_test_` key is test mode, a `sk_live_` key live. */
  readonly mode: "test" | "live"
  /** Where Stripe sends the customer back after a 3-D Secure challenge (Tender's return page). */
  readonly returnUrl: string
}

/** The metadata key a call with `key` leaves on its PaymentIntent (Stripe allows 40 characters). */
export const tagOf = (key: string) => `tk_${createHash("sha256").update(key).digest("hex").slice(0, 37)}`

const TAGGED_OPERATIONS = ["authorize", "capture", "void", "refund"] as const
type TaggedOperation = typeof TAGGED_OPERATIONS[number]

const answers = answersFor("Stripe")
const { unavailable, unknown } = answers

/**
 * How a mutating call's failure reads (shared/CallFailure.ts), plus Stripe's own case:
 * `idempotency_error` → ProviderUnavailable (the key was fenced by a lookup, or belongs to another
 * call: this request was not applied); any other error body → `rejected`.
 */
const settle = <A, R>(attempt: Effect.Effect<A, StripeFailure>, ok: (answer: A) => R, rejected: (error: StripeRawError) => R) =>
  answers.settle(
    attempt,
    (answer) => Effect.succeed<R | Unknown>(ok(answer)),
    (error) =>
      error.type === "idempotency_error"
        ? Effect.fail(unavailable("the idempotency key was already used for another request; this one was not applied"))
        : Effect.succeed(rejected(error))
  )

const describe = (error: StripeRawError) => error.message ?? error.type

/** A read: any failure means Stripe could not be asked now. */
const read = <A>(attempt: Effect.Effect<A, StripeFailure>) => Effect.mapError(attempt, (failure) => answers.unreachable(failure, describe))

const multicaptureOf = (intent: Stripe.PaymentIntent) =>
  typeof intent.latest_charge === "object" && intent.latest_charge?.payment_method_details?.card?.multicapture?.status === "available"

/** What a PaymentIntent says of its authorization. */
export const authorizeOutcome = (intent: Stripe.PaymentIntent): AuthorizeResult | Unknown => {
  switch (intent.status) {
    case "requires_capture":
    case "succeeded":
      return { _tag: "Approved", provider_transaction_id: intent.id, multicapture: intent.status === "requires_capture" && multicaptureOf(intent) }
    case "requires_action": {
      const url = intent.next_action?.redirect_to_url?.url
      // Without a redirect (no return_url was given) the challenge needs Stripe.js: not ours to show.
      return typeof url === "string"
        ? { _tag: "ChallengeRequired", provider_transaction_id: intent.id, challenge_url: url }
        : { _tag: "Declined", decline_code: "authentication_failed", provider_transaction_id: intent.id }
    }
    case "processing":
    case "requires_confirmation":
      return unknown(`the PaymentIntent is ${intent.status}`)
    default:
      return { _tag: "Declined", decline_code: normalize(intent.last_payment_error), provider_transaction_id: intent.id }
  }
}

/** Refusal codes of follow-ups (capture, void, refund): Stripe's error code → ours. */
const refusal = (error: StripeRawError, fallback: string) => {
  switch (error.code) {
    case "resource_missing":
      return "authorization_not_found"
    case "amount_too_large":
      return "amount_too_large"
    case "charge_already_refunded":
      return "already_refunded"
    default:
      return error.param === "final_capture" ? "multicapture_not_supported" : fallback
  }
}

/** What a refund's status says (a refund's answer, its lookup, its notification). */
export const refundResult = (refund: { readonly id: string; readonly status: string | null }): PayoutResult =>
  refund.status === "succeeded"
    ? { _tag: "Paid", provider_transaction_id: refund.id }
    : refund.status === "pending" || refund.status === "requires_action"
    ? { _tag: "Pending", provider_transaction_id: refund.id }
    : { _tag: "Refused", decline_code: "refund_failed" }

export const makeStripeProvider = (config: StripeProviderConfig, sdk: StripeSdk = make(config)): Port => {
  const expand = ["latest_charge"]

  /** The PaymentIntent whose metadata matches, newest first; search may lag writes on real Stripe. */
  const searchTagged = (clauses: ReadonlyArray<string>) =>
    read(call(() => sdk.paymentIntents.search({ query: clauses.join(" OR "), limit: 1 }))).pipe(
      Effect.map((result) => result.data[0])
    )

  const authorizeAfterChallenge = (request: Parameters<Port["authorizeCard"]>[0]) =>
    Effect.gen(function*() {
      // The challenged PaymentIntent by its id when the caller has it. Search is the fallback only:
      // it lags writes on real Stripe, and a customer back from the challenge within seconds must
      // not read as "nothing there" while Stripe has charged. Nothing is sent under this round's
      // key before the intent is known, so a failed or lagging search is a call not applied.
      const intent = request.challenged !== undefined
        ? { id: request.challenged }
        : yield* searchTagged([`metadata['tender_reference']:'${request.reference}'`])
      if (intent === undefined) return yield* unavailable(`no PaymentIntent for ${request.reference} found yet`)
      // A call of its own (the tag under this round's key), so that lookup can answer for it.
      return yield* settle(
        call(() => sdk.paymentIntents.update(intent.id, { metadata: { [tagOf(request.idempotency_key)]: "authorize" }, expand }, { idempotencyKey: request.idempotency_key })),
        authorizeOutcome,
        (error): AuthorizeResult => ({ _tag: "Declined", decline_code: normalize(error), provider_transaction_id: intent.id })
      )
    })

  const authorizeCard: Port["authorizeCard"] = (request) => {
    if (request.authenticated) return authorizeAfterChallenge(request)
    const merchantInitiated = request.merchant_initiated === true
    const params = {
      amount: request.amount,
      currency: request.currency.toLowerCase(),
      capture_method: request.capture ? "automatic" : "manual",
      confirm: true,
      // Raw card data: the vault revealed it for this call only (Stripe's raw card data API access).
      payment_method_data: {
        type: "card",
        card: { number: request.card.number, exp_month: request.card.exp_month, exp_year: request.card.exp_year, ...(request.card.cvc === undefined ? {} : { cvc: request.card.cvc }) }
      },
      ...(request.capture && !merchantInitiated ? {} : {
        payment_method_options: {
          card: {
            ...(request.capture ? {} : { request_multicapture: "if_available" }),
            // Stripe's name and values for the scheme's type of merchant-initiated transaction.
            ...(merchantInitiated ? { stored_credential_usage: request.stored_credential_reason ?? "unscheduled" } : {})
          }
        }
      }),
      // A merchant-initiated charge: the customer is not there to answer a challenge. Otherwise our
      // reference on the return URL, as on Adyen's, tells the return route which attempt came back.
      ...(merchantInitiated ? { off_session: true } : { return_url: returnUrlFor(config.returnUrl, request.reference) }),
      metadata: { tender_reference: request.reference, [tagOf(request.idempotency_key)]: "authorize" },
      expand
    } as unknown as Stripe.PaymentIntentCreateParams
    return settle(
      call(() => sdk.paymentIntents.create(params, { idempotencyKey: request.idempotency_key })),
      authorizeOutcome,
      (error): AuthorizeResult | Unknown =>
        error.payment_intent !== undefined
          ? authorizeOutcome(error.payment_intent)
          : { _tag: "Declined", decline_code: error.type === "card_error" ? normalize(error) : "invalid_request", provider_transaction_id: null }
    )
  }

  const captureCard: Port["captureCard"] = (request) =>
    settle(
      call(() =>
        sdk.paymentIntents.capture(request.authorization, {
          amount_to_capture: request.amount,
          // Stripe releases what is left on a final capture; a non-final one needs multicapture.
          ...(request.final ? {} : { final_capture: false }),
          metadata: { [tagOf(request.idempotency_key)]: "capture" }
        }, { idempotencyKey: request.idempotency_key })),
      (intent): CaptureResult => ({ _tag: "Settled", provider_transaction_id: intent.id }),
      (error): CaptureResult => ({ _tag: "Refused", decline_code: refusal(error, "capture_refused") })
    )

  /** Tags the PaymentIntent for a call that takes no metadata itself (its own key: `<key>:tag`). */
  const tag = (intentId: string, key: string, operation: TaggedOperation) =>
    settle(
      call(() => sdk.paymentIntents.update(intentId, { metadata: { [tagOf(key)]: operation } }, { idempotencyKey: `${key}:tag` })),
      (): "tagged" | { readonly _tag: "Refused"; readonly decline_code: string } => "tagged",
      (error) => ({ _tag: "Refused" as const, decline_code: refusal(error, `${operation}_refused`) })
    )

  const voidCard: Port["voidCard"] = (request) =>
    Effect.gen(function*() {
      const tagged = yield* tag(request.authorization, request.idempotency_key, "void")
      if (tagged !== "tagged") return tagged
      return yield* settle(
        call(() => sdk.paymentIntents.cancel(request.authorization, {}, { idempotencyKey: request.idempotency_key })),
        (intent): VoidResult => ({ _tag: "Voided", provider_transaction_id: intent.id }),
        (error): VoidResult => ({ _tag: "Refused", decline_code: refusal(error, "void_refused") })
      )
    })

  const refund: Port["refund"] = (request) =>
    Effect.gen(function*() {
      // The refund carries the tag; the PaymentIntent too, so that lookup can find it by search.
      const tagged = yield* tag(request.payment, request.idempotency_key, "refund")
      if (tagged !== "tagged") return tagged
      return yield* settle(
        call(() =>
          sdk.refunds.create({
            payment_intent: request.payment,
            amount: request.amount,
            metadata: { tender_reference: request.reference, [tagOf(request.idempotency_key)]: "refund" }
          }, { idempotencyKey: request.idempotency_key })),
        refundResult,
        (error): PayoutResult => ({ _tag: "Refused", decline_code: refusal(error, "refund_refused") })
      )
    })

  const settlement: Port["settlement"] = (providerTransactionId) =>
    providerTransactionId.startsWith("re_")
      ? read(call(() => sdk.refunds.retrieve(providerTransactionId))).pipe(
        // Stripe's refund statuses: pending, requires_action, succeeded, failed, canceled.
        Effect.map((found) =>
          found.status === "pending" || found.status === "requires_action" ? "pending" : found.status === "succeeded" ? "settled" : "failed")
      )
      // Card captures settle at once on Stripe (CaptureResult Settled): nothing is pending.
      : Effect.succeed("settled")

  /** The inert PaymentIntent a lookup creates under a key to fence it; deterministic, so a second lookup replays it. */
  const FENCE = { amount: 100, currency: "usd", description: "Tender reconciliation fence (never confirmed)", metadata: { tender_fence: "true" } }

  const lookup: Port["lookup"] = (key) =>
    Effect.gen(function*() {
      const fence = yield* call(() => sdk.paymentIntents.create(FENCE, { idempotencyKey: key })).pipe(
        Effect.catch((failure) =>
          failure._tag === "Rejected" && failure.error.type === "idempotency_error"
            ? Effect.succeed(undefined)
            : Effect.fail(answers.unreachable(failure, describe)))
      )
      if (fence !== undefined) {
        // Tidy-up only: the fence was never confirmed and can hold no money either way.
        yield* Effect.ignore(call(() => sdk.paymentIntents.cancel(fence.id, {}, { idempotencyKey: `${key}:fence` })))
        return { _tag: "NotReceived" } satisfies LookupResult
      }
      const tagName = tagOf(key)
      const intent = yield* searchTagged(TAGGED_OPERATIONS.map((operation) => `metadata['${tagName}']:'${operation}'`))
      // Stripe received the key but the search index does not show its tag yet (or the call failed
      // before writing anything): ask again later; past the horizon reconciliation gives up.
      if (intent === undefined) return yield* unavailable(`the call with this key was received but its PaymentIntent is not found yet`)
      const operation = intent.metadata[tagName] as TaggedOperation
      switch (operation) {
        case "authorize": {
          const current = yield* read(call(() => sdk.paymentIntents.retrieve(intent.id, { expand })))
          const result = authorizeOutcome(current)
          if (result._tag === "Unknown") return yield* unavailable(result.reason)
          return { _tag: "Authorize", result } satisfies LookupResult
        }
        // The tag was written by the capture itself: the capture was applied.
        case "capture":
          return { _tag: "Capture", result: { _tag: "Settled", provider_transaction_id: intent.id } } satisfies LookupResult
        case "void":
          return {
            _tag: "Void",
            result: intent.status === "canceled" ? { _tag: "Voided", provider_transaction_id: intent.id } : { _tag: "Refused", decline_code: "void_refused" }
          } satisfies LookupResult
        case "refund": {
          const refunds = yield* read(call(() => sdk.refunds.list({ payment_intent: intent.id, limit: 100 })))
          const made = refunds.data.find((candidate) => candidate.metadata?.[tagName] === "refund")
          return { _tag: "Refund", result: made === undefined ? { _tag: "Refused", decline_code: "refund_refused" } : refundResult(made) } satisfies LookupResult
        }
      }
    })

  return {
    name: "stripe",
    mode: config.mode,
    authorizeCard, captureCard, voidCard, refund, settlement, lookup,
    // A cancel takes no amount: the PaymentIntent's whole uncaptured rest goes (and its captures
    // settle at once, so none fails after Stripe accepted it).
    voidReleasesRemainder: true,
    // Stripe's card API moves no money out to cards or accounts here (Connect payouts are another product).
    ...answers.cardOnly("a Stripe card channel"),
    // Stripe answers no BIN queries; a charge's payment_method_details.card.country comes only after charging.
    binLookup: () => Effect.succeed({}),
    // Stripe appends the PaymentIntent's id: a return naming another one (or none) is not this attempt's.
    // The authorization after it reads the PaymentIntent itself, so nothing else is kept.
    challengeReturned: (returnedTo, providerTransactionId) =>
      Effect.succeed(providerTransactionId !== null && URL.parse(returnedTo)?.searchParams.get("payment_intent") === providerTransactionId),
    // The customer could still answer on Stripe's page in an old tab, and Stripe would charge: cancel
    // the PaymentIntent first. Stripe refuses to cancel one that succeeded or awaits capture (then
    // the challenge completed: lookup tells how); an answer in doubt is asked about next round.
    abandonChallenge: (request) =>
      settle(
        call(() => sdk.paymentIntents.cancel(request.provider_transaction_id, { cancellation_reason: "abandoned" }, { idempotencyKey: request.idempotency_key })),
        (): "abandoned" | "completed" => "abandoned",
        (error): "abandoned" | "completed" => error.payment_intent?.status === "canceled" ? "abandoned" : "completed"
      ).pipe(Effect.flatMap((answer) => typeof answer === "string" ? Effect.succeed(answer) : Effect.fail(unavailable(`the cancel's answer was lost (${answer.reason})`))))
  }
}

/** The Stripe provider as the PaymentProvider service (one channel's credentials). */
export const layer = (config: StripeProviderConfig): Layer.Layer<PaymentProvider> => Layer.succeed(PaymentProvider, makeStripeProvider(config))
