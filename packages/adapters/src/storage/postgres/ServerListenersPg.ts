/**
 * Where this deployment's servers listen (table `server_listeners`, migrations 0032 and 0034): one row
 * per `serve` process, refreshed while it runs, shared by every process of the database
 * (ServerListeners). `seen_at` is the database's `now()`, and freshness is judged against it: the
 * processes' clocks may disagree, the database's is one.
 *
 * Every webhook delivery's check reads where the servers listen, so the list is kept in process
 * (issue 24), forgotten when a server starts listening, listens elsewhere or stops (migration
 * 0043's notice, NotifiedCache.ts) and read again at least every LIST_MAX_AGE_MS, so that servers
 * gone quiet drop out (until then the list only refuses a place more).
 */
import { PgClient } from "@effect/sql-pg"
import { ServerListeners } from "@tender/domain"
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { CHANNEL } from "./migrations/0043_listener_changes.ts"
import * as NotifiedCache from "./NotifiedCache.ts"

const LIST_MAX_AGE_MS = 1_000

type Listening = ReadonlyArray<{ readonly port: number; readonly addresses: ReadonlyArray<string> }>

export const layer: Layer.Layer<ServerListeners, never, SqlClient.SqlClient | PgClient.PgClient | NotifiedCache.Listener> = Layer.effect(
  ServerListeners,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    // Keyed by the staleness bound asked for (one in practice).
    const cache = yield* NotifiedCache.make<number, Listening>({ channel: CHANNEL, capacity: 4, maxAgeMs: LIST_MAX_AGE_MS })
    const olderThan = (staleMs: number) => sql`seen_at < now() - make_interval(secs => ${staleMs / 1000})`
    return ServerListeners.of({
      register: (process, listener, staleMs) =>
        cache.change(undefined,
        // The rows of processes gone without a word go with anyone's beat (not this process's own: one statement touches a row once).
        sql`WITH gone AS (DELETE FROM server_listeners WHERE ${olderThan(staleMs)} AND process <> ${process})
            INSERT INTO server_listeners (process, port, addresses, seen_at)
            VALUES (${process}, ${listener.port}, ${[...listener.addresses]}::text[], now())
            ON CONFLICT (process) DO UPDATE SET port = EXCLUDED.port, addresses = EXCLUDED.addresses, seen_at = EXCLUDED.seen_at`
          .pipe(Effect.asVoid, Effect.orDie)),
      unregister: (process) => cache.change(undefined, sql`DELETE FROM server_listeners WHERE process = ${process}`.pipe(Effect.asVoid, Effect.orDie)),
      listening: (staleMs) =>
        cache.read(
          staleMs,
          sql<{ readonly port: number; readonly addresses: ReadonlyArray<string> }>`
          SELECT port, addresses FROM server_listeners WHERE NOT ${olderThan(staleMs)}`.pipe(
            Effect.map((rows) => rows.map((row) => ({ port: Number(row.port), addresses: row.addresses }))),
            Effect.orDie
          )
        )
    })
  })
)
