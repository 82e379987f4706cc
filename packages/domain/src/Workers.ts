/**
 * Background workers that `tender serve` (and `tender worker`) run beside the API. Each runs until
 * its scope closes; a failed round is logged and the next round runs as usual.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { Payments } from "./Payments.ts"

const every = <A, E, R>(name: string, interval: Duration.Input, round: Effect.Effect<A, E, R>) =>
  round.pipe(
    Effect.catchCause((cause) => Effect.logError(`${name} round failed`, cause)),
    Effect.repeat(Schedule.spaced(interval)),
    Effect.forkScoped
  )

/** Settles captures the provider accepted earlier (`settling` → settled within seconds). */
export const settlement = Layer.effectDiscard(
  Effect.gen(function*() {
    const payments = yield* Payments
    yield* every("settlement", "1 second", payments.settleDue())
  })
)

export const layer = settlement
