/**
 * The Adyen provider: the domain's PaymentProvider over Adyen's Checkout API (card only). Every
 * mutating call carries Tender's idempotency key as Adyen's Idempotency-Key, so a retry gets
 * Adyen's first answer back and never charges twice.
 *
 * Modifications are asynchronous on Adyen: a capture, cancel or refund answers 201 `received` and
 * its outcome arrives by notification. A capture is therefore `Settling` and a refund `Pending`
 * until a verified CAPTURE / REFUND notification is handed to `observe`; a cancel answers
 * `Voided` on receipt (a failed CANCELLATION notification says otherwise later).
 *
 * Lookup (reconciliation) replays under the key. Adyen keeps idempotency keys per company account,
 * whatever the endpoint, and answers any later request with a key by the first response made
 * under it. So lookup sends one harmless request under the key, a cancel of a payment that does
 * not exist (`FENCE_PSP`, reference `FENCE_REFERENCE`): if the key was used, Adyen answers with that
 * call's saved response, which says what became of it; if it was not, the probe itself is kept
 * under the key, which fences it: a late or retried call with the key gets the probe's answer back
 * and is read as not applied (ProviderUnavailable). docs/decisions.md, "Adyen provider", says why.
 *
 * What Adyen will not say again (the operation sent under each key, fenced keys, the shopper's
 * redirectResult, notification outcomes) goes to a ProviderJournal (config `journal`). The
 * PostgreSQL one is shared by every Tender process, so a lookup, a settlement check or a 3-D Secure
 * completion in one process reads what another sent or was told, before and after a crash.
 * docs/decisions.md, "Provider journal".
 */
import { Card, type Errors, PaymentProvider } from "@tender/domain"
import type { AuthorizeResult, CaptureResult, LookupResult, PayoutResult, PaymentRequest, Unknown, VoidResult } from "@tender/domain"
import { Effect, Layer, Option, Schema } from "effect"
import { answersFor } from "../shared/CallFailure.ts"
import { referenceOf, returnUrlFor } from "../shared/ChallengeReturn.ts"
import { type Kind, ProviderJournal } from "../shared/ProviderJournal.ts"
import * as ProviderJournalMemory from "../shared/ProviderJournalMemory.ts"
import { type AdyenClientConfig, type AdyenFailure, type AdyenRawError, type AdyenSdk, call, make } from "./AdyenClient.ts"
import { fromValidation, normalize } from "./AdyenDeclines.ts"
import type { AdyenNotification } from "./AdyenNotifications.ts"
import { captureId, FENCE_PSP, FENCE_REFERENCE } from "./AdyenReferences.ts"

type Port = PaymentProvider["Service"]

export interface AdyenProviderConfig extends AdyenClientConfig {
  /** Whose money the channel moves. */
  readonly mode: "test" | "live"
  /** Where Adyen sends the shopper back after a 3-D Secure challenge (Tender's return page). */
  readonly returnUrl: string
  /** The merchant account's "multiple partial captures" setting (enabled by Adyen on request). */
  readonly multipleCaptures?: boolean | undefined
  /**
   * Where the adapter keeps what Adyen will not tell it again (what it sent under each key, fenced
   * keys, shoppers' redirectResults, notification outcomes). Default: a fresh journal in memory,
   * which dies with the process; in production the PostgreSQL journal, shared by every process.
   */
  readonly journal?: ProviderJournal["Service"] | undefined
  /** This channel's part of the journal (the merchant account and the channel id). Default: the merchant account. */
  readonly journalScope?: string | undefined
}

/** The Adyen provider: the port, plus what Tender's return page and notification route hand it. */
export interface AdyenProvider extends Port {
  /**
   * The shopper came back from the challenge to `returnUrl`: the URL Adyen sent them to (a posted
   * form's fields added to its query). `false` without our reference or a redirectResult.
   */
  readonly challengeReturned: (returnedTo: string) => Effect.Effect<boolean>
  /** A verified notification: settles captures and refunds for `settlement`. */
  readonly observe: (notification: AdyenNotification) => Effect.Effect<void>
}


/** Adyen's 3-D Secure 2 test card (Visa): its test environment challenges this number. */
export const THREE_DS2_TEST_CARD = "4917610000000000"

/**
 * Tender's test cards (contract.md, Sandbox) on a test-mode channel: how Adyen's test environment
 * is asked for what the table says, since it knows other triggers. Declines by the holder name
 * (docs.adyen.com, "Testing result codes and refusal reasons"), the challenge by Adyen's own 3-D
 * Secure 2 test card. The other test cards go as they are (approved there).
 */
