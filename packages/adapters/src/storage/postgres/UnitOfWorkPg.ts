/**
 * The unit of work over PostgreSQL: one transaction on a connection of its own. A nested call joins the
 * enclosing transaction outright (no savepoint), exactly as the memory unit of work does, so both
 * behave the same when an inner failure is caught and the outer work goes on.
 *
 * One round trip where the work allows it (issue 24). The connection is reserved and `BEGIN` sent
 * just before the unit's first statement, not when the unit starts, and its plain writes wait
 * (WriteBehind.ts) until a statement could read them or the unit ends. A unit that only writes sends
 * one statement, on any pooled connection, and no BEGIN or COMMIT: a single statement is atomic on
 * its own. Otherwise the pending writes go in one statement before the next read (a lock, a load)
 * and before COMMIT.
 */
import { PgClient } from "@effect/sql-pg"
import { type Errors, UnitOfWork } from "@tender/domain"
import { Context, Effect, Exit, Layer, Option, Scope, Semaphore, Stream } from "effect"
import { SqlClient, type SqlConnection, SqlError } from "effect/sql"
import { ReadSource } from "./ReadRouting.ts"
import { Missed, Pending, ReadsNoDeferredTable, refusalOf, statement, WriteBehind } from "./WriteBehind.ts"

/** BEGIN, COMMIT or a flush failing is storage failure: a defect, like every other SqlError here. */
const storageDefect = <A, E, R>(effect: Effect.Effect<A, E | SqlError.SqlError, R>) =>
  Effect.catchIf(effect, SqlError.isSqlError, Effect.die) as Effect.Effect<A, Exclude<E, SqlError.SqlError>, R>

/** Writes per flushed statement: far below the parameter bound, whatever the rows' widths. */
const WRITES_PER_STATEMENT = 500

const chunks = <A>(all: ReadonlyArray<A>): ReadonlyArray<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(all.length / WRITES_PER_STATEMENT) }, (_, i) => all.slice(i * WRITES_PER_STATEMENT, (i + 1) * WRITES_PER_STATEMENT))

/**
 * What runs once the unit of work commits, and not at all when it rolls back: `sql.afterCommit` for
 * the units this module runs, which are not `sql.withTransaction`'s (whose callbacks effect keeps).
 * A cache of rows the unit changed forgets them then (NotifiedCache.ts).
 */
class AfterCommit extends Context.Service<AfterCommit, Array<Effect.Effect<void>>>()("@tender/adapters/UnitOfWorkPg/AfterCommit") {}

