/**
 * What every search shares in both adapters: pages are newest first by (created_at, id), the
 * cursor is the last row of the previous page, and each read fetches one row past the limit so
 * `has_more` needs no count.
 */
import type { Payment } from "@tender/domain"

/** A page request: how many rows, and the row the page starts strictly below. */
export interface Keyset {
  readonly limit: number
  readonly cursor?: { readonly created_at: string; readonly id: string } | undefined
}

/** `rows`: newest first, at most `limit + 1` of them. */
export const pageOf = <A>(rows: ReadonlyArray<A>, limit: number): Payment.Page<A> => ({
  data: rows.slice(0, limit),
  has_more: rows.length > limit
})

/** The statuses to filter on; an empty list filters nothing out (a request naming no status asks for all). */
export const statusFilter = (query: { readonly status?: ReadonlyArray<string> | undefined }): ReadonlyArray<string> | undefined =>
  query.status !== undefined && query.status.length > 0 ? query.status : undefined
