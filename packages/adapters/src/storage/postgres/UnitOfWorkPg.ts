/**
 * The unit of work over PostgreSQL: one `sql.withTransaction`. A nested call joins the enclosing
 * transaction outright (no savepoint), exactly as the memory unit of work does, so both behave the
 * same when an inner failure is caught and the outer work goes on.
 */
import { UnitOfWork } from "@tender/domain"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient, SqlError } from "effect/sql"

export const layer: Layer.Layer<UnitOfWork, never, SqlClient.SqlClient> = Layer.effect(
  UnitOfWork,
  Effect.map(SqlClient.SqlClient, (sql) =>
    UnitOfWork.of({
      transaction: (effect) =>
        Effect.flatMap(Effect.serviceOption(sql.transactionService), (open) =>
          Option.isSome(open)
            ? effect
            // BEGIN or COMMIT failing is storage failure: a defect, like every other SqlError here.
            : sql.withTransaction(effect).pipe(Effect.catchIf(SqlError.isSqlError, Effect.die)))
    }))
)

/**
 * Runs `effect` outside the caller's transaction: its statements go to pool connections and commit
 * at once. For a provider's own records (the sandbox ledger, the provider journal), which a rollback
 * of Tender's unit of work must not undo: what went to the provider went.
 */
export const outsideUnitOfWork = (sql: SqlClient.SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.updateContext(effect, (context: Context.Context<R>) => Context.omit(sql.transactionService)(context) as Context.Context<R>)
