/**
 * The optimistic write every versioned repository makes: a row lands only over the version before
 * it, and only in the account that owns it (an update never moves a row to another account).
 * Anything else is a lost race, reported as the domain's `Conflict`.
 */
import { Effect, Schema } from "effect"
import { type SqlClient, SqlSchema } from "effect/sql"
import { staleWrite } from "../Conflicts.ts"

interface Owned {
  readonly id: string
  readonly account_id: string
  readonly version: number
}

export const make = <A extends Owned, I extends Owned>(sql: SqlClient.SqlClient, options: {
  readonly table: "orders" | "transactions" | "webhook_endpoints" | "checkout_sessions" | "refunds" | "payouts" | "transfers"
  /** The record's name in the conflict message and the span. */
  readonly what: string
  readonly Row: Schema.Codec<A, I>
  /** The encoded row as columns (jsonb values wrapped). */
  readonly columns: (row: I) => Record<string, unknown>
}) => {
  const write = SqlSchema.findAll({
    Request: options.Row,
    Result: Schema.Struct({ id: Schema.String }),
    execute: (row) =>
      sql`UPDATE ${sql(options.table)} SET ${sql.update(options.columns(row), ["id", "account_id"])}
          WHERE id = ${row.id} AND account_id = ${row.account_id} AND version = ${row.version - 1}
          RETURNING id`
  })
  return (next: A): Effect.Effect<void, ReturnType<typeof staleWrite>> =>
    write(next).pipe(
      Effect.orDie,
      Effect.flatMap((written) =>
        written.length === 0 ? Effect.fail(staleWrite(options.what, next.id, next.version - 1)) : Effect.void
      ),
      Effect.withSpan(`${options.what}RepoPg.update`)
    )
}
