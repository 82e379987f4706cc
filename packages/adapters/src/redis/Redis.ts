/**
 * One ioredis connection per process, shared by the Redis locks and rate limiter (`REDIS_URL`).
 * Its commands fail fast while Redis is unreachable instead of queueing: callers treat a failed
 * command as a defect, and a request that waits silently for Redis is worse than one that fails.
 */
import { Context, Effect, Layer } from "effect"
import { Redis as IORedis } from "ioredis"
import { causeMessage, InfrastructureError, redactUrl } from "../InfrastructureError.ts"

export class Redis extends Context.Service<Redis, IORedis>()("@tender/adapters/Redis") {
  static readonly layer = (url: string): Layer.Layer<Redis, InfrastructureError> =>
    Layer.effect(
      Redis,
      Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const client = new IORedis(url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false })
            // Without a listener ioredis prints every reconnect failure; the commands that hit the outage report it.
            client.on("error", () => undefined)
            try {
              await client.connect()
              return client
            } catch (error) {
              client.disconnect()
              throw error
            }
          },
          catch: (cause) =>
            new InfrastructureError({
              message: `could not connect to Redis at ${redactUrl(url)} (${causeMessage(cause)}): start it, or correct REDIS_URL`,
              cause
            })
        }),
        (client) => Effect.promise(() => client.quit().catch(() => client.disconnect()))
      )
    )
}
