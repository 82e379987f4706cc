/**
 * The sandbox ledger in this process's memory (memory storage): a map, claimed synchronously, so
 * it is atomic without a lock. It dies with the process, as everything under memory storage does.
 */
import { Effect, Layer } from "effect"
import { type Entry, SandboxLedger } from "./SandboxLedger.ts"

export const make = (): SandboxLedger["Service"] => {
  const entries = new Map<string, Entry>()
  return SandboxLedger.of({
    claim: (key, entry) =>
      Effect.sync(() => {
        const held = entries.get(key)
        if (held !== undefined) return held
        entries.set(key, entry)
        return entry
      }),
    // The map is not part of the memory database's transactions: a rollback there would keep its
    // entries, so the sandbox over it calls and records in separate steps.
    joinsUnitOfWork: false
  })
}

export const layer: Layer.Layer<SandboxLedger> = Layer.sync(SandboxLedger, make)
