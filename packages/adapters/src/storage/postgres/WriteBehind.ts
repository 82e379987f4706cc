/**
 * Write-behind inside a unit of work over PostgreSQL (issue 24: one round trip per unit of work).
 *
 * A unit of work's plain writes — inserts that either land or fail the whole unit, and the versioned
 * updates of rows the unit holds under lock — need no answer before the unit ends. So they are not
 * sent when made: UnitOfWorkPg keeps them here and sends them together, as one statement of
 * data-modifying CTEs, just before the next statement that could read them, or at commit. A row
 * inserted and then updated in the same unit is inserted once, in its final state; a row updated
 * twice is updated once.
 *
 * What is deferred: the rows of orders, transactions, events and webhook deliveries, and the sandbox
 * ledger's record of a call reserved in the same unit. The writes whose outcome matters are checked
 * inside the statement (migration 0042's function): a versioned update that finds its row moved on
 * fails the unit with the same `Conflict` as before, an order whose reference claim is refused
 * (0027) with the same `duplicate_merchant_reference_id` — at the flush instead of the call, and a
 * failed statement has written nothing. Found by a flush before a read, in mid-unit, the refusal ends
 * the unit there (`Missed`, a defect the unit turns back into the failure).
 *
 * Outside a unit of work nothing is deferred: the repositories write at once, as before.
 */
import type { PgClient } from "@effect/sql-pg"
import type { Errors } from "@tender/domain"
import { Context, Effect, Option } from "effect"
import { SqlError, type Statement } from "effect/sql"
import { CHECK_FUNCTION, MISSED_WRITE } from "./migrations/0042_write_behind_checks.ts"

/** The tables whose writes may wait for the unit's flush. */
export type Table = "orders" | "transactions" | "events" | "webhook_deliveries" | "sandbox_ledger"

export interface Insert {
  readonly _tag: "Insert"
  readonly table: Table
  readonly id: string
  /** The row's version once written (versioned tables), to check a later update of it against. */
  version: number | undefined
  columns: Record<string, unknown>
  /** The unit's failure when the row is not written (a trigger refused it); unset: it always is. */
  readonly refusal?: (() => Errors.DomainError) | undefined
}

export interface Update {
  readonly _tag: "Update"
  readonly table: Table
  readonly id: string
  readonly accountId: string
  /** The version stored before this unit's first update of the row. */
  readonly from: number
  /** The version the row will have. */
  version: number
  columns: Record<string, unknown>
  /** The unit's failure when the stored row is no longer at `from`. */
  readonly refusal: () => Errors.Conflict
}

export type Write = Insert | Update

/** The writes a unit of work holds back, collapsed per row. */
export class Pending {
  private writes: Array<Write> = []
  private readonly byRow = new Map<string, Write>()

  get size() {
    return this.writes.length
  }

  insert(write: Omit<Insert, "_tag">) {
    const entry: Insert = { _tag: "Insert", ...write }
    this.writes.push(entry)
    this.byRow.set(`${write.table}/${write.id}`, entry)
  }

  /**
   * Folds an update into what is pending for its row: into the row's insert (then inserted in its
   * final state) or its earlier update. An update that does not follow the version this unit
   * already wrote is a conflict at once, as the statement would have been.
   */
  update(write: Omit<Update, "_tag">): Errors.Conflict | undefined {
    const key = `${write.table}/${write.id}`
    const before = this.byRow.get(key)
    if (before === undefined) {
      const entry: Update = { _tag: "Update", ...write }
      this.writes.push(entry)
      this.byRow.set(key, entry)
      return undefined
    }
    if (before.version !== write.from) return write.refusal()
    before.columns = { ...before.columns, ...write.columns }
    before.version = write.version
    return undefined
  }

  /** Everything pending, in the order it was written; the unit holds nothing after. */
  take(): ReadonlyArray<Write> {
    const writes = this.writes
    this.writes = []
    this.byRow.clear()
    return writes
  }
}

/** The pending writes of the unit of work in progress; absent outside one. */
export class WriteBehind extends Context.Service<WriteBehind, Pending>()("@tender/adapters/WriteBehind") {}

