/**
 * Where this deployment's servers listen (table `server_listeners`, migrations 0032 and 0034): one row
 * per `serve` process, refreshed while it runs, shared by every process of the database
 * (ServerListeners). `seen_at` is the database's `now()`, and freshness is judged against it: the
 * processes' clocks may disagree, the database's is one.
 */
import { PgClient } from "@effect/sql-pg"
import { ServerListeners } from "@tender/domain"
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"

export const layer: Layer.Layer<ServerListeners, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  ServerListeners,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const olderThan = (staleMs: number) => sql`seen_at < now() - make_interval(secs => ${staleMs / 1000})`
    return ServerListeners.of({
      register: (process, listener, staleMs) =>
        // The rows of processes gone without a word go with anyone's beat (not this process's own: one statement touches a row once).
        sql`WITH gone AS (DELETE FROM server_listeners WHERE ${olderThan(staleMs)} AND process <> ${process})
            INSERT INTO server_listeners (process, port, addresses, seen_at)
            VALUES (${process}, ${listener.port}, ${[...listener.addresses]}::text[], now())
            ON CONFLICT (process) DO UPDATE SET port = EXCLUDED.port, addresses = EXCLUDED.addresses, seen_at = EXCLUDED.seen_at`
          .pipe(Effect.asVoid, Effect.orDie),
      unregister: (process) => sql`DELETE FROM server_listeners WHERE process = ${process}`.pipe(Effect.asVoid, Effect.orDie),
      listening: (staleMs) =>
        sql<{ readonly port: number; readonly addresses: ReadonlyArray<string> }>`
          SELECT port, addresses FROM server_listeners WHERE NOT ${olderThan(staleMs)}`.pipe(
          Effect.map((rows) => rows.map((row) => ({ port: Number(row.port), addresses: row.addresses }))),
          Effect.orDie
        )
    })
  })
)
