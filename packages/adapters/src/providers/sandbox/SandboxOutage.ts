/**
 * A simulated outage of the built-in sandbox: the calls it names fail as a refused connection does
 * (ProviderUnavailable: nothing applied, nothing in the ledger), so that the retry after a 502
 * (contract.md, Idempotency) can be rehearsed where no card number or destination makes the sandbox
 * unreachable, as for transfers. Read per call, like the fault points: a process takes it from
 * `TENDER_SANDBOX_UNREACHABLE` (a comma list of the operations below); a test may provide a switch
 * of its own. Default: none.
 */
import { Context, Effect, Layer } from "effect"
import { InfrastructureError } from "../../InfrastructureError.ts"
import type { Operation } from "./SandboxLedger.ts"

export interface Outage {
  readonly unreachable: (operation: Operation) => boolean
}

export const SandboxOutage: Context.Reference<Outage> = Context.Reference<Outage>("@tender/adapters/SandboxOutage", {
  defaultValue: () => ({ unreachable: () => false })
})

const OPERATIONS: ReadonlyArray<Operation> = ["authorize", "capture", "void", "start", "refund", "payout"]

/** The outage of `TENDER_SANDBOX_UNREACHABLE` (`config.sandboxUnreachable`); an unknown operation fails the start. */
export const layer = (operations: ReadonlyArray<string> | undefined): Layer.Layer<never, InfrastructureError> => {
  if (operations === undefined || operations.length === 0) return Layer.empty
  const unknown = operations.filter((name) => !(OPERATIONS as ReadonlyArray<string>).includes(name))
  if (unknown.length > 0) {
    return Layer.effectDiscard(Effect.fail(
      new InfrastructureError({ message: `TENDER_SANDBOX_UNREACHABLE names ${unknown.join(", ")}; the sandbox's operations are ${OPERATIONS.join(", ")}` })
    ))
  }
  const down = new Set<string>(operations)
  return Layer.succeed(SandboxOutage, { unreachable: (operation) => down.has(operation) })
}
