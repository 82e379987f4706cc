/**
 * The unit of work over PostgreSQL: one transaction on a reserved connection. A nested call joins the
 * enclosing transaction outright (no savepoint), exactly as the memory unit of work does, so both
 * behave the same when an inner failure is caught and the outer work goes on.
 *
 * One round trip where the work allows it (issue 24). `BEGIN` is sent just before the unit's first
 * statement, not when the unit starts, and its plain writes wait (WriteBehind.ts) until a statement could read them
 * or the unit ends. A unit that only writes sends one statement and no BEGIN or COMMIT: a single
 * statement is atomic on its own. Otherwise the pending writes go in one statement before the next
 * read (a lock, a load) and before COMMIT.
 */
import { PgClient } from "@effect/sql-pg"
import { type Errors, UnitOfWork } from "@tender/domain"
import { Context, Effect, Exit, Layer, Option, Semaphore, Stream } from "effect"
import { SqlClient, type SqlConnection, SqlError } from "effect/sql"
import { Missed, Pending, ReadsNoDeferredTable, refusalOf, statement, WriteBehind } from "./WriteBehind.ts"

/** BEGIN, COMMIT or a flush failing is storage failure: a defect, like every other SqlError here. */
const storageDefect = <A, E, R>(effect: Effect.Effect<A, E | SqlError.SqlError, R>) =>
  Effect.catchIf(effect, SqlError.isSqlError, Effect.die) as Effect.Effect<A, Exclude<E, SqlError.SqlError>, R>

export const layer: Layer.Layer<UnitOfWork, never, SqlClient.SqlClient | PgClient.PgClient> = Layer.effect(
  UnitOfWork,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient

    // A refusal the final flush finds fails the unit as the write itself would have outside one (a
    // stale update's Conflict, a refused reference claim); units that write under lock make a
    // Conflict a defect themselves (Persist.unitOfWork).
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      (Effect.uninterruptibleMask((restore) =>
        Effect.scoped(Effect.gen(function*() {
          const conn = yield* storageDefect(restore(sql.reserve))
          const pending = new Pending()
          const gate = Semaphore.makeUnsafe(1)
          let begun = false
          // A refusal found by a flush before a read: the unit ends with it, whatever its code made of
          // the defect that stopped it there (the writes it had made are gone with the flush).
          let missed: Missed | undefined
          const flush: Effect.Effect<void, Errors.DomainError | SqlError.SqlError> = Effect.suspend(() => {
            const writes = pending.take()
            if (writes.length === 0) return Effect.void
            return statement(sql, writes).pipe(
              Effect.provideService(sql.transactionService, [conn, 0] as const),
              Effect.asVoid,
              Effect.catchIf(SqlError.isSqlError, (error) => Effect.fail(refusalOf(writes, error) ?? error))
            )
          })
          const begin = Effect.suspend(() => {
            if (begun) return Effect.void
            begun = true
            return Effect.asVoid(conn.executeRaw("BEGIN", []))
          })
          const flushBeforeRead = Effect.catch(flush, (error) => {
            if (SqlError.isSqlError(error)) return Effect.die(error)
            missed = new Missed(error)
            return Effect.die(missed)
          })
          // Before each statement of the unit: BEGIN if not yet sent, then the pending writes it could
          // read. A read of tables no deferred write touches needs neither while nothing was sent: under
          // READ COMMITTED each statement reads its own snapshot, and the unit has no writes of its own
          // out yet, so it reads the same alone as it would in the transaction.
          const ready: Effect.Effect<void, SqlError.SqlError> = gate.withPermit(Effect.flatMap(ReadsNoDeferredTable, (independent) =>
            independent ? Effect.void : Effect.andThen(begin, flushBeforeRead)
          ))
          const connection: SqlConnection.Connection = {
            execute: (text, params, transform) => Effect.andThen(ready, conn.execute(text, params, transform)),
            executeRaw: (text, params) => Effect.andThen(ready, conn.executeRaw(text, params)),
            executeValues: (text, params) => Effect.andThen(ready, conn.executeValues(text, params)),
            executeValuesUnprepared: (text, params) => Effect.andThen(ready, conn.executeValuesUnprepared(text, params)),
            executeUnprepared: (text, params, transform) => Effect.andThen(ready, conn.executeUnprepared(text, params, transform)),
            executeStream: (text, params, transform) => Stream.unwrap(Effect.as(ready, conn.executeStream(text, params, transform)))
          }
          const exit = yield* Effect.exit(restore(effect).pipe(
            Effect.provideService(sql.transactionService, [connection, 0] as const),
            Effect.provideService(WriteBehind, pending)
          ))
          const rollback = begun ? storageDefect(conn.executeRaw("ROLLBACK", [])) : Effect.void
          if (missed !== undefined) {
            yield* rollback
            return yield* Effect.fail(missed.error)
          }
          if (Exit.isFailure(exit)) {
            yield* rollback
            return yield* exit
          }
          // Nothing sent yet: the pending writes are one statement, atomic without a transaction.
          if (!begun) {
            yield* storageDefect(flush)
            return yield* exit
          }
          const flushed = yield* Effect.exit(storageDefect(flush))
          if (Exit.isFailure(flushed)) {
            yield* rollback
            return yield* flushed
          }
          const committed = yield* storageDefect(conn.executeRaw("COMMIT", []))
          if ((committed as { readonly command?: string }).command === "ROLLBACK") {
            return yield* Effect.die(new Error("COMMIT rolled back an aborted transaction"))
          }
          return yield* exit
        }))
      )) as Effect.Effect<A, E, R>

    return UnitOfWork.of({
      transaction: (effect) =>
        Effect.flatMap(Effect.serviceOption(sql.transactionService), (open) => Option.isSome(open) ? effect : transaction(effect))
    })
  })
)

/**
 * Runs `effect` outside the caller's transaction: its statements go to pool connections and commit
 * at once. For a provider's own records (the sandbox ledger, the provider journal), which a rollback
 * of Tender's unit of work must not undo: what went to the provider went.
 */
export const outsideUnitOfWork = (sql: SqlClient.SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.updateContext(effect, (context: Context.Context<R>) => Context.omit(sql.transactionService, WriteBehind)(context) as Context.Context<R>)

/**
 * A repository's own transaction (its statements atomic together), joining the caller's unit of work
 * when one is open: the unit already makes them atomic, and it keeps no savepoints (see the top).
 */
export const transactionOrJoin = (sql: SqlClient.SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
  Effect.flatMap(Effect.serviceOption(sql.transactionService), (open) => Option.isSome(open) ? effect : sql.withTransaction(effect))
