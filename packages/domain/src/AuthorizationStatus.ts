/**
 * The manual-capture authorization, row for row from the spec's table. The authorization closes
 * when a final capture settles, when the captured total reaches `amount`, or on void. Captures in
 * flight (accepted, not settled: `settling`) count against the remainder.
 */
import { Result } from "effect"
import { apply, define, describeMove, type Machine } from "./StateMachine.ts"
import {
  CaptureAmountExceedsAuthorized,
  CaptureAmountExceedsRemaining,
  CardPaymentInProgress,
  PaymentUnexpectedState
} from "./Errors.ts"

export const AUTHORIZATION_STATUSES = ["authorized", "completed", "canceled"] as const
export type AuthorizationStatus = (typeof AUTHORIZATION_STATUSES)[number]

export type AuthorizationTrigger =
  | "partial_capture_settled"
  | "final_capture_settled"
  | "capture_reached_total"
  | "capture_refused"
  | "void_nothing_captured"
  | "void_behind_captures"

export const AuthorizationMachine: Machine<AuthorizationStatus, AuthorizationTrigger> = define({
  name: "Manual-capture authorization",
  states: AUTHORIZATION_STATUSES,
  finals: ["completed", "canceled"],
  transitions: [
    { from: ["authorized"], trigger: "partial_capture_settled", to: "authorized", when: "capture with final: false settles", emits: ["payment.partially_captured"] },
    { from: ["authorized"], trigger: "final_capture_settled", to: "completed", when: "capture (final true or omitted) settles", emits: ["payment.succeeded"] },
    { from: ["authorized"], trigger: "capture_reached_total", to: "completed", when: "the captured total reaches the authorized amount", emits: ["payment.succeeded"] },
    { from: ["authorized"], trigger: "capture_refused", to: "authorized", when: "the provider refuses; the capture returns failed", emits: ["payment.capture_failed"] },
    { from: ["authorized"], trigger: "void_nothing_captured", to: "canceled", emits: ["payment.canceled"] },
    { from: ["authorized"], trigger: "void_behind_captures", to: "completed", when: "earlier captures settled", emits: ["payment.succeeded"] }
  ]
})

/** The authorization's money, in minor units. */
export interface AuthorizationBook {
  readonly status: AuthorizationStatus
  readonly amount: number
  /** Settled captures. */
  readonly captured: number
  /** Captures accepted or sent, not settled yet. */
  readonly inFlight: number
  /** A final capture is in flight: the authorization is closing. */
  readonly closing: boolean
  readonly settledCaptures: number
  readonly multicapture: boolean
}

export const remaining = (book: AuthorizationBook): number => book.amount - book.captured - book.inFlight

const verbError = (verb: string, book: AuthorizationBook) =>
  new PaymentUnexpectedState({
    message: `Cannot ${verb} a payment in status ${book.status === "authorized" ? "authorized (closing)" : book.status}; expected authorized`
  })

/**
 * Pre-flight of a capture: the amount to reserve (omitted = the whole remainder). Refusals are the
 * spec's pre-flight errors; a multicapture refusal is not one of them (it is the provider's decline).
 */
export const planCapture = (
  book: AuthorizationBook,
  requested: number | undefined
): { readonly amount: number } | PaymentUnexpectedState | CaptureAmountExceedsAuthorized | CaptureAmountExceedsRemaining => {
  if (book.status !== "authorized" || book.closing) return verbError("capture", book)
  const left = remaining(book)
  if (requested === undefined) {
    return left > 0 ? { amount: left } : new CaptureAmountExceedsRemaining({ message: "Nothing remains to capture (captures in flight count)" })
  }
  if (requested <= 0 || requested > book.amount) {
    return new CaptureAmountExceedsAuthorized({ message: "The capture amount must be positive and at most the authorized amount" })
  }
  if (requested > left) {
    return new CaptureAmountExceedsRemaining({ message: `The capture amount exceeds the uncaptured remainder (${left} minor units, captures in flight included)` })
  }
  return { amount: requested }
}

/** Pre-flight of a void: what it would release. Captures still in flight must settle first. */
export const planVoid = (
  book: AuthorizationBook
): { readonly release: number; readonly trigger: "void_nothing_captured" | "void_behind_captures" } | PaymentUnexpectedState | CardPaymentInProgress => {
  if (book.status !== "authorized" || book.closing) return verbError("void", book)
  if (book.inFlight > 0) {
    return new CardPaymentInProgress({ message: "A capture for this payment is still settling; void it once the capture settles" })
  }
  return { release: book.amount - book.captured, trigger: book.captured > 0 ? "void_behind_captures" : "void_nothing_captured" }
}

/** Which row a settled capture takes. */
export const settledTrigger = (
  book: AuthorizationBook,
  captureAmount: number,
  final: boolean
): "partial_capture_settled" | "final_capture_settled" | "capture_reached_total" =>
  book.captured + captureAmount >= book.amount ? "capture_reached_total" : final ? "final_capture_settled" : "partial_capture_settled"

/** The authorization's move on a trigger: its next status and the events its table row emits. */
export const transition = (
  status: AuthorizationStatus,
  trigger: AuthorizationTrigger
): Result.Result<{ readonly status: AuthorizationStatus; readonly events: ReadonlyArray<string> }, PaymentUnexpectedState> =>
  Result.mapBoth(apply(AuthorizationMachine, { status, updated_at: "", version: 0 }, trigger, ""), {
    onFailure: (e) => new PaymentUnexpectedState({ message: describeMove(e) }),
    onSuccess: (m) => ({ status: m.next.status, events: m.events })
  })
