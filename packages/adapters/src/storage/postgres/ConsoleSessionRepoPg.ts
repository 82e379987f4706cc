/** Console sessions in PostgreSQL (table `console_sessions`, migration 0046), by the hash of their token. */
import { PgClient } from "@effect/sql-pg"
import { ConsoleSessionRepo, type Operator } from "@tender/domain"
import { Effect, Layer, Option } from "effect"
import type { SqlClient } from "effect/sql"

interface Row {
  readonly token_hash: string
  readonly operator_id: string
  readonly csrf_token: string
  readonly created_at: Date
  readonly last_seen_at: Date
}

const sessionOf = (row: Row): Operator.ConsoleSession => ({
  token_hash: row.token_hash,
  operator_id: row.operator_id,
  csrf_token: row.csrf_token,
  created_at: row.created_at.toISOString(),
  last_seen_at: row.last_seen_at.toISOString()
})

export const layer: Layer.Layer<ConsoleSessionRepo, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  ConsoleSessionRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    return ConsoleSessionRepo.of({
      insert: (session) => Effect.orDie(sql`INSERT INTO console_sessions ${sql.insert({ ...session })}`),
      find: (tokenHash) =>
        sql<Row>`SELECT * FROM console_sessions WHERE token_hash = ${tokenHash}`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), sessionOf)),
          Effect.orDie
        ),
      touch: (tokenHash, lastSeenAt) =>
        Effect.orDie(sql`UPDATE console_sessions SET last_seen_at = ${lastSeenAt} WHERE token_hash = ${tokenHash}`),
      remove: (tokenHash) => Effect.orDie(sql`DELETE FROM console_sessions WHERE token_hash = ${tokenHash}`),
      removeForOperator: (operatorId) => Effect.orDie(sql`DELETE FROM console_sessions WHERE operator_id = ${operatorId}`),
      // No index on the times: the table holds the sessions of the last 12 h at most once swept (a
      // few per operator), so a scan costs less than an index every login and touch would maintain.
      removeExpired: ({ createdBefore, lastSeenBefore, limit }) =>
        sql<{ readonly n: number }>`WITH gone AS (
              DELETE FROM console_sessions WHERE token_hash IN (
                SELECT token_hash FROM console_sessions
                WHERE last_seen_at < ${lastSeenBefore} OR created_at < ${createdBefore}
                LIMIT ${limit}
                FOR UPDATE SKIP LOCKED
              )
              RETURNING 1
            )
            SELECT count(*)::int AS n FROM gone`.pipe(
          Effect.map(([row]) => row!.n),
          Effect.orDie,
          Effect.withSpan("ConsoleSessionRepoPg.removeExpired")
        )
    })
  })
)
