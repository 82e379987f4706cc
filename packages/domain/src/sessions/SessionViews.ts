/**
 * What the hosted checkout page shows of a session (its API view, `sessionView`, lives with the
 * session record: its events carry it too).
 */
import type { Account, ThreeDsDisplayMode } from "../accounts/Account.ts"
import type { Transaction } from "../payments/Payment.ts"
import { findMethod, homeCountry, type PaymentMethod, PAYMENT_METHODS, routable } from "../payments/PaymentMethods.ts"
import { latestAttempt } from "../payments/Transaction.ts"
import type { CheckoutSession } from "./CheckoutSession.ts"

/** What the hosted page needs to render a session. */
export interface HostedView {
  readonly session: CheckoutSession
  readonly merchant_name: string
  readonly methods: ReadonlyArray<PaymentMethod>
  readonly attempts_left: number
  readonly last_decline: string | null
  /** The card element on the page is the account's: its publishable key and 3-D Secure display mode. */
  readonly publishable_key: string
  readonly three_ds_display_mode: ThreeDsDisplayMode
}

/** The methods the page offers: the session's (or every one), as far as they route for its country and currency. */
export const offeredMethods = (session: Pick<CheckoutSession, "payment_methods" | "country" | "currency">): ReadonlyArray<PaymentMethod> => {
  const country = session.country ?? homeCountry(session.currency)
  return (session.payment_methods ?? PAYMENT_METHODS.map((m) => m.code))
    .map((code) => findMethod(code)!)
    .filter((m) => routable(m, country, session.currency))
}

/** Pure: the page's view of a session, from its account and the attempts under its order. */
export const hostedViewOf = (
  session: CheckoutSession,
  account: Pick<Account, "name" | "publishable_key" | "three_ds_display_mode">,
  attempts: ReadonlyArray<Transaction>
): HostedView => {
  const last = latestAttempt(attempts)
  return {
    session,
    merchant_name: account.name,
    publishable_key: account.publishable_key,
    three_ds_display_mode: account.three_ds_display_mode,
    methods: offeredMethods(session),
    attempts_left: Math.max(0, session.max_payment_attempts - session.attempts),
    last_decline: last !== undefined && (last.status === "failed" || last.status === "canceled") ? last.decline_code : null
  }
}
