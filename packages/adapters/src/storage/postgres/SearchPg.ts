/**
 * Keyset search, newest first by (created_at, id). The cursor is the last row of the previous page
 * and the next page starts strictly below it, so rows inserted meanwhile never shift a page. Each
 * searched table has an index led by its usual filter and then `(created_at DESC, id DESC)`, which
 * serves the filter, the order and the cursor in one range scan.
 */
import type { Payment } from "@tender/domain"
import { Effect, Schema } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import { type Keyset, pageOf, statusFilter } from "../Search.ts"

/**
 * One page of `from` (`SELECT … FROM <table> r`) under the `where` conditions, all read through
 * the alias `r`; no condition means every row.
 */
export const keyset = <A>(sql: SqlClient.SqlClient, from: Statement.Fragment, Row: Schema.Decoder<A>) => {
  const decode = Schema.decodeUnknownEffect(Schema.Array(Row))
  return (where: ReadonlyArray<Statement.Fragment>, query: Keyset): Effect.Effect<Payment.Page<A>> => {
    const { cursor } = query
    const conditions = cursor === undefined ? where : [...where, below(sql, cursor)]
    return sql`${from} WHERE ${sql.and(conditions)}
      ORDER BY r.created_at DESC, r.id DESC LIMIT ${query.limit + 1}`.pipe(
      Effect.flatMap(decode),
      Effect.map((rows) => pageOf(rows, query.limit)),
      Effect.orDie
    )
  }
}

/** The keyset condition: rows strictly below the cursor's row, newest first (ties broken by id). */
export const below = (sql: SqlClient.SqlClient, cursor: NonNullable<Keyset["cursor"]>) =>
  sql`(r.created_at, r.id) < (${cursor.created_at}::timestamptz, ${cursor.id})`

/** `created_at >= from`: any ISO offset names the instant it means. */
export const createdFrom = (sql: SqlClient.SqlClient, from: string) => sql`r.created_at >= ${from}::timestamptz`

export interface Searchable<A> {
  /** `SELECT … FROM <table> r`: every column the filters use is read through the alias `r`. */
  readonly from: Statement.Fragment
  /**
   * The `merchant_reference` filter: the order's own column, or the order a transaction belongs to
   * (found by the account's reference index: an uncorrelated subquery, which the planner runs once).
   */
  readonly reference: (reference: string, accountId: string) => Statement.Fragment
  readonly Row: Schema.Decoder<A>
}

/** The search of an account's orders or transactions (`Payment.SearchQuery`). */
export const make = <A>(sql: SqlClient.SqlClient, table: Searchable<A>) => {
  const page = keyset(sql, table.from, table.Row)
  return (accountId: string, query: Payment.SearchQuery): Effect.Effect<Payment.Page<A>> => {
    const { created_from, created_to, merchant_reference, processing_profile } = query
    const status = statusFilter(query)
    const where: Array<Statement.Fragment> = [sql`r.account_id = ${accountId}`]
    // One status as an equality: then `*_status_idx` gives the keyset order itself, where an
    // array (even of one) leaves the planner to sort what it matched.
    if (status !== undefined) where.push(status.length === 1 ? sql`r.status = ${status[0]}` : sql`r.status = ANY(${status})`)
    if (created_from !== undefined) where.push(createdFrom(sql, created_from))
    if (created_to !== undefined) where.push(sql`r.created_at < ${created_to}::timestamptz`)
    if (processing_profile !== undefined) where.push(sql`r.processing_profile = ${processing_profile}`)
    if (merchant_reference !== undefined) where.push(table.reference(merchant_reference, accountId))
    return page(where, query)
  }
}
