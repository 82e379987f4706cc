/**
 * The manual-capture authorization, row for row from the spec's table. The authorization closes
 * when a final capture settles, when the captured total reaches `amount`, or on void. Captures in
 * flight (accepted, not settled: `settling`) count against the remainder.
 *
 * `closing` (contract.md, Payment snapshots): a void, or a final capture that settled, while other
 * captures still settle. The rest of the hold is released; each capture in flight keeps its amount
 * and settles or fails on its own; once none is left the authorization closes `completed` (something
 * captured: `payment.succeeded`, once) or `canceled` (nothing captured: `payment.canceled`). Its
 * payment shows `settling` meanwhile; its order stays `authorized` until it closes.
 *
 * A void always ends up releasing everything not captured (spec: "always releases what remains"):
 * what a capture in flight held and then failed is released by a second void, a release, before
 * the authorization closes (`closingStep`).
 */
import { Result } from "effect"
import { apply, define, describeMove, type Machine } from "../kernel/StateMachine.ts"
import {
  CaptureAmountExceedsAuthorized,
  CaptureAmountExceedsRemaining,
  CardPaymentInProgress,
  PaymentUnexpectedState
} from "../kernel/Errors.ts"

/** A manual-capture authorization's statuses, in table order. */
export const AUTHORIZATION_STATUSES = ["authorized", "closing", "completed", "canceled"] as const
/** A manual-capture authorization's status. */
export type AuthorizationStatus = (typeof AUTHORIZATION_STATUSES)[number]

/** What moves an authorization on: captures and voids settling or refused, releases ending. */
export type AuthorizationTrigger =
  | "partial_capture_settled"
  | "final_capture_settled"
  | "capture_reached_total"
  | "capture_refused"
  | "void_nothing_captured"
  | "void_behind_captures"
  | "void_while_settling"
  | "void_behind_failed_capture"
  | "final_capture_settled_while_settling"
  | "capture_settled"
  | "release_ended"
  | "closed_behind_captures"
  | "closed_nothing_captured"

/** A manual-capture authorization's status table (captures, voids, releases). */
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
    { from: ["authorized"], trigger: "void_behind_captures", to: "completed", when: "earlier captures settled", emits: ["payment.succeeded"] },
    // contract.md, Payment snapshots: "a void while a capture is settling releases what is neither
    // captured nor settling … the settling capture keeps its amount and settles or fails on its own".
    { from: ["authorized"], trigger: "void_while_settling", to: "closing", when: "captures still settle: the void released what is neither captured nor settling" },
    // A capture in flight when the void was asked failed before the void's answer was recorded:
    // what it held is left to a release.
    { from: ["authorized"], trigger: "void_behind_failed_capture", to: "closing", when: "a capture in flight failed while the void was at the provider: a release follows" },
    { from: ["authorized"], trigger: "final_capture_settled_while_settling", to: "closing", when: "a final capture settles while other captures still settle" },
    { from: ["closing"], trigger: "capture_settled", to: "closing", when: "a capture in flight settled" },
    { from: ["closing"], trigger: "capture_refused", to: "closing", when: "a capture in flight failed; after a void, a release of what it held follows", emits: ["payment.capture_failed"] },
    { from: ["closing"], trigger: "release_ended", to: "closing", when: "a release was recorded: released, or refused by the provider" },
    { from: ["closing"], trigger: "closed_behind_captures", to: "completed", when: "no capture or release left in flight, nothing left to release, something captured", emits: ["payment.succeeded"] },
    { from: ["closing"], trigger: "closed_nothing_captured", to: "canceled", when: "no capture or release left in flight, nothing left to release, nothing captured", emits: ["payment.canceled"] }
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
  /** A final capture or a void is at the provider: no other capture or void is taken meanwhile. */
  readonly closing: boolean
  readonly settledCaptures: number
  readonly multicapture: boolean
  /** What voids released: the merchant's void once it went through, and the releases after it. */
  readonly voided: number
  /** Releases at the provider (or reserved for it). */
  readonly releasing: number
  /** Releases that will not be: refused by the provider, or given up (reconciliation's horizon). */
  readonly unreleased: number
  /** A capture the provider had accepted (settling there) failed afterwards. */
  readonly acceptedCaptureFailed: boolean
}

/** What may still be captured: the amount less what is captured and what is in flight. */
export const remaining = (book: AuthorizationBook): number => book.amount - book.captured - book.inFlight

const shown = (book: AuthorizationBook) =>
  book.status === "closing" ? "settling (closed, captures still settling)" : book.status === "authorized" ? "authorized (closing)" : book.status

const verbError = (verb: string, book: AuthorizationBook) =>
  new PaymentUnexpectedState({ message: `Cannot ${verb} a payment in status ${shown(book)}; expected authorized` })

/**
 * Pre-flight of a capture: the amount to reserve (omitted = the whole remainder). Refusals are the
 * spec's pre-flight errors; a multicapture refusal is not one of them (it is the provider's decline).
 */
