/**
 * The server's stop as a signal handlers may race against (the event feed's waiting read). Given
 * by the edge that serves (Server.layer, the test server), so that no handler installs process
 * signal handlers of its own: an embedding host decides what stops the server.
 */
import { Context, Deferred, Effect, Layer } from "effect"

/**
 * Done once the server begins to stop, before it waits for the requests in flight: a handler that
 * may hold a request long (the event feed's wait, up to 25 s) answers at once on it rather than
 * holding the graceful stop. The edge that serves provides it (`stoppable`), not the handlers.
 */
export class Stopping extends Context.Service<Stopping, { readonly signalled: Effect.Effect<void> }>()("@tender/http/Stopping") {}

/**
 * Serves with a Stopping signal: completed by a finalizer that runs before the serving layer's own
 * (layers release in the reverse of their building order, and this one is built after it), whose
 * first step is the HTTP server's drain.
 */
export const stoppable = <A, E, R>(serving: Layer.Layer<A, E, R>): Layer.Layer<A, E, Exclude<R, Stopping>> =>
  Layer.unwrap(Effect.gen(function*() {
    const stopping = yield* Deferred.make<void>()
    const announce = Layer.effectDiscard(Effect.addFinalizer(() => Deferred.succeed(stopping, undefined)))
    return announce.pipe(Layer.provideMerge(serving), Layer.provide(Layer.succeed(Stopping, { signalled: Deferred.await(stopping) })))
  }))

