/**
 * Issue 25: the account's event feed (GET /v1/events, `tender listen`) must never skip an event.
 * Events are numbered (`seq`) when inserted but become visible when their transaction commits, and
 * transactions commit in any order: a feed read after `seq > cursor` can pass over a low `seq` whose
 * transaction commits after a higher one was served. So each event records the transaction that
 * wrote it (`txid`), and the feed (EventRepoPg.feed) serves only events whose transaction is older
 * than every transaction still running (`txid < pg_snapshot_xmin(pg_current_snapshot())`), in
 * (txid, seq) order: any event that commits later has a txid at or past that bound, so it sorts after
 * every position served. docs/decisions.md, "Events feed and tender listen".
 *
 * The column is a bigint holding the 64-bit xid8 (an epoch-extended id stays far below 2^63), not
 * an xid8: the driver knows no xid8 codec, and every `SELECT *` of events would then fail to decode.
 * Its default is the writing transaction's id; a unit of work's write-behind statement
 * (WriteBehind.ts) names only the event's own columns, so the default applies there too. Rows
 * written before this migration get 0 (a constant default is a catalog change, not a rewrite of the
 * table): they sort first, by `seq`, and were all committed long before any feed read.
 *
 * The index is built without CONCURRENTLY (which cannot run inside the migration's transaction): it
 * locks writes to events while it builds, which the documented upgrade allows, since every `serve`
 * and `worker` is stopped before `tender migrate` runs and started after (README, "Upgrading").
 */
export const statements = [
  `ALTER TABLE events ADD COLUMN txid bigint NOT NULL DEFAULT 0`,
  `ALTER TABLE events ALTER COLUMN txid SET DEFAULT pg_current_xact_id()::text::bigint`,
  `CREATE INDEX events_feed_idx ON events (account_id, txid, seq)`
]