export const planCapture = (
  book: AuthorizationBook,
  requested: number | undefined
): { readonly amount: number } | PaymentUnexpectedState | CaptureAmountExceedsAuthorized | CaptureAmountExceedsRemaining => {
  if (book.status !== "authorized" || book.closing) return verbError("capture", book)
  // contract.md: "A final capture while another capture settles is accepted when the amounts fit":
  // settled first, it leaves the authorization closing until the others end (captureEnded).
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

/**
 * Pre-flight of a void: what it releases (spec: "always releases what remains"), which is what is
 * neither captured nor in flight. Captures in flight keep their amounts; when they hold all that
 * remains there is nothing to release until they end.
 */
export const planVoid = (
  book: AuthorizationBook
):
  | { readonly release: number; readonly trigger: AuthorizationTrigger }
  | PaymentUnexpectedState
  | CardPaymentInProgress =>
{
  if (book.status !== "authorized" || book.closing) return verbError("void", book)
  const release = remaining(book)
  if (release <= 0) {
    return new CardPaymentInProgress({ message: "Captures still settling hold the whole authorization: nothing remains to release until they settle or fail" })
  }
  // The row it takes should nothing end before its answer is recorded.
  return { release, trigger: voidWentThrough(book, release, false).own }
}

/**
 * What a void still owes (spec: "always releases what remains"): what is neither captured, in
 * flight, released, being released nor given up. Nothing until a void went through; then positive
 * once a capture that was in flight when the void was asked failed.
 */
export const owedRelease = (book: AuthorizationBook): number =>
  book.voided === 0 ? 0 : book.amount - book.captured - book.inFlight - book.voided - book.releasing - book.unreleased

/** A release to make: `covered` when the provider's void already released it (nothing to call). */
export interface Release {
  readonly amount: number
  readonly covered: boolean
}

/**
 * A closing authorization's next step once one of its pieces ended, `book` counting that end:
 * release what a failed capture held, and close once nothing is in flight nor owed.
 *
 * `voidReleasesRemainder` (PaymentProvider): the provider's void released all it had not captured
 * when it arrived, so what a capture it never accepted held (refused, never received) went with
 * it: the release is `covered`, recorded without a call. What a capture it had accepted held may
 * still be held there (it failed afterwards): that takes a call, as on a provider whose void
 * releases only the amount asked.
 */
export const closingStep = (
  book: AuthorizationBook,
  voidReleasesRemainder: boolean
): { readonly release?: Release; readonly close?: "closed_behind_captures" | "closed_nothing_captured" } => {
  const owed = owedRelease(book)
  const release = owed > 0 ? { amount: owed, covered: voidReleasesRemainder && !book.acceptedCaptureFailed } : undefined
  const releasing = book.releasing + (release !== undefined && !release.covered ? release.amount : 0)
  if (book.inFlight > 0 || releasing > 0) return release === undefined ? {} : { release }
  const close = book.captured > 0 ? "closed_behind_captures" as const : "closed_nothing_captured" as const
  return release === undefined ? { close } : { release, close }
}

/** The rows of one piece's end: its own, then what `closingStep` decided. */
export interface EndRows {
  readonly own: AuthorizationTrigger
  readonly release?: Release
  readonly close?: "closed_behind_captures" | "closed_nothing_captured"
}

/**
 * The rows a merchant's void that went through takes, `book` not counting it: closing while
 * captures are in flight, or when one that was in flight when the void was asked failed since
 * (what it held is owed: a release).
 */
export const voidWentThrough = (book: AuthorizationBook, released: number, voidReleasesRemainder: boolean): EndRows => {
  const after: AuthorizationBook = { ...book, status: "closing", voided: released }
  if (book.inFlight === 0 && owedRelease(after) === 0) {
    return { own: book.captured > 0 ? "void_behind_captures" : "void_nothing_captured" }
  }
  return { own: book.inFlight > 0 ? "void_while_settling" : "void_behind_failed_capture", ...closingStep(after, voidReleasesRemainder) }
}

/**
 * The rows a capture's end takes — it settled, or failed (refused, or accepted and then failed:
 * `accepted`) — with `book` counting it neither as captured nor as in flight.
 */
export const captureEnded = (
  book: AuthorizationBook,
  capture: { readonly amount: number; readonly final: boolean; readonly accepted: boolean },
  settled: boolean,
  voidReleasesRemainder: boolean
): EndRows => {
  if (book.status === "closing") {
    const after: AuthorizationBook = settled
      ? { ...book, captured: book.captured + capture.amount }
      : { ...book, acceptedCaptureFailed: book.acceptedCaptureFailed || capture.accepted }
    return { own: settled ? "capture_settled" : "capture_refused", ...closingStep(after, voidReleasesRemainder) }
  }
  if (!settled) return { own: "capture_refused" }
  if (book.captured + capture.amount >= book.amount) return { own: "capture_reached_total" }
  if (capture.final) return { own: book.inFlight > 0 ? "final_capture_settled_while_settling" : "final_capture_settled" }
  return { own: "partial_capture_settled" }
}

/**
 * The rows a release's end takes — `released` by the provider, or not (refused, given up) — with
 * `book` not counting it. Either way nothing more is asked for that amount.
 */
export const releaseEnded = (book: AuthorizationBook, amount: number, released: boolean, voidReleasesRemainder: boolean): EndRows => {
  const after: AuthorizationBook = released ? { ...book, voided: book.voided + amount } : { ...book, unreleased: book.unreleased + amount }
  return { own: "release_ended", ...closingStep(after, voidReleasesRemainder) }
}

/** The authorization's move on a trigger: its next status and the events its table row emits. */
export const transition = (
  status: AuthorizationStatus,
  trigger: AuthorizationTrigger
): Result.Result<{ readonly status: AuthorizationStatus; readonly events: ReadonlyArray<string> }, PaymentUnexpectedState> =>
  Result.mapBoth(apply(AuthorizationMachine, { status, updated_at: "", version: 0 }, trigger, ""), {
    onFailure: (e) => new PaymentUnexpectedState({ message: describeMove(e) }),
    onSuccess: (m) => ({ status: m.next.status, events: m.events })
  })
