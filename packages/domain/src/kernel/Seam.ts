/**
 * The seam between a use case (a facade service) and its operations (docs/domain.md, "The seam").
 * A use case's layer captures the services its operations need, once, when it is built; each call
 * then runs an operation with exactly that context. `run` is typed by what was captured, so an
 * operation needing a service the use case did not capture fails to compile instead of failing at
 * run time with a missing service. The error and success types pass through as inferred.
 */
import { type Context, Effect } from "effect"

/** Runs operations needing at most `Needs` with the captured `context`. */
export const runWith = <Needs>(context: Context.Context<Needs>) => <A, E>(effect: Effect.Effect<A, E, Needs>): Effect.Effect<A, E> =>
  Effect.provideContext(effect, context)

/** Captures the services `Needs` from the layer's context and returns the use case's `run`. */
export const seam = <Needs>() => Effect.map(Effect.context<Needs>(), (context) => runWith(context))

/**
 * The errors an operation raises, as inferred: a facade's method declares these rather than the
 * whole vocabulary, so its callers see what can actually fail.
 */
export type ErrorOf<Operation extends (...args: never) => Effect.Effect<unknown, unknown, unknown>> = Effect.Error<ReturnType<Operation>>
