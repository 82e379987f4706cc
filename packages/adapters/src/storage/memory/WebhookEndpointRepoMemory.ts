/**
 * Webhook endpoints in memory, with PostgreSQL's guarantees: reads scoped by account, version-checked
 * updates, and deletes that leave the endpoint's deliveries in place.
 */
import { type Webhook, WebhookEndpointRepo } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { MemoryDatabase, table } from "./MemoryDatabase.ts"
import { oldestFirst } from "./SearchMemory.ts"
import * as VersionedUpdateMemory from "./VersionedUpdateMemory.ts"

/** Also read by the delivery claim, which passes over disabled endpoints' deliveries. */
export const endpoints = table<string, Webhook.WebhookEndpoint>("webhook_endpoints")

export const layer: Layer.Layer<WebhookEndpointRepo, never, MemoryDatabase> = Layer.effect(
  WebhookEndpointRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const findAny = (id: string) => db.read((r) => Option.fromNullishOr(r.get(endpoints).get(id)))

    return WebhookEndpointRepo.of({
      insert: (endpoint, max) =>
        db.write((w) => {
          if (w.get(endpoints).has(endpoint.id)) {
            throw new Error(`WebhookEndpointRepoMemory: duplicate endpoint id ${endpoint.id}`)
          }
          // One write: the count and the insert cannot interleave with another create.
          const held = [...w.get(endpoints).values()].filter((e) => e.account_id === endpoint.account_id).length
          if (held >= max) return Result.succeed(false)
          w.mutable(endpoints).set(endpoint.id, endpoint)
          return Result.succeed(true)
        }),
      find: (accountId, id) => Effect.map(findAny(id), Option.filter((e) => e.account_id === accountId)),
      findAny,
      list: (accountId) =>
        db.read((r) => [...r.get(endpoints).values()].filter((e) => e.account_id === accountId).sort(oldestFirst)),
      update: (next) => db.write((w) => VersionedUpdateMemory.write(w, endpoints, "WebhookEndpoint", next)),
      delete: (accountId, id) =>
        db.write((w) => {
          if (w.get(endpoints).get(id)?.account_id !== accountId) return Result.succeed(false)
          w.mutable(endpoints).delete(id)
          return Result.succeed(true)
        })
    })
  })
)
