/**
 * The adapter contracts as a team's TypeScript test file calls them, type-checked (with consumer.ts,
 * `strict` and `nodenext`) against the declarations of `@tender/adapters/testing`; acme's own test
 * is acme.contract.test.mjs. Not run here: a vitest test file would call these at its top level.
 */
import { Infrastructure, PaymentProviderSandbox, SandboxLedgerMemory } from "@tender/adapters"
import { type ProviderContractCards, providerContract, storageContract } from "@tender/adapters/testing"
import { Layer } from "effect"

export const cards: ProviderContractCards = { approve: "4242424242424242", decline: "4000000000000002", declineCode: "card_declined" }

export const proveAdapters = () => {
  providerContract("sandbox", PaymentProviderSandbox.layer({ publicUrl: "https://pay.example.com" }).pipe(Layer.provide(SandboxLedgerMemory.layer)), cards)
  // Any layer providing every storage port (here Tender's own, memory).
  storageContract("memory storage", Infrastructure.layer({ storage: "memory", dataDir: ".tender" }), { timeout: "1 minute" })
}
