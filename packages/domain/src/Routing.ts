/**
 * Which accounts a provider may serve (contract.md, Providers): test-mode accounts use the sandbox,
 * live-mode accounts only live providers. Live money never reaches the sandbox on any path.
 */
import { PaymentUnroutable } from "./Errors.ts"

export const routeFor = (provider: { readonly mode: "test" | "live" }, livemode: boolean): PaymentUnroutable | undefined =>
  (provider.mode === "live") === livemode
    ? undefined
    : new PaymentUnroutable({ message: livemode ? "No live provider is configured for this account" : "No test-mode provider is configured for this account" })
