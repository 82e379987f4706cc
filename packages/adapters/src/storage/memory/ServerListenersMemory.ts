/**
 * Where this deployment's servers listen, in memory: memory storage lives in one process, so the
 * only server it knows is its own (ServerListeners; PostgreSQL shares it between processes).
 */
import { ServerListeners } from "@tender/domain"
import { Effect, Layer, Result } from "effect"
import { MemoryDatabase, table } from "./MemoryDatabase.ts"

const listeners = table<string, { readonly port: number; readonly seen_at: number }>("server_listeners")

export const layer: Layer.Layer<ServerListeners, never, MemoryDatabase> = Layer.effect(
  ServerListeners,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    return ServerListeners.of({
      register: (process, port, at) =>
        db.write((w) => {
          w.mutable(listeners).set(process, { port, seen_at: at.getTime() })
          return Result.succeed(undefined)
        }),
      unregister: (process) =>
        db.write((w) => {
          w.mutable(listeners).delete(process)
          return Result.succeed(undefined)
        }),
      ports: (since) =>
        db.read((r) => [...new Set([...r.get(listeners).values()].filter((row) => row.seen_at >= since.getTime()).map((row) => row.port))])
    })
  })
)
