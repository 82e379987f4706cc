/**
 * Where this deployment's servers listen, in memory: memory storage lives in one process, so the
 * only server it knows is its own, and its clock is the one clock (ServerListeners; PostgreSQL
 * shares it between processes).
 */
import { type Listener, ServerListeners } from "@tender/domain"
import { Clock, Effect, Layer, Result } from "effect"
import { MemoryDatabase, table } from "./MemoryDatabase.ts"

const listeners = table<string, Listener & { readonly seen_at: number }>("server_listeners")

export const layer: Layer.Layer<ServerListeners, never, MemoryDatabase> = Layer.effect(
  ServerListeners,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    return ServerListeners.of({
      register: (process, listener, staleMs) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          db.write((w) => {
            const rows = w.mutable(listeners)
            for (const [key, row] of rows) if (row.seen_at < now - staleMs) rows.delete(key)
            rows.set(process, { port: listener.port, addresses: [...listener.addresses], seen_at: now })
            return Result.succeed(undefined)
          })),
      unregister: (process) =>
        db.write((w) => {
          w.mutable(listeners).delete(process)
          return Result.succeed(undefined)
        }),
      listening: (staleMs) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          db.read((r) =>
            [...r.get(listeners).values()].filter((row) => row.seen_at >= now - staleMs).map(({ port, addresses }) => ({ port, addresses }))
          ))
    })
  })
)
