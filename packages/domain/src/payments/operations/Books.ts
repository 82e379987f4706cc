/** The manual-capture authorization's books, derived from the order and its transactions. */
import type { AuthorizationBook, AuthorizationStatus } from "../Authorization.ts"
import { PaymentUnexpectedState } from "../../kernel/Errors.ts"
import type { Order, Transaction } from "../Payment.ts"
import { isInFlight } from "../Transaction.ts"

export interface Books {
  readonly auth: Transaction
  readonly book: AuthorizationBook
  readonly captures: ReadonlyArray<Transaction>
  /** The merchant's void that went through (its transaction ended `canceled`), once one did. */
  readonly voided: Transaction | undefined
}

/**
 * A release: a void Tender makes itself, of what a capture in flight held when the merchant's void
 * was asked and then failed to capture (AuthorizationStatus.closingStep). It points at the void it
 * completes; the merchant's voids point at the authorization.
 */
export const isReleaseOf = (voided: Transaction | undefined) => (t: Transaction) =>
  voided !== undefined && t.kind === "void" && t.parent_transaction_id === voided.id

/**
 * Refuses non-card or automatic payments (`payment_unexpected_state`). The authorization's status
 * follows its order's, but for `closing`: the order stays `authorized` while a void that went
 * through, or a final capture that settled, waits for captures and releases still in flight.
 */
export const booksOf = (order: Order, txns: ReadonlyArray<Transaction>, verb: string): Books | PaymentUnexpectedState => {
  const auth = txns.find((t) => t.kind === "authorization" && t.status === "completed")
  if (order.capture_method !== "manual" || auth === undefined) {
    return new PaymentUnexpectedState({
      message: `Cannot ${verb} payment ${order.id}: it is ${order.payment_method === "card" ? `a ${order.capture_method}-capture payment in status ${order.status}` : `a ${order.payment_method} payment`}; expected an authorized manual-capture card payment`
    })
  }
  const captures = txns.filter((t) => t.kind === "capture" && t.parent_transaction_id === auth.id)
  const settled = captures.filter((t) => t.status === "completed")
  const inFlight = captures.filter((t) => isInFlight(t.status))
  const voids = txns.filter((t) => t.kind === "void" && t.parent_transaction_id === auth.id)
  const voided = voids.find((t) => t.status === "canceled")
  const releases = txns.filter(isReleaseOf(voided))
  // A void at the provider closes the authorization as surely as a final capture does.
  const voiding = voids.some((t) => isInFlight(t.status))
  const closed = voided !== undefined || settled.some((t) => t.final === true)
  return {
    auth,
    captures,
    voided,
    book: {
      status: order.status === "authorized" ? (closed ? "closing" : "authorized") : order.status === "succeeded" ? "completed" : "canceled",
      amount: auth.amount,
      captured: sum(settled),
      inFlight: sum(inFlight),
      closing: voiding || inFlight.some((t) => t.final === true),
      settledCaptures: settled.length,
      multicapture: auth.multicapture === true,
      voided: sum([...(voided === undefined ? [] : [voided]), ...releases.filter((t) => t.status === "canceled")]),
      releasing: sum(releases.filter((t) => isInFlight(t.status))),
      unreleased: sum(releases.filter((t) => t.status === "failed")),
      // Accepted: the provider answered it with its id (Settling); a refused one never had one.
      acceptedCaptureFailed: captures.some((t) => t.status === "failed" && t.provider_transaction_id !== null)
    }
  }
}

const sum = (txns: ReadonlyArray<Transaction>) => txns.reduce((s, t) => s + t.amount, 0)

/** The payment status a manual-capture payment shows beside its order's: `settling` while its authorization is closing. */
export const shownAs = (status: AuthorizationStatus) => (status === "closing" ? "settling" as const : undefined)