const TEST_MODE_TRIGGERS: Partial<Record<Card.TestCard, { readonly holderName?: string; readonly number?: string }>> = {
  "4000000000000002": { holderName: "DECLINED" },
  "4000000000009995": { holderName: "NOT_ENOUGH_BALANCE" },
  "4000000000000069": { holderName: "CARD_EXPIRED" },
  "4000000000003220": { number: THREE_DS2_TEST_CARD }
}

/**
 * The stored credential's reason as Adyen's `recurringProcessingModel`: a charge on a fixed schedule
 * (a subscription, an installment plan) is `Subscription`; one without is `UnscheduledCardOnFile`.
 */
const RECURRING_PROCESSING_MODEL: Readonly<Record<PaymentRequest.StoredCredentialReason, "Subscription" | "UnscheduledCardOnFile">> = {
  unscheduled: "UnscheduledCardOnFile",
  recurring: "Subscription",
  installment: "Subscription"
}

const answers = answersFor("Adyen")
const { unavailable, unknown } = answers
const foreign = () => unavailable("the idempotency key answers for another request; this one was not applied")

/**
 * How a mutating call's failure reads (shared/CallFailure.ts): a validation error body →
 * `rejected`. A success is read by `ok`, which fails when the answer is another request's (the key
 * was fenced by a lookup or used for something else).
 */
const settle = <A, R>(
  attempt: Effect.Effect<A, AdyenFailure>,
  ok: (answer: A) => Effect.Effect<R | Unknown, Errors.ProviderUnavailable>,
  rejected: (error: AdyenRawError) => R
) => answers.settle(attempt, ok, (error) => Effect.succeed(rejected(error)))

interface PaymentAnswer {
  readonly resultCode?: string | null | undefined
  /** Our reference, as sent with /payments (answered by /payments/details too). */
  readonly merchantReference?: string | null | undefined
  readonly pspReference?: string | null | undefined
  readonly refusalReason?: string | null | undefined
  readonly refusalReasonCode?: string | null | undefined
  readonly action?: { readonly type?: string | null | undefined; readonly url?: string | null | undefined } | null | undefined
}

/** What a /payments or /payments/details answer says of the authorization; undefined when it is not one. */
export const authorizeOutcome = (answer: PaymentAnswer, multicapture: boolean): AuthorizeResult | Unknown | undefined => {
  const psp = answer.pspReference ?? undefined
  switch (answer.resultCode ?? undefined) {
    case undefined:
      return undefined
    case "Authorised":
      return psp === undefined ? unknown("Authorised without a pspReference") : { _tag: "Approved", provider_transaction_id: psp, multicapture }
    case "Refused":
      return { _tag: "Declined", decline_code: normalize(answer), provider_transaction_id: psp ?? null }
    case "Cancelled":
      return { _tag: "Declined", decline_code: "card_declined", provider_transaction_id: psp ?? null }
    case "Error":
      return { _tag: "Declined", decline_code: "processing_error", provider_transaction_id: psp ?? null }
    case "RedirectShopper":
    case "ChallengeShopper":
    case "IdentifyShopper": {
      // Only a redirect can be shown from Tender's pages; native 3-D Secure 2 needs Adyen's web SDK.
      const url = answer.action?.type === "redirect" ? answer.action.url ?? undefined : undefined
      return url !== undefined && psp !== undefined
        ? { _tag: "ChallengeRequired", provider_transaction_id: psp, challenge_url: url }
        : { _tag: "Declined", decline_code: "authentication_failed", provider_transaction_id: psp ?? null }
    }
    // Pending, Received, …: the outcome arrives by notification.
    default:
      return unknown(`the payment is ${answer.resultCode}`)
  }
}

const paymentOf = (providerId: string) => providerId.split("/")[0]!
const modificationOf = (providerId: string) => providerId.split("/").at(-1)!

interface ModificationAnswer {
  readonly paymentPspReference?: string | undefined
  readonly pspReference?: string | undefined
  readonly reference?: string | undefined
  readonly status?: string | undefined
}

/** The modification's pspReference when the answer is this call's own `received`; undefined when it is another request's. */
const receivedFor = (answer: ModificationAnswer, paymentPsp: string) =>
  answer.status === "received" && answer.paymentPspReference === paymentPsp && answer.reference !== FENCE_REFERENCE
    ? answer.pspReference
    : undefined

/** A follow-up Adyen refused at once (validation); most refusals arrive later, by notification. */
interface Refused { readonly _tag: "Refused"; readonly decline_code: string }

