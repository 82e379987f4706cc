/**
 * The provider port's contract (@tender/adapters/testing, the suite a team runs over its own
 * provider adapter) proven on a real adapter: the sandbox, over its memory ledger, as
 * Infrastructure.provider builds it.
 */
import { Layer } from "effect"
import * as PaymentProviderSandbox from "../src/providers/sandbox/PaymentProviderSandbox.ts"
import * as SandboxLedgerMemory from "../src/providers/sandbox/SandboxLedgerMemory.ts"
import { providerContract } from "../src/testing/ProviderContract.ts"

const sandbox = PaymentProviderSandbox.layer({ publicUrl: "https://tender.test" }).pipe(Layer.provide(SandboxLedgerMemory.layer))

providerContract("the sandbox provider", sandbox, {
  approve: "4242424242424242",
  decline: "4000000000009995",
  declineCode: "insufficient_funds"
})
