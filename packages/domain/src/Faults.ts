/**
 * Port: named points in the code where a test may crash the process (fault injection). Production
 * composes `Faults.none`; the crash tests compose an adapter that kills the process on the n-th time
 * a chosen point is reached, to prove that every step boundary recovers.
 *
 * Points: `<op>.after_reserve` and `<op>.after_record` in the payment operations (op: create,
 * capture, void, attempt); `provider.<op>.received` and `provider.<op>.applied` in the sandbox
 * provider (op: authorize, capture, void, start).
 */
import { Context, Effect, Layer } from "effect"

export class Faults extends Context.Service<Faults, {
  /** Marks that `point` was reached; returns normally unless a fault is armed there. */
  at(point: string): Effect.Effect<void>
}>()("@tender/domain/Faults") {
  /** No faults: every point is a no-op. */
  static readonly none: Layer.Layer<Faults> = Layer.succeed(Faults, Faults.of({ at: () => Effect.void }))
}
