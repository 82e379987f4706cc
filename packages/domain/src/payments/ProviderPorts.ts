/**
 * Port: the payment provider a payment operation talks to (the sandbox, or a channel's Stripe or
 * Adyen account), with what goes in and comes back of each call. Every call carries an idempotency
 * key; `lookup` tells what became of one whose answer never got recorded (reconciliation).
 */
import { Context, type Effect } from "effect"
import type { ProviderUnavailable } from "../kernel/Errors.ts"
import type { NextAction, PaymentInstrument } from "./Payment.ts"
import type { StoredCredentialReason } from "./PaymentRequest.ts"

/** A card's number and expiry as a provider needs them to charge it. */
export interface CardDetails {
  readonly number: string
  readonly exp_month: number
  readonly exp_year: number
  /** Present for customer-present charges; merchant-initiated charges carry none. */
  readonly cvc: string | undefined
}

/** What an authorization asks of a provider (operations/Cards.ts `authorization` builds it for every flow). */
export interface AuthorizeRequest {
  readonly reference: string
  readonly idempotency_key: string
  readonly card: CardDetails
  readonly amount: number
  readonly currency: string
  /** `true` settles at once (automatic capture); `false` holds (manual capture). */
  readonly capture: boolean
  /**
   * The customer answered this attempt's 3-D Secure challenge: the authorization completes it
   * (the provider decides from the answer it holds) instead of starting a new one.
   */
  readonly authenticated: boolean
  /** With `authenticated`: the provider's id of the challenged payment (as its challenge answer named it). */
  readonly challenged?: string | undefined
  /**
   * A merchant-initiated charge on a stored card (no customer present): exempt from 3-D Secure,
   * flagged as such to the provider (Stripe `off_session`, Adyen `ContAuth`).
   */
  readonly merchant_initiated?: boolean | undefined
  /**
   * With `merchant_initiated`: why the merchant charges the stored card (the scheme's type of
   * merchant-initiated transaction), for the provider's own field (Stripe
   * `stored_credential_usage`, Adyen `recurringProcessingModel`).
   */
  readonly stored_credential_reason?: StoredCredentialReason | undefined
}

/** What a provider answered an authorization: approved, declined, or a 3-D Secure challenge first. */
export type AuthorizeResult =
  | { readonly _tag: "Approved"; readonly provider_transaction_id: string; readonly multicapture: boolean }
  | { readonly _tag: "Declined"; readonly decline_code: string; readonly provider_transaction_id: string | null }
  /** 3-D Secure: the customer must answer the issuer's challenge at `challenge_url` first. */
  | { readonly _tag: "ChallengeRequired"; readonly provider_transaction_id: string; readonly challenge_url: string }

/** What a provider answered a capture: settled, settling (answer later), or refused. */
export type CaptureResult =
  | { readonly _tag: "Settled"; readonly provider_transaction_id: string }
  | { readonly _tag: "Settling"; readonly provider_transaction_id: string }
  | { readonly _tag: "Refused"; readonly decline_code: string }

/** What a provider answered a void: voided, or refused. */
export type VoidResult =
  | { readonly _tag: "Voided"; readonly provider_transaction_id: string }
  | { readonly _tag: "Refused"; readonly decline_code: string }

/**
 * What a refund or a payout (money back out) answered: paid at once, accepted and paid later (ask
 * `settlement` with its id), or refused (nothing moved).
 */
export type PayoutResult =
  | { readonly _tag: "Paid"; readonly provider_transaction_id: string }
  | { readonly _tag: "Pending"; readonly provider_transaction_id: string }
  | { readonly _tag: "Refused"; readonly decline_code: string }

/** What a provider knows of a card's issuer from its BIN; fields it does not know are absent. */
export interface BinFacts {
  readonly country_code?: string | undefined
  readonly issuer_name?: string | undefined
  readonly card_product?: string | undefined
}

/** The provider may or may not have applied the call (timeout after sending, crash): never guessed. */
/**
 * A call that may or may not have been applied. `report`: the provider answered, with an error that
 * does not say whether it applied the call (a 5xx), and these are its words; absent when no answer
 * came (a timeout, a dropped connection).
 */
