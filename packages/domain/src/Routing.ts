/**
 * Which provider may carry an account's money. A provider serves one mode: a live account's payment,
 * session or transfer must never reach a test provider (the sandbox would "pay" it with no money
 * moved), nor a test account's a live one. contract.md, Providers: a live account with no live
 * channel gets `payment_unroutable` for payments, sessions and transfers alike.
 */
import { PaymentUnroutable } from "./Errors.ts"

/** The refusal when `provider` does not serve the account's mode; `undefined` when it may carry it. */
export const routeFor = (
  provider: { readonly mode: "test" | "live" },
  livemode: boolean
): PaymentUnroutable | undefined =>
  provider.mode === (livemode ? "live" : "test")
    ? undefined
    : new PaymentUnroutable({
      message: livemode
        ? "No live provider is configured for this account"
        : "No test provider is configured for this account"
    })
