/**
 * Where this deployment's servers listen (table `server_listeners`, migration 0032): one row per
 * `serve` process, refreshed while it runs, shared by every process of the database (ServerListeners).
 */
import { PgClient } from "@effect/sql-pg"
import { ServerListeners } from "@tender/domain"
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"

export const layer: Layer.Layer<ServerListeners, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  ServerListeners,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    return ServerListeners.of({
      register: (process, port, at) =>
        sql`INSERT INTO server_listeners (process, port, seen_at) VALUES (${process}, ${port}, ${at})
            ON CONFLICT (process) DO UPDATE SET port = EXCLUDED.port, seen_at = EXCLUDED.seen_at`.pipe(Effect.asVoid, Effect.orDie),
      unregister: (process) => sql`DELETE FROM server_listeners WHERE process = ${process}`.pipe(Effect.asVoid, Effect.orDie),
      ports: (since) =>
        sql<{ readonly port: number }>`SELECT DISTINCT port FROM server_listeners WHERE seen_at >= ${since}`.pipe(
          Effect.map((rows) => rows.map((row) => Number(row.port))),
          Effect.orDie
        )
    })
  })
)