/**
 * Reads run with this set to `true` read no table a deferred write could change (the webhook
 * endpoints the outbox lists), so the unit neither flushes nor begins its transaction for them.
 * Only for reads that take no lock: one may run before the unit's BEGIN.
 */
export const ReadsNoDeferredTable = Context.Reference<boolean>("@tender/adapters/ReadsNoDeferredTable", {
  defaultValue: () => false
})

/** The insert (`now`) of one row or several, or its rows held back when a unit of work is in progress. */
export const insertOrDefer = <E, R>(
  rows: Omit<Insert, "_tag"> | ReadonlyArray<Omit<Insert, "_tag">>,
  now: Effect.Effect<unknown, E, R>
): Effect.Effect<void, E, R> =>
  Effect.flatMap(Effect.serviceOption(WriteBehind), (pending) =>
    Option.isSome(pending)
      ? Effect.sync(() => {
        for (const row of Array.isArray(rows) ? rows : [rows]) pending.value.insert(row)
      })
      : Effect.asVoid(now))

/** A versioned update now, or held back (and folded into its row's pending write) in a unit of work. */
export const updateOrDefer = <E, R>(
  write: Omit<Update, "_tag">,
  now: Effect.Effect<void, E, R>
): Effect.Effect<void, E | Errors.Conflict, R> =>
  Effect.flatMap(Effect.serviceOption(WriteBehind), (pending): Effect.Effect<void, E | Errors.Conflict, R> => {
    if (Option.isNone(pending)) return now
    const conflict = pending.value.update(write)
    return conflict === undefined ? Effect.void : Effect.fail(conflict)
  })

/** A refusal a flush found before a read, in mid-unit: the unit ends with it (UnitOfWorkPg). */
export class Missed {
  readonly error: Errors.DomainError
  constructor(error: Errors.DomainError) {
    this.error = error
  }
}

const checked = (write: Write) => write._tag === "Update" || write.refusal !== undefined

/**
 * The one statement that sends `writes`: each a data-modifying CTE (they see one snapshot and run as
 * one statement, atomically; foreign keys are checked at its end, so an event's deliveries may go
 * with it). Each write that must land is counted, and a count other than 1 raises (0042).
 */
export const statement = (sql: PgClient.PgClient, writes: ReadonlyArray<Write>): Statement.Statement<object> => {
  const one = (write: Write) => {
    const returning = checked(write) ? sql`RETURNING 1` : sql``
    return write._tag === "Insert"
      ? sql`INSERT INTO ${sql(write.table)} ${sql.insert(write.columns)} ${returning}`
      : sql`UPDATE ${sql(write.table)} SET ${sql.update(write.columns, ["id", "account_id"])}
            WHERE id = ${write.id} AND account_id = ${write.accountId} AND version = ${write.from} ${returning}`
  }
  if (writes.length === 1 && !checked(writes[0]!)) return sql`${one(writes[0]!)}`
  const name = (i: number) => sql(`w${i}`)
  const ctes = writes.map((write, i) => sql`${name(i)} AS (${one(write)})`)
  const checks = writes.flatMap((write, i) =>
    checked(write) ? [sql`${sql(CHECK_FUNCTION)}((SELECT count(*) FROM ${name(i)}), ${i})`] : []
  )
  return sql`WITH ${sql.join(", ", false)(ctes)} SELECT ${checks.length > 0 ? sql.join(" + ", false)(checks) : sql`1`} AS written`
}

/** The refusal of the write a failed `statement` raised for, if it failed that way. */
export const refusalOf = (writes: ReadonlyArray<Write>, error: unknown): Errors.DomainError | undefined => {
  if (!SqlError.isSqlError(error)) return undefined
  const cause = (error.reason as { readonly cause?: { readonly code?: string; readonly message?: string } }).cause
  if (cause?.code !== MISSED_WRITE) return undefined
  const index = /write (\d+)/.exec(cause.message ?? "")?.[1]
  return index === undefined ? undefined : writes[Number(index)]?.refusal?.()
}
