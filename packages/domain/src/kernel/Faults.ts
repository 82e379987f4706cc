/**
 * Fault injection points: the operations name their step boundaries (`<op>.after_reserve`,
 * `<op>.after_record`) so that crash tests can kill a real process exactly there. A reference with
 * a default that does nothing: production and embedding never provide it; the crash tests' server
 * does (packages/adapters' Faults layer, from TENDER_FAULT).
 */
import { Context, type Effect, Effect as E } from "effect"

/** Where a fault may be injected: `at` is called at each named step boundary. */
export interface FaultPoints {
  /** Called at the named step boundary: does nothing unless a crash test injects a fault there. */
  at(point: string): Effect.Effect<void>
}

/** The fault points in effect: by default none (every `at` does nothing); crash tests provide their own. */
export const Faults: Context.Reference<FaultPoints> = Context.Reference<FaultPoints>("@tender/domain/kernel/Faults", {
  defaultValue: () => ({ at: () => E.void })
})
