/**
 * The optimistic write every versioned repository makes: a row lands only over the version before
 * it, and only in the account that owns it (an update never moves a row to another account).
 * Anything else is a lost race, reported as the domain's `Conflict`.
 */
import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import { staleWrite } from "../Conflicts.ts"
import { updateOrDefer } from "./WriteBehind.ts"

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
  /** Held back inside a unit of work (WriteBehind.ts): only tables whose updates run under the order's lock. */
  readonly deferred?: "orders" | "transactions"
}) => {
  const encode = Schema.encodeEffect(options.Row)
  const { deferred } = options
  return (next: A): Effect.Effect<void, ReturnType<typeof staleWrite>> =>
    Effect.flatMap(Effect.orDie(encode(next)), (row) => {
      // Every column: which ones a move changed is not known here (a row may be patched before its move).
      const columns = options.columns(row)
      const refusal = () => staleWrite(options.what, next.id, next.version - 1)
      const now = sql<{ readonly id: string }>`UPDATE ${sql(options.table)} SET ${sql.update(columns, ["id", "account_id"])}
          WHERE id = ${row.id} AND account_id = ${row.account_id} AND version = ${row.version - 1}
          RETURNING id`.pipe(
        Effect.orDie,
        Effect.flatMap((written) => written.length === 0 ? Effect.fail(refusal()) : Effect.void)
      )
      // In a unit of work the update waits for its flush (WriteBehind.ts): rows held under the order's lock.
      return deferred === undefined
        ? now
        : updateOrDefer({ table: deferred, id: row.id, accountId: row.account_id, from: row.version - 1, version: row.version, columns, refusal }, now)
    }).pipe(Effect.withSpan(`${options.what}RepoPg.update`))
}

