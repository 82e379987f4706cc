/**
 * Issue 13, growth: indexes for the searches that a million-order table turns into long scans
 * (docs/decisions.md, "Growth"). Each is led by what the search filters on and ends in the keyset
 * order `(created_at DESC, id DESC)`, so one range scan serves filter, order and cursor, as the
 * `*_search_idx` of 0003/0004 do for the account alone.
 *
 * - Status: the spec's reconciliation search asks for the in-flight statuses, a sliver of the
 *   rows; under the account's index alone the scan walks every settled order to find them.
 * - Processing profile: a brand's slice of an account; partial, as most payments carry none.
 * - Events by type, and every account's events (the operator's `events list`, which names no
 *   account): without them the newest page is a sort of the whole table.
 */
export const statements = [
  `CREATE INDEX orders_status_idx ON orders (account_id, status, created_at DESC, id DESC)`,
  `CREATE INDEX transactions_status_idx ON transactions (account_id, status, created_at DESC, id DESC)`,
  `CREATE INDEX orders_profile_idx ON orders (account_id, processing_profile, created_at DESC, id DESC)
    WHERE processing_profile IS NOT NULL`,
  `CREATE INDEX transactions_profile_idx ON transactions (account_id, processing_profile, created_at DESC, id DESC)
    WHERE processing_profile IS NOT NULL`,
  `CREATE INDEX events_type_idx ON events (account_id, type, created_at DESC, id DESC)`,
  `CREATE INDEX events_created_idx ON events (created_at DESC, id DESC)`
]