export interface Unknown { readonly _tag: "Unknown"; readonly reason: string; readonly report?: string | undefined }
/** A local-method payment started: the provider's id and what the customer must do next. */
export interface StartResult { readonly _tag: "Started"; readonly provider_transaction_id: string; readonly next_action: NextAction }
/** What a provider knows of an earlier call, by its idempotency key: never received, or that call's answer. */
export type LookupResult =
  /** The provider never received this key; the key is now fenced: a later call with it fails with ProviderUnavailable. */
  | { readonly _tag: "NotReceived" }
  | { readonly _tag: "Authorize"; readonly result: AuthorizeResult }
  | { readonly _tag: "Capture"; readonly result: CaptureResult }
  | { readonly _tag: "Void"; readonly result: VoidResult }
  | { readonly _tag: "Start"; readonly result: StartResult }
  | { readonly _tag: "Refund"; readonly result: PayoutResult }
  | { readonly _tag: "Payout"; readonly result: PayoutResult }

/** What starting a local-method payment (not a card) asks of a provider. */
export interface LocalPaymentRequest {
  /** Our transaction id. */
  readonly reference: string
  readonly idempotency_key: string
  readonly method: string
  readonly amount: number
  readonly currency: string
  readonly country: string
  readonly document_id: string | undefined
  readonly customer_ip: string | undefined
}

/**
 * Port: a payment provider. Every mutating call carries an idempotency key derived from our
 * transaction id, so a retried call never moves money twice and `lookup` can tell what became of a
 * call whose answer was lost. `ProviderUnavailable` means definitely not applied (connection
 * refused, a fenced key); a call that may have been applied answers `Unknown`.
 */
