/**
 * Search and ordering over memory tables, matching PostgreSQL row for row: times compare as
 * instants (not as text, so any ISO offset works), ids break ties byte-wise like `COLLATE "C"`.
 */
import type { Payment } from "@tender/domain"
import { type Keyset, pageOf, statusFilter } from "../Search.ts"

interface Stamped {
  readonly id: string
  readonly created_at: string
}

export interface Searchable extends Stamped {
  readonly account_id: string
  readonly status: string
  readonly processing_profile: string | null
}

export const instant = (iso: string) => Date.parse(iso)

/** Orders two (instant, id) keys; ids compare byte-wise. */
export const compareKeys = (at: number, id: string, otherAt: number, otherId: string) =>
  at !== otherAt ? at - otherAt : id < otherId ? -1 : id > otherId ? 1 : 0

/** `ORDER BY created_at, id`. */
export const oldestFirst = (a: Stamped, b: Stamped) => compareKeys(instant(a.created_at), a.id, instant(b.created_at), b.id)

/** One page of the rows that pass `matches`, newest first, from strictly below the cursor. */
export const keyset = <A extends Stamped>(
  rows: Iterable<A>,
  matches: (row: A) => boolean,
  query: Keyset
): Payment.Page<A> => {
  const { cursor } = query
  const below = cursor === undefined ? undefined : { at: instant(cursor.created_at), id: cursor.id }
  const newestFirst = [...rows]
    .filter((row) =>
      matches(row) && (below === undefined || compareKeys(instant(row.created_at), row.id, below.at, below.id) < 0)
    )
    .sort((a, b) => oldestFirst(b, a))
  return pageOf(newestFirst.slice(0, query.limit + 1), query.limit)
}

/** `created_at >= from`; `undefined` lets every row through. */
export const createdFrom = (from: string | undefined) => {
  const at = from === undefined ? undefined : instant(from)
  return (row: Stamped) => at === undefined || instant(row.created_at) >= at
}

/**
 * The account's rows matching `query` (`Payment.SearchQuery`), newest first, from strictly below
 * the cursor. `referenceOf` gives the merchant reference a row is searched by (a transaction's is its order's).
 */
export const search = <A extends Searchable>(
  rows: Iterable<A>,
  accountId: string,
  query: Payment.SearchQuery,
  referenceOf: (row: A) => string | undefined
): Payment.Page<A> => {
  const { created_from, created_to, merchant_reference, processing_profile } = query
  const status = statusFilter(query)
  const from = createdFrom(created_from)
  const to = created_to === undefined ? undefined : instant(created_to)
  return keyset(rows, (row) =>
    row.account_id === accountId &&
    (status === undefined || status.includes(row.status)) &&
    from(row) &&
    (to === undefined || instant(row.created_at) < to) &&
    (processing_profile === undefined || row.processing_profile === processing_profile) &&
    (merchant_reference === undefined || referenceOf(row) === merchant_reference), query)
}
