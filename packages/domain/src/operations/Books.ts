/** The manual-capture authorization's books, derived from the order and its transactions. */
import type { AuthorizationBook, AuthorizationStatus } from "../AuthorizationStatus.ts"
import { PaymentUnexpectedState } from "../Errors.ts"
import type { Order, Transaction } from "../Payment.ts"
import { isInFlight } from "../TransactionStatus.ts"

export interface Books {
  readonly auth: Transaction
  readonly book: AuthorizationBook
  readonly captures: ReadonlyArray<Transaction>
  /** What a void released, once one did (its transaction ended `canceled`). */
  readonly voided: number | undefined
}

/**
 * Refuses non-card or automatic payments (`payment_unexpected_state`). The authorization's status
 * follows its order's, but for `closing`: the order stays `authorized` while a void that went
 * through, or a final capture that settled, waits for captures still in flight.
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
  const voids = txns.filter((t) => t.kind === "void")
  const voided = voids.find((t) => t.status === "canceled")
  // A void at the provider closes the authorization as surely as a final capture does.
  const voiding = voids.some((t) => isInFlight(t.status))
  const closed = voided !== undefined || settled.some((t) => t.final === true)
  return {
    auth,
    captures,
    voided: voided?.amount,
    book: {
      status: order.status === "authorized" ? (closed ? "closing" : "authorized") : order.status === "succeeded" ? "completed" : "canceled",
      amount: auth.amount,
      captured: settled.reduce((s, t) => s + t.amount, 0),
      inFlight: inFlight.reduce((s, t) => s + t.amount, 0),
      closing: voiding || inFlight.some((t) => t.final === true),
      settledCaptures: settled.length,
      multicapture: auth.multicapture === true
    }
  }
}

/** The payment status a manual-capture payment shows beside its order's: `settling` while its authorization is closing. */
export const shownAs = (status: AuthorizationStatus) => (status === "closing" ? "settling" as const : undefined)
