/**
 * The provider journal in this process's memory: a map. It dies with the process, as everything
 * under memory storage does; the PostgreSQL journal is the one that survives a restart and is
 * shared between processes.
 */
import { Effect, Layer, Option } from "effect"
import { ProviderJournal, WRITES } from "./ProviderJournal.ts"

export const make = (): ProviderJournal["Service"] => {
  const entries = new Map<string, string>()
  // JSON of the triple: no separator a scope or key could contain can make two triples collide.
  const at = (scope: string, kind: string, key: string) => JSON.stringify([scope, kind, key])
  return ProviderJournal.of({
    remember: (scope, kind, key, value) =>
      Effect.sync(() => {
        const entry = at(scope, kind, key)
        if (WRITES[kind] === "first" && entries.has(entry)) return
        // Stored as JSON text and parsed on the way out, as the database does: the caller gets a copy.
        entries.set(entry, JSON.stringify(value))
      }),
    recall: (scope, kind, key) =>
      Effect.sync(() => {
        const stored = entries.get(at(scope, kind, key))
        return stored === undefined ? Option.none() : Option.some(JSON.parse(stored) as unknown)
      })
  })
}

export const layer: Layer.Layer<ProviderJournal> = Layer.sync(ProviderJournal, make)
