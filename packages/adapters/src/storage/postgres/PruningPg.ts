/**
 * Pruning in PostgreSQL (issue 24): batched deletes, each batch one autocommitted statement, so no
 * lock outlives a batch and payments never wait behind a long delete. The rule is the domain's
 * (Retention.ts); the statement carries it out:
 *
 *   candidates  the oldest `limit` events before the cutoff, after the last batch's last one
 *               (`events_created_idx`, read backwards, from the cursor on);
 *   going       their deliveries that may go (finished, no lease, last written before the cutoff),
 *               locked (`webhook_deliveries_event_idx`). A row a retry changed meanwhile is judged
 *               again as it is now (READ COMMITTED re-checks a locked row), so a delivery made owed
 *               again stays, and its event with it;
 *   attempts, gone   the attempts of those deliveries (`webhook_attempts_delivery_idx`), and the
 *               deliveries themselves;
 *   theirs, owed, dropped   every delivery of the candidates (as the statement began), those not
 *               going (owed, inside the retention, or changed since the snapshot), and each
 *               candidate with none of those. The foreign keys are checked at the statement's end, when
 *               children and parents are gone together.
 *
 * Cursor times travel as PostgreSQL's own text: seeded or imported rows may carry microseconds,
 * which an ISO string in milliseconds would round away.
 *
 * Expired replay-cache rows (ReplayCachePg.ts) go here too, in batches through their expiry index:
 * one home for what storage removes.
 */
import { PgClient } from "@effect/sql-pg"
import { Pruning, Retention } from "@tender/domain"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { outsideUnitOfWork } from "./UnitOfWorkPg.ts"

interface BatchRow {
  readonly scanned: number
  readonly events: number
  readonly deliveries: number
  readonly attempts: number
  readonly last_at: string | null
  readonly last_id: string | null
}

export const layer: Layer.Layer<Pruning, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  Pruning,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    // A batch commits on its own: never inside, or rolled back with, a caller's transaction.
    const outside = outsideUnitOfWork(yield* SqlClient.SqlClient)
    const finished = [...Retention.FINISHED_STATUSES]

    return Pruning.of({
      pruneEvents: ({ after, before, limit }) => {
        const from = after === undefined
          ? sql``
          : sql`AND (e.created_at, e.id) > (${after.created_at}::timestamptz, ${after.id})`
        // Each set travels on as an array (`= ANY`): every probe is then an index scan per id,
        // where a join of a thousand rows may be planned as a hash over a whole table.
        return sql<BatchRow>`WITH candidates AS (
              SELECT e.id, e.created_at FROM events e
              WHERE e.created_at < ${before}::timestamptz ${from}
              ORDER BY e.created_at, e.id
              LIMIT ${limit}
            ), chosen AS (
              SELECT ARRAY(SELECT id FROM candidates) AS ids
            ), going AS MATERIALIZED (
              SELECT d.id FROM webhook_deliveries d
              WHERE d.event_id = ANY((SELECT ids FROM chosen)::text[])
                AND d.status = ANY(${finished}) AND d.lease_token IS NULL AND d.updated_at < ${before}::timestamptz
              FOR UPDATE
            ), doomed AS (
              SELECT ARRAY(SELECT id FROM going) AS ids
            ), attempts AS (
              DELETE FROM webhook_attempts a WHERE a.delivery_id = ANY((SELECT ids FROM doomed)::text[]) RETURNING 1
            ), gone AS (
              DELETE FROM webhook_deliveries d WHERE d.id = ANY((SELECT ids FROM doomed)::text[]) RETURNING 1
            ), theirs AS MATERIALIZED (
              SELECT d.id, d.event_id FROM webhook_deliveries d WHERE d.event_id = ANY((SELECT ids FROM chosen)::text[])
            ), owed AS (
              -- An anti-join (hashed): "<> ALL" of the array would compare every pair, a million a batch.
              SELECT t.event_id FROM theirs t WHERE NOT EXISTS (SELECT 1 FROM going g WHERE g.id = t.id)
            ), dropped AS (
              DELETE FROM events e
              WHERE e.id = ANY(ARRAY(SELECT id FROM candidates EXCEPT SELECT event_id FROM owed))
              RETURNING 1
            ), newest AS (
              SELECT max(created_at) AS at FROM candidates
            )
            SELECT (SELECT count(*) FROM candidates)::int AS scanned, (SELECT count(*) FROM dropped)::int AS events,
              (SELECT count(*) FROM gone)::int AS deliveries, (SELECT count(*) FROM attempts)::int AS attempts,
              (SELECT at::text FROM newest) AS last_at,
              (SELECT max(c.id) FROM candidates c WHERE c.created_at = (SELECT at FROM newest)) AS last_id`.pipe(
          outside,
          Effect.map(([row]) => ({
            events: row.events,
            deliveries: row.deliveries,
            attempts: row.attempts,
            scanned: row.scanned,
            last: row.last_at === null || row.last_id === null ? undefined : { created_at: row.last_at, id: row.last_id }
          })),
          Effect.orDie,
          Effect.withSpan("PruningPg.pruneEvents")
        )
      },
      pruneExpired: (limit) =>
        sql<{ readonly n: number }>`WITH gone AS (
              DELETE FROM replay_signatures r
              WHERE (r.account_id, r.digest) IN (
                SELECT s.account_id, s.digest FROM replay_signatures s
                WHERE s.expires_at < now()
                ORDER BY s.expires_at
                LIMIT ${limit}
                FOR UPDATE SKIP LOCKED
              ) AND r.expires_at < now()
              RETURNING 1
            )
            SELECT count(*)::int AS n FROM gone`.pipe(
          outside,
          Effect.map(([row]) => row.n),
          Effect.orDie,
          Effect.withSpan("PruningPg.pruneExpired")
        )
    })
  })
)