const refusal = (error: AdyenRawError, fallback: string) => (error.errorCode === "167" ? "authorization_not_found" : fallback)

const amountOf = (request: { readonly amount: number; readonly currency: string }) => ({ value: request.amount, currency: request.currency.toUpperCase() })

const Operation = Schema.Literals(["authorize", "capture", "void", "refund"])
type Operation = typeof Operation.Type

/**
 * What the journal holds per kind (the operation and the capture mode, never the card). Decoded on
 * the way out: a row that is not what this adapter wrote is a defect, not a guess.
 */
const Journaled = {
  /** Idempotency key → what was sent under it, so lookup knows what a replayed `received` answer was. */
  sent: Schema.Struct({ operation: Operation, multicapture: Schema.Boolean }),
  /** Idempotency key → fenced (lookup said NotReceived): never sent again, by any process. */
  fenced: Schema.Literal(true),
  /** Our reference → the redirectResult the shopper came back with. */
  challenge_return: Schema.String,
  /** Modification pspReference → its CAPTURE / REFUND notification's success. */
  modification_outcome: Schema.Boolean
} satisfies Record<Kind, Schema.Top>

type Journaled = { readonly [K in Kind]: (typeof Journaled)[K]["Type"] }

export const makeAdyenProvider = (config: AdyenProviderConfig, sdk: AdyenSdk = make(config)): AdyenProvider => {
  const timeoutMs = config.timeoutMs ?? 20_000
  const multipleCaptures = config.multipleCaptures ?? false
  const merchantAccount = config.merchantAccount
  const journal = config.journal ?? ProviderJournalMemory.make()
  const scope = config.journalScope ?? merchantAccount
  // Every kind's schema is JSON as it stands (encoded = decoded): one codec type serves them all.
  const codec = (kind: Kind) => Journaled[kind] as unknown as Schema.Codec<unknown>
  const remember = <K extends Kind>(kind: K, key: string, value: Journaled[K]) =>
    journal.remember(scope, kind, key, Schema.encodeSync(codec(kind))(value))
  const recall = <K extends Kind>(kind: K, key: string): Effect.Effect<Option.Option<Journaled[K]>> =>
    journal.recall(scope, kind, key).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.succeed(Option.none()),
        onSome: (value) => Effect.map(Schema.decodeUnknownEffect(codec(kind))(value), (decoded) => Option.some(decoded as Journaled[K]))
      })),
      Effect.orDie
    )
  const isFenced = (key: string) => Effect.map(recall("fenced", key), Option.isSome)

  /**
   * Refuses a key a lookup fenced (in any process sharing the journal); otherwise notes what is
   * about to be sent under it. Without a shared journal (a restart on the memory one) lookup tells a
   * replayed authorization and cancel by their shape and asks again later about the rest.
   */
  const guard = (key: string, operation: Operation, multicapture = false) =>
    Effect.flatMap(isFenced(key), (fenced) =>
      fenced
        ? Effect.fail(unavailable("a lookup fenced this idempotency key; the call was not applied"))
        : remember("sent", key, { operation, multicapture }))

  const readAuthorization = (multicapture: boolean) => (answer: PaymentAnswer) => {
    const outcome = authorizeOutcome(answer, multicapture)
    return outcome === undefined ? Effect.fail(foreign()) : Effect.succeed(outcome)
  }

  const rejectedAuthorization = (error: AdyenRawError): AuthorizeResult => ({
    _tag: "Declined",
    decline_code: fromValidation(error.errorCode) ?? "invalid_request",
    provider_transaction_id: null
  })

  const authorizeCard: Port["authorizeCard"] = (request) =>
    Effect.gen(function*() {
      const multicapture = !request.capture && multipleCaptures
      if (request.authenticated) {
        // Nothing is sent under this round's key before the shopper's answer is known.
        const redirectResult = Option.getOrUndefined(yield* recall("challenge_return", request.reference))
        if (redirectResult === undefined) return yield* unavailable(`the shopper has not come back from the challenge of ${request.reference} yet`)
        yield* guard(request.idempotency_key, "authorize", multicapture)
        return yield* settle(
          call(() => sdk.payments.paymentsDetails({ details: { redirectResult } }, { idempotencyKey: request.idempotency_key }), timeoutMs),
          // The redirectResult came through a public return URL: one of another payment (a shopper
          // pasting their own cheaper payment's answer) reports that payment's outcome. This
          // attempt's shopper did not authenticate it: declined, its own payment left unfinished.
          (answer) =>
            answer.merchantReference != null && answer.merchantReference !== request.reference
              ? Effect.succeed<AuthorizeResult>({ _tag: "Declined", decline_code: "authentication_failed", provider_transaction_id: null })
              : readAuthorization(multicapture)(answer),
          rejectedAuthorization
        )
      }
      yield* guard(request.idempotency_key, "authorize", multicapture)
      const trigger = config.mode === "test" && Card.isTestCard(request.card.number) ? TEST_MODE_TRIGGERS[request.card.number] : undefined
      // Raw card fields: the vault revealed the card for this call only (PCI-compliant merchants
      // may send them; Adyen's web SDK would send encryptedCardNumber instead).
      const body = {
        merchantAccount,
        reference: request.reference,
        amount: amountOf(request),
        paymentMethod: {
          type: "scheme",
          number: trigger?.number ?? request.card.number,
          ...(trigger?.holderName === undefined ? {} : { holderName: trigger.holderName }),
          expiryMonth: String(request.card.exp_month).padStart(2, "0"),
          expiryYear: String(request.card.exp_year),
          ...(request.card.cvc === undefined ? {} : { cvc: request.card.cvc })
        },
        returnUrl: returnUrlFor(config.returnUrl, request.reference),
        // A merchant-initiated charge on a stored card: a continued authority, no shopper to challenge.
        ...(request.merchant_initiated === true
          ? { shopperInteraction: "ContAuth", recurringProcessingModel: RECURRING_PROCESSING_MODEL[request.stored_credential_reason ?? "unscheduled"] }
          : {}),
        ...(request.capture ? {} : { additionalData: { manualCapture: "true" } })
      }
      return yield* settle(
        // The library's request type wants its own enum members; the JSON is Adyen's as documented.
        call(() => sdk.payments.payments(body as never, { idempotencyKey: request.idempotency_key }), timeoutMs),
        readAuthorization(multicapture),
        rejectedAuthorization
      )
    })

  /**
   * One modification (capture, cancel, refund) of the payment behind `providerId`, sent under the
   * key: its own `received` answer is read by `ok`, another request's fails (the key is not ours).
   */
  const modify = <R>(
    operation: "capture" | "void" | "refund",
    key: string,
    providerId: string,
    send: (payment: string, options: { readonly idempotencyKey: string }) => Promise<ModificationAnswer>,
    ok: (payment: string, psp: string) => R
  ) =>
    Effect.gen(function*() {
      const payment = paymentOf(providerId)
      yield* guard(key, operation)
      return yield* settle<ModificationAnswer, R | Refused>(
        call(() => send(payment, { idempotencyKey: key }), timeoutMs),
        (answer) => {
          const psp = receivedFor(answer, payment)
          return psp === undefined ? Effect.fail(foreign()) : Effect.succeed(ok(payment, psp))
        },
        (error) => ({ _tag: "Refused", decline_code: refusal(error, `${operation}_refused`) })
      )
    })

  const captureCard: Port["captureCard"] = (request) =>
    request.previousCaptures > 0 && !multipleCaptures
      ? Effect.succeed({ _tag: "Refused", decline_code: "multicapture_not_supported" })
      // Adyen has no "final" flag: what a final capture leaves uncaptured is released when the authorization expires.
      : modify(
        "capture",
        request.idempotency_key,
        request.authorization,
        (payment, options) => sdk.modifications.captureAuthorisedPayment(payment, { merchantAccount, amount: amountOf(request), reference: request.reference }, options),
        (payment, psp): CaptureResult => ({ _tag: "Settling", provider_transaction_id: captureId(payment, psp) })
      )

  const voidCard: Port["voidCard"] = (request) =>
    modify(
      "void",
      request.idempotency_key,
      request.authorization,
      (payment, options) => sdk.modifications.cancelAuthorisedPaymentByPspReference(payment, { merchantAccount, reference: request.reference }, options),
      (_, psp): VoidResult => ({ _tag: "Voided", provider_transaction_id: psp })
    )

  const refund: Port["refund"] = (request) =>
    modify(
      "refund",
      request.idempotency_key,
      request.payment,
      (payment, options) => sdk.modifications.refundCapturedPayment(payment, { merchantAccount, amount: amountOf(request), reference: request.reference }, options),
      (_, psp): PayoutResult => ({ _tag: "Pending", provider_transaction_id: psp })
    )

  // Adyen has no API to ask about a modification: its notification is the answer.
  const settlement: Port["settlement"] = (providerTransactionId) =>
    Effect.map(recall("modification_outcome", modificationOf(providerTransactionId)), Option.match({
      onNone: () => "pending" as const,
      // CAPTURE_FAILED, REFUND_FAILED (or success=false): accepted, then not done.
      onSome: (success) => success ? "settled" as const : "failed" as const
    }))

  const binLookup: Port["binLookup"] = (bin) =>
    call(() => sdk.payments.cardDetails({ merchantAccount, cardNumber: bin }), timeoutMs).pipe(
      Effect.map((answer) => (answer.issuingCountryCode === undefined ? {} : { country_code: answer.issuingCountryCode })),
      Effect.catch((failure) => (failure._tag === "Rejected" ? Effect.succeed({}) : Effect.fail(unavailable(failure.reason))))
    )

  /** What a replayed answer under `key` says of the call first made with it. */
  const interpret = (key: string, answer: Record<string, unknown>, sent: Journaled["sent"] | undefined): Effect.Effect<LookupResult, Errors.ProviderUnavailable> => {
    if (typeof answer["resultCode"] === "string") {
      const outcome = authorizeOutcome(answer as PaymentAnswer, sent?.multicapture ?? false)
      if (outcome === undefined || outcome._tag === "Unknown") return Effect.fail(unavailable(`the payment's outcome is not known yet (${String(answer["resultCode"])})`))
      return Effect.succeed({ _tag: "Authorize", result: outcome })
    }
    const received = answer as ModificationAnswer & { readonly amount?: unknown }
    if (received.status !== "received" || received.pspReference === undefined || received.paymentPspReference === undefined) {
      return Effect.fail(unavailable("the key's answer is neither a payment nor a modification"))
    }
    if (received.reference === FENCE_REFERENCE && received.paymentPspReference === FENCE_PSP) {
      return Effect.as(remember("fenced", key, true), { _tag: "NotReceived" } as const)
    }
    // Without the journal's entry only a cancel (no amount) can be told apart; a capture and a refund answer alike.
    const operation = sent?.operation ?? (received.amount === undefined ? "void" : undefined)
    switch (operation) {
      case "capture":
        return Effect.succeed({ _tag: "Capture", result: { _tag: "Settling", provider_transaction_id: captureId(received.paymentPspReference, received.pspReference) } })
      case "void":
        return Effect.succeed({ _tag: "Void", result: { _tag: "Voided", provider_transaction_id: received.pspReference } })
      case "refund":
        return Effect.succeed({ _tag: "Refund", result: { _tag: "Pending", provider_transaction_id: received.pspReference } })
      default:
        return Effect.fail(unavailable("a modification was received under this key; which one, its notification will tell"))
    }
  }

  const lookup: Port["lookup"] = (key) =>
    Effect.gen(function*() {
      if (yield* isFenced(key)) return { _tag: "NotReceived" } as const
      const answer = yield* call(() => sdk.post(`/payments/${FENCE_PSP}/cancels`, { merchantAccount, reference: FENCE_REFERENCE }, key), timeoutMs).pipe(
        Effect.mapError((failure) => answers.unreachable(failure, (error) => `${error.errorCode} ${error.message}`))
      )
      if (typeof answer !== "object" || answer === null) return yield* unavailable("the lookup's answer is not a JSON object")
      return yield* interpret(key, answer as Record<string, unknown>, Option.getOrUndefined(yield* recall("sent", key)))
    })

  return {
    name: "adyen",
    mode: config.mode,
    authorizeCard, captureCard, voidCard, refund, settlement, lookup,
    // /cancels takes no amount: it cancels what the payment still has authorised. A capture Adyen
    // accepted and then failed (CAPTURE_FAILED) was not part of it: Tender cancels again.
    voidReleasesRemainder: true,
    // Adyen's payouts are another product (Balance Platform transfers) than the Checkout API.
    ...answers.cardOnly("an Adyen card channel"),
    binLookup,
    challengeReturned: (returnedTo) => {
      const url = URL.parse(returnedTo)
      const reference = url === null ? null : referenceOf(url)
      // Opaque to us: only /payments/details can tell a genuine one, so any present one is kept.
      const redirectResult = url?.searchParams.get("redirectResult") ?? null
      return reference !== null && redirectResult !== null
        ? Effect.as(remember("challenge_return", reference, redirectResult), true)
        : Effect.succeed(false)
    },
    observe: (notification) =>
      notification._tag === "Capture" || notification._tag === "Refund"
        ? remember("modification_outcome", notification.psp_reference, notification.success)
        : Effect.void
  }
}

/** The Adyen provider as the PaymentProvider service (one channel's credentials). */
export const layer = (config: AdyenProviderConfig): Layer.Layer<PaymentProvider> => Layer.succeed(PaymentProvider, makeAdyenProvider(config))
