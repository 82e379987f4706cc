/**
 * Routing rules in memory (RoutingRulesRepo): every version of each (account, profile), as
 * PostgreSQL keeps them (migration 0049). A put is one write of the database, so concurrent puts
 * take distinct versions, and a put inside a unit of work lands with it or not at all.
 */
import { RoutingRulesRepo } from "@tender/domain/channels/RoutingPorts"
import type { StoredRules } from "@tender/domain/channels/RoutingModel"
import { Effect, Layer, Option, Result } from "effect"
import { MemoryDatabase, table } from "./MemoryDatabase.ts"

/** Versions by (account, profile), the oldest first; the key is `account_id` NUL `profile` ('' for none, as in PostgreSQL). */
const routingRules = table<string, ReadonlyArray<StoredRules>>("routing_rules")

const keyOf = (accountId: string, profile: string | null) => `${accountId}\u0000${profile ?? ""}`

export const layer: Layer.Layer<RoutingRulesRepo, never, MemoryDatabase> = Layer.effect(
  RoutingRulesRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    return RoutingRulesRepo.of({
      put: (input) =>
        db.write((w) => {
          const key = keyOf(input.account_id, input.profile)
          const versions = w.get(routingRules).get(key) ?? []
          const stored: StoredRules = { ...input, version: versions.length + 1 }
          w.mutable(routingRules).set(key, [...versions, stored])
          return Result.succeed(stored)
        }),
      current: (accountId, profile) =>
        db.read((r) => Option.fromNullishOr(r.get(routingRules).get(keyOf(accountId, profile))?.at(-1)))
    })
  })
)
