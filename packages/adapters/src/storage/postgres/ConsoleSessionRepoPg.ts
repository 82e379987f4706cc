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
      removeForOperator: (operatorId) => Effect.orDie(sql`DELETE FROM console_sessions WHERE operator_id = ${operatorId}`)
    })
  })
)