/** Runs `effect` once the caller's unit of work (or `sql.withTransaction`) commits; at once outside either. */
export const afterCommit = (sql: SqlClient.SqlClient) => (effect: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(AfterCommit), (unit) => Option.isSome(unit) ? Effect.sync(() => void unit.value.push(effect)) : sql.afterCommit(effect))

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
          // The connection is reserved with the first statement that needs it: a unit that only writes
          // sends its one statement on any pooled connection, and holds none meanwhile.
          const scope = yield* Effect.scope
          let conn: SqlConnection.Connection | undefined
          const reserved = Effect.suspend(() =>
            conn !== undefined ? Effect.succeed(conn) : Effect.map(Scope.provide(sql.reserve, scope), (c) => (conn = c))
          )
          const pending = new Pending()
          const gate = Semaphore.makeUnsafe(1)
          let begun = false
          // A refusal found by a flush before a read: the unit ends with it, whatever its code made of
          // the defect that stopped it there (the writes it had made are gone with the flush).
          let missed: Missed | undefined
          const flush: Effect.Effect<void, Errors.DomainError | SqlError.SqlError> = Effect.suspend(() => {
            const writes = pending.take()
            // A statement's parameters are bounded (65,535): a unit with very many writes sends them in
            // several statements, inside its transaction (see the end of the unit).
            return Effect.forEach(chunks(writes), (chunk) => {
              const sent = statement(sql, chunk)
              return (conn !== undefined ? Effect.provideService(sent, sql.transactionService, [conn, 0] as const) : sent).pipe(
                Effect.catchIf(SqlError.isSqlError, (error) => Effect.fail(refusalOf(chunk, error) ?? error))
              )
            }, { discard: true })
          })
          const begin = Effect.suspend(() => {
            if (begun) return Effect.void
            begun = true
            return Effect.flatMap(reserved, (c) => c.executeRaw("BEGIN", []))
          })
          const flushBeforeRead = Effect.catch(flush, (error) => {
            if (SqlError.isSqlError(error)) return Effect.die(error)
            missed = new Missed(error)
            return Effect.die(missed)
          })
          // Before each statement of the unit: BEGIN if not yet sent, then the pending writes it could
          // read; the statement then runs on the unit's connection. A read of tables no deferred write
          // touches needs neither while nothing was sent: under READ COMMITTED each statement reads its
          // own snapshot, and the unit has no writes of its own out yet, so it reads the same alone.
          const ready: Effect.Effect<SqlConnection.Connection, SqlError.SqlError> = gate.withPermit(
            Effect.flatMap(ReadsNoDeferredTable, (independent) =>
              Effect.andThen(independent ? Effect.void : Effect.andThen(begin, flushBeforeRead), reserved))
          )
          const connection: SqlConnection.Connection = {
            execute: (text, params, transform) => Effect.flatMap(ready, (c) => c.execute(text, params, transform)),
            executeRaw: (text, params) => Effect.flatMap(ready, (c) => c.executeRaw(text, params)),
            executeValues: (text, params) => Effect.flatMap(ready, (c) => c.executeValues(text, params)),
            executeValuesUnprepared: (text, params) => Effect.flatMap(ready, (c) => c.executeValuesUnprepared(text, params)),
            executeUnprepared: (text, params, transform) => Effect.flatMap(ready, (c) => c.executeUnprepared(text, params, transform)),
            executeStream: (text, params, transform) => Stream.unwrap(Effect.map(ready, (c) => c.executeStream(text, params, transform)))
          }
          const committed: Array<Effect.Effect<void>> = []
          const exit = yield* Effect.exit(restore(effect).pipe(
            Effect.provideService(sql.transactionService, [connection, 0] as const),
            Effect.provideService(WriteBehind, pending),
            Effect.provideService(AfterCommit, committed)
          ))
          const afterCommitted = Effect.forEach(committed, (callback) => callback, { discard: true })
          const rollback = begun && conn !== undefined ? storageDefect(conn.executeRaw("ROLLBACK", [])) : Effect.void
          if (missed !== undefined) {
            yield* rollback
            return yield* Effect.fail(missed.error)
          }
          if (Exit.isFailure(exit)) {
            yield* rollback
            return yield* exit
          }
          // Nothing sent yet: the pending writes are one statement, atomic without a transaction.
          if (!begun && pending.size <= WRITES_PER_STATEMENT) {
            yield* storageDefect(flush)
            yield* afterCommitted
            return yield* exit
          }
          yield* storageDefect(begin)
          const flushed = yield* Effect.exit(storageDefect(flush))
          if (Exit.isFailure(flushed)) {
            yield* rollback
            return yield* flushed
          }
          const commit = yield* storageDefect(conn!.executeRaw("COMMIT", []))
          if ((commit as { readonly command?: string }).command === "ROLLBACK") {
            return yield* Effect.die(new Error("COMMIT rolled back an aborted transaction"))
          }
          yield* afterCommitted
          return yield* exit
        }))
      )) as Effect.Effect<A, E, R>

    return UnitOfWork.of({
      transaction: (effect) =>
        Effect.flatMap(Effect.serviceOption(sql.transactionService), (open) =>
          // A unit writes: none of its statements may go to a read replica, the one sent without a
          // transaction included (ReadRouting.ts), even in a read that prefers one.
          Option.isSome(open) ? effect : Effect.provideService(transaction(effect), ReadSource, undefined))
    })
  })
)

/**
 * Runs `effect` outside the caller's transaction: its statements go to pool connections and commit
 * at once. For a provider's own records (the sandbox ledger, the provider journal), which a rollback
 * of Tender's unit of work must not undo: what went to the provider went.
 */
export const outsideUnitOfWork = (sql: SqlClient.SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.updateContext(
    effect,
    // They write: on the primary, whatever read the caller makes (ReadRouting.ts).
    (context: Context.Context<R>) => Context.add(Context.omit(sql.transactionService, WriteBehind, AfterCommit)(context), ReadSource, undefined) as Context.Context<R>
  )

/**
 * A repository's own transaction (its statements atomic together), joining the caller's unit of work
 * when one is open: the unit already makes them atomic, and it keeps no savepoints (see the top).
 */
export const transactionOrJoin = (sql: SqlClient.SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
  Effect.flatMap(Effect.serviceOption(sql.transactionService), (open) => Option.isSome(open) ? effect : sql.withTransaction(effect))