export class PaymentProvider extends Context.Service<PaymentProvider, {
  readonly name: string
  /**
   * Whose money this provider moves: test-mode accounts' (simulated) or live-mode accounts' (real).
   * The domain routes by this, never by `name` (Routing.routeFor).
   */
  readonly mode: "test" | "live"
  /**
   * The channel this provider is (ChannelProviders builds one per channel); absent for the built-in
   * sandbox. New transactions record it, so their follow-ups and reconciliation find it again.
   */
  readonly channel_id?: string | undefined
  /**
   * Test-mode providers only: the card numbers a test helper types into a card form for the
   * customer (the provider's own approved and declined cards), so the domain knows none of them.
   */
  readonly testCards?: { readonly succeed: string; readonly fail: string } | undefined
  /**
   * Set by a provider that answers in this process, over no network, and keeps its own records in
   * Tender's database inside Tender's unit of work when asked to (`ProviderRecordsInUnitOfWork`):
   * the sandbox over PostgreSQL with no simulated latency. A create or a capture on it reserves,
   * calls and records in one transaction: its records and ours commit together or not at all, so
   * a crash leaves no call in doubt (docs/decisions.md, "Hot path: database statements").
   */
  readonly answersInUnitOfWork?: boolean | undefined
  /** Authorizes a card payment: approved, declined, or a 3-D Secure challenge first. */
  authorizeCard(request: AuthorizeRequest): Effect.Effect<AuthorizeResult | Unknown, ProviderUnavailable>
  /** Captures (part of) an authorization: settled now, or settling (ask `settlement` later). */
  captureCard(request: {
    readonly reference: string
    readonly idempotency_key: string
    readonly authorization: string
    readonly amount: number
    readonly currency: string
    readonly final: boolean
    /** Captures that already settled on this authorization (multicapture check). */
    readonly previousCaptures: number
  }): Effect.Effect<CaptureResult | Unknown, ProviderUnavailable>
  /**
   * Set by a provider whose void releases all of the authorization it has not captured when the
   * void arrives, whatever `amount` says (Stripe's cancel, Adyen's /cancels). Absent: it releases
   * the `amount` asked (the sandbox). Tells Tender whether what a capture held, when that capture
   * failed after a void, went with the void (AuthorizationStatus.closingStep).
   */
  readonly voidReleasesRemainder?: boolean | undefined
  /** Releases `amount` of the authorization (or all it holds uncaptured: `voidReleasesRemainder`). */
  voidCard(request: {
    readonly reference: string
    readonly idempotency_key: string
    readonly authorization: string
    readonly amount: number
  }): Effect.Effect<VoidResult | Unknown, ProviderUnavailable>
  /**
   * Whether a `Settling` capture, or a `Pending` refund or payout, has settled, is still pending,
   * or failed at the provider after accepting it (nothing moved: a refund the bank returned, a
   * capture Adyen reports CAPTURE_FAILED).
   */
  settlement(providerTransactionId: string): Effect.Effect<"settled" | "pending" | "failed", ProviderUnavailable>
  /** Reverses (part of) one settlement: `payment` is its provider_transaction_id (a payment or a capture). */
  refund(request: {
    readonly reference: string
    readonly idempotency_key: string
    readonly payment: string
    readonly amount: number
    readonly currency: string
  }): Effect.Effect<PayoutResult | Unknown, ProviderUnavailable>
  /**
   * Sends money to an instrument: a payout to the instrument of an earlier payment, or a transfer to
   * a destination. `card` is present for a card destination (revealed from its token for this call only).
   */
  payout(request: {
    readonly reference: string
    readonly idempotency_key: string
    /** The destination's payment method code (contract.md: `bank_transfer`, `paypal`, `pix`, `card`, …). */
    readonly method: string
    readonly destination: PaymentInstrument
    readonly card: CardDetails | undefined
    readonly amount: number
    readonly currency: string
    readonly country: string
  }): Effect.Effect<PayoutResult | Unknown, ProviderUnavailable>
  /**
   * The customer came back from this provider's 3-D Secure page to Tender's return route:
   * `returnedTo` is the URL they landed on, with what the provider added (and a posted form's
   * fields), for the attempt whose provider id is `providerTransactionId`. The adapter keeps what it
   * needs for the authorization after the challenge; `false` when the return carries no answer of
   * its provider's for that attempt (forged or truncated), and nothing may be completed. Absent: the
   * provider needs nothing from the return (the sandbox's page answers the challenge itself).
   */
  readonly challengeReturned?: ((returnedTo: string, providerTransactionId: string | null) => Effect.Effect<boolean>) | undefined
  /**
   * The challenge window closed with the customer gone: make sure the payment can no longer complete
   * on the provider's page. `abandoned` when it cannot (canceled there), `completed` when it already
   * did (ask `lookup` again for the outcome). Absent: the provider moves no money without Tender's
   * own call after the return (Adyen's /payments/details), so nothing is left to stop.
   */
  readonly abandonChallenge?: ((request: { readonly provider_transaction_id: string; readonly idempotency_key: string }) => Effect.Effect<"abandoned" | "completed", ProviderUnavailable>) | undefined
  /** The issuer facts of a card's BIN (issuer country, name, product), as far as the provider knows them. */
  binLookup(bin: string): Effect.Effect<BinFacts, ProviderUnavailable>
  /** Starts a redirect, QR, voucher or bank-transfer payment: the customer's next action. */
  startPayment(request: LocalPaymentRequest): Effect.Effect<StartResult | Unknown, ProviderUnavailable>
  /** What became of the call with this idempotency key (reconciliation); fences a key never received. */
  lookup(idempotencyKey: string): Effect.Effect<LookupResult, ProviderUnavailable>
}>()("@tender/domain/PaymentProvider") {}

/**
 * True while a provider that `answersInUnitOfWork` is called inside the unit of work that reserves
 * and records its call: its records then join that transaction instead of committing on their own.
 * False everywhere else, so a provider's records never roll back with a unit of work they were not
 * meant to share.
 */
export const ProviderRecordsInUnitOfWork = Context.Reference<boolean>("@tender/domain/ProviderRecordsInUnitOfWork", {
  defaultValue: () => false
})
