/**
 * Keyset search over an account's orders or transactions, newest first by (created_at, id). The
 * cursor is the last row of the previous page and the next page starts strictly below it, so rows
 * inserted meanwhile never shift a page. The `(account_id, created_at DESC, id DESC)` index of
 * each table serves the filter, the order and the cursor in one range scan.
 */
import type { Payment } from "@tender/domain"
import { Effect, Schema } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import { pageOf, statusFilter } from "../Search.ts"

export interface Searchable<A> {
  /** `SELECT … FROM <table> r`: every column the filters use is read through the alias `r`. */
  readonly from: Statement.Fragment
  /** The `merchant_reference` filter: the order's own column, or the order a transaction belongs to. */
  readonly reference: (reference: string) => Statement.Fragment
  readonly Row: Schema.Decoder<A>
}

export const make = <A>(sql: SqlClient.SqlClient, table: Searchable<A>) => {
  const decode = Schema.decodeUnknownEffect(Schema.Array(table.Row))
  return (accountId: string, query: Payment.SearchQuery): Effect.Effect<Payment.Page<A>> => {
    const { created_from, created_to, cursor, merchant_reference, processing_profile } = query
    const status = statusFilter(query)
    const where: Array<Statement.Fragment> = [sql`r.account_id = ${accountId}`]
    if (status !== undefined) where.push(sql`r.status = ANY(${status})`)
    if (created_from !== undefined) where.push(sql`r.created_at >= ${created_from}::timestamptz`)
    if (created_to !== undefined) where.push(sql`r.created_at < ${created_to}::timestamptz`)
    if (processing_profile !== undefined) where.push(sql`r.processing_profile = ${processing_profile}`)
    if (merchant_reference !== undefined) where.push(table.reference(merchant_reference))
    if (cursor !== undefined) where.push(sql`(r.created_at, r.id) < (${cursor.created_at}::timestamptz, ${cursor.id})`)
    return sql`${table.from} WHERE ${sql.and(where)}
      ORDER BY r.created_at DESC, r.id DESC LIMIT ${query.limit + 1}`.pipe(
      Effect.flatMap(decode),
      Effect.map((rows) => pageOf(rows, query.limit)),
      Effect.orDie
    )
  }
}
