/**
 * Search and list pages, one home for every resource: limits, timestamps, opaque keyset cursors
 * (newest first; ties broken by id) and the `{data, has_more, next_cursor}` page.
 */
import { Effect } from "effect"
import { invalidField, type ValidationFailed } from "./Errors.ts"
import { MAX_PAGE } from "./Limits.ts"

/** Search filters (contract.md) shared by orders and transactions; `cursor` is opaque. */
export interface SearchQuery {
  readonly status?: ReadonlyArray<string> | undefined
  readonly created_from?: string | undefined
  readonly created_to?: string | undefined
  readonly processing_profile?: string | undefined
  readonly merchant_reference?: string | undefined
  readonly limit: number
  readonly cursor?: { readonly created_at: string; readonly id: string } | undefined
}

/** One page of rows as a repository returns it: the rows and whether more follow. */
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly has_more: boolean
}

/** A list endpoint's inputs as the caller gives them: filters, limit and cursor, not yet validated. */
export interface SearchInput {
  readonly status?: ReadonlyArray<string> | undefined
  readonly created_from?: string | undefined
  readonly created_to?: string | undefined
  readonly processing_profile?: string | undefined
  readonly merchant_reference?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** One page as the API returns it: the views, whether more follow, and the cursor of the next page. */
export interface SearchResult<A> {
  readonly data: ReadonlyArray<A>
  readonly has_more: boolean
  readonly next_cursor: string | null
}

type Cursor = NonNullable<SearchQuery["cursor"]>

// Cursors are ASCII (timestamps and ids), so the platform's btoa/atob suffice (no Node APIs here).
/** The opaque cursor of the page after this row (its `created_at` and `id`, base64url). */
export const encodeCursor = (row: { readonly created_at: string; readonly id: string }): string =>
  btoa(JSON.stringify([row.created_at, row.id])).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

/** The row a cursor points after, or `ValidationFailed` when it is not one of ours. */
export const decodeCursor = (cursor: string): Cursor | ValidationFailed => {
  try {
    const [created_at, id] = JSON.parse(atob(cursor.replace(/-/g, "+").replace(/_/g, "/")))
    if (typeof created_at === "string" && typeof id === "string" && !Number.isNaN(Date.parse(created_at))) {
      return { created_at: new Date(created_at).toISOString(), id }
    }
  } catch {
    // falls through to the validation error
  }
  return invalidField("cursor", "is not a cursor returned by this search")
}

const EARLIEST = Date.parse("1970-01-01T00:00:00Z")
const LATEST = Date.parse("9999-12-31T23:59:59.999Z")

/** Validates the common inputs: limit 1–MAX_PAGE (100; default 20), ISO timestamps, a cursor of ours. */
export const decodeInput = (input: Pick<SearchInput, "limit" | "cursor" | "created_from" | "created_to">) =>
  Effect.gen(function*() {
    const limit = input.limit ?? 20
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) return yield* invalidField("limit", `must be an integer from 1 to ${MAX_PAGE}`)
    for (const field of ["created_from", "created_to"] as const) {
      const value = input[field]
      if (value === undefined) continue
      const parsed = Date.parse(value)
      if (Number.isNaN(parsed)) return yield* invalidField(field, "must be an ISO 8601 timestamp")
      // JavaScript dates reach years PostgreSQL's timestamptz cannot hold (+010000-…): a sane window.
      if (parsed < EARLIEST || parsed > LATEST) return yield* invalidField(field, "must be between 1970-01-01 and 9999-12-31")
    }
    const cursor = input.cursor === undefined ? undefined : decodeCursor(input.cursor)
    if (cursor instanceof Error) return yield* cursor
    const at = (value: string | undefined) => (value === undefined ? undefined : new Date(value).toISOString())
    return { limit, cursor, created_from: at(input.created_from), created_to: at(input.created_to) }
  })

/** A page of views with its `has_more` and the cursor after its last row. */
export const pageOf = <Row extends { readonly created_at: string; readonly id: string }, View>(
  rows: Page<Row>,
  views: ReadonlyArray<View>
): SearchResult<View> => {
  const last = rows.data.at(-1)
  return { data: views, has_more: rows.has_more, next_cursor: rows.has_more && last !== undefined ? encodeCursor(last) : null }
}

/**
 * A search over a repository: decode, query, view the page's rows, page. `view` takes the whole
 * page so the rows' children are read in one query for the page, never one per row: a page costs
 * the same number of statements at any `limit`.
 */
export const search = <Row extends { readonly created_at: string; readonly id: string }, View, R>(
  input: SearchInput,
  run: (query: SearchQuery) => Effect.Effect<Page<Row>>,
  view: (rows: ReadonlyArray<Row>) => Effect.Effect<ReadonlyArray<View>, never, R>
) =>
  Effect.gen(function*() {
    const base = yield* decodeInput(input)
    const rows = yield* run({
      status: input.status,
      processing_profile: input.processing_profile,
      merchant_reference: input.merchant_reference,
      ...base
    })
    return pageOf(rows, yield* view(rows.data))
  })
