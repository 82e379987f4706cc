/**
 * The unit of work over PostgreSQL: one `sql.withTransaction`. A nested call joins the enclosing
 * transaction outright (no savepoint), exactly as the memory unit of work does, so both behave the
 * same when an inner failure is caught and the outer work goes on.
 */
import { UnitOfWork } from "@tender/domain"
import { Effect, Layer, Option } from "effect"
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
