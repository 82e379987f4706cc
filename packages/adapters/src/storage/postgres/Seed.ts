/**
 * Bulk history for growth measurements (issue 13): orders with their transactions and events,
 * written set-based (`INSERT … SELECT generate_series`) straight into PostgreSQL, shared by the
 * growth bench (a million orders) and the index test (enough for the planner to care). Not a
 * product path: nothing in the server or CLI calls it.
 *
 * The rows are what the product writes for card payments, so the API reads and searches them like
 * its own: ids of the domain's shapes (md5 hex: random, as real ids spread over the primary keys),
 * created in chronological order over `days` before `before` (as a table really fills), spread
 * round-robin over `accounts`. Every value is a function of the row number (`hashint4`), so a run
 * is reproducible. Per order, from one draw out of 1000:
 *
 *   860 succeeded (payment completed; 1 in 10 after a declined first attempt)   80 failed (declined)
 *    30 canceled (authorization canceled)   20 authorized (manual capture)   10 processing
 *
 * except that what is in flight is recent, as in a live system: an authorization older than 7 days
 * has been canceled, a payment still processing after a day has failed (so the reconciliation
 * search for in-flight statuses finds a backlog, not a share of history);
 * amounts log-uniform from 1.00 to ~8,100.00, 1 in 20 under processing profile `eu`, one event per
 * order past processing, of its status (a canceled one also has its `payment.authorized`).
 */
import { Effect } from "effect"
import type { SqlClient, SqlError } from "effect/sql"

export interface SeedOptions {
  /** Existing account ids; orders go to them in turn. */
  readonly accounts: ReadonlyArray<string>
  readonly orders: number
  /** Makes ids and references unique to this seeding (letters and digits). */
  readonly tag: string
  /** The newest seeded row is older than this (ISO), so the product's own rows stay the newest. */
  readonly before: string
  readonly days?: number
  /** Orders per statement batch: bounds each statement's memory, and reports progress. */
  readonly batch?: number
  /**
   * Skips the foreign-key triggers (`session_replication_role = replica`, superuser only): the
   * seeded rows refer only to each other and to the given accounts, so the checks would find
   * nothing; the bench spares their per-row lookups (the test keeps them).
   */
  readonly trusted?: boolean
  /**
   * Each event also gets a webhook delivery to its account's (synthetic) endpoint, as the outbox
   * fans them out (issue 24, retention): finished, one attempt each, `exhausted` after a second
   * for 1 in 50; and 1 in 1,000 still owed, paused for a disabled endpoint (out of the dispatcher's
   * index), which retention must keep however old.
   */
  readonly deliveries?: boolean
}

/** The order's draw, out of 1000, and what it decides. */
const draw = (g: string) => `mod(abs(hashint4(${g})::bigint), 1000)`

/** A card payment's instrument, as the sandbox reports 4242 4242 4242 4242. */
const instrument =
  `jsonb_build_object('type', 'card', 'card_brand', 'visa', 'last4_digits', '4242', 'bin', '42424242', 'card_funding', 'credit')`

// The columns the product always writes; the rest are null or their defaults for a card payment
// by stored credential without a customer.
const ordersOf = (p: { from: number; to: number }) => `
  INSERT INTO orders (id, account_id, livemode, merchant_reference, subtype, status, amount, currency, country,
    payment_method, capture_method, processing_profile, card_token, payment_instrument, created_at, updated_at, version)
  SELECT 'ord_' || md5('o' || $2 || g), account_id, false, 'seed-' || $2 || '-' || g, 'direct_payment', status,
    round(100 * exp(${draw("(g * 7)::int")} * 9 / 1000.0))::bigint, 'USD', 'US', 'card',
    CASE WHEN status IN ('canceled', 'authorized') THEN 'manual' ELSE 'automatic' END,
    CASE WHEN ${draw("(g * 13)::int")} < 50 THEN 'eu' END,
    'tok_' || md5('c' || $2 || (g % 5000)),
    CASE WHEN status IN ('succeeded', 'authorized') THEN ${instrument} END,
    created_at, created_at + interval '1 second', CASE WHEN status = 'processing' THEN 1 ELSE 2 END
  FROM (
    SELECT s.*, CASE WHEN d < 860 THEN 'succeeded' WHEN d < 940 THEN 'failed' WHEN d < 970 THEN 'canceled'
      WHEN d < 990 THEN CASE WHEN created_at > $3::timestamptz - interval '7 days' THEN 'authorized' ELSE 'canceled' END
      WHEN created_at > $3::timestamptz - interval '1 day' THEN 'processing' ELSE 'failed' END AS status
    FROM (
      SELECT g, ${draw("g::int")} AS d, ($1::text[])[1 + g % cardinality($1::text[])] AS account_id,
        $3::timestamptz - ($4::bigint - g) * ($5::double precision * interval '1 day' / $4::bigint) AS created_at
      FROM generate_series(${p.from}::bigint, ${p.to}::bigint) g
    ) s
  ) o
  RETURNING *`

/**
 * One batch in one statement: the orders, and from what they returned their transactions and
 * events (data-modifying CTEs; the foreign keys are checked at the statement's end, when the
 * orders are in). `g` comes back out of the reference.
 */
const batchOf = (p: { from: number; to: number }, withDeliveries: boolean) => `
  WITH i AS (${ordersOf(p)}), o AS (
    SELECT i.*, substr(i.merchant_reference, length('seed-' || $2 || '-') + 1)::bigint AS g FROM i
  ), t AS (
    INSERT INTO transactions (id, order_id, account_id, livemode, kind, status, amount, currency, payment_method,
      processing_profile, provider, provider_transaction_id, decline_code, payment_instrument, created_at, updated_at, version)
    SELECT 'txn_' || md5('t' || $2 || o.g), o.id, o.account_id, false,
      CASE WHEN o.capture_method = 'manual' THEN 'authorization' ELSE 'payment' END,
      CASE o.status WHEN 'succeeded' THEN 'completed' WHEN 'authorized' THEN 'completed' WHEN 'failed' THEN 'failed'
        WHEN 'canceled' THEN 'canceled' ELSE 'processing' END,
      o.amount, o.currency, 'card', o.processing_profile, 'sandbox', 'sbx_' || md5('p' || $2 || o.g),
      CASE WHEN o.status = 'failed' THEN 'do_not_honor' END, o.payment_instrument,
      o.created_at, o.updated_at, o.version
    FROM o
    UNION ALL
    SELECT 'txn_' || md5('r' || $2 || o.g), o.id, o.account_id, false, 'payment', 'failed', o.amount, o.currency, 'card',
      o.processing_profile, 'sandbox', 'sbx_' || md5('q' || $2 || o.g), 'insufficient_funds', NULL,
      o.created_at - interval '2 seconds', o.created_at - interval '2 seconds', 2
    FROM o WHERE o.status = 'succeeded' AND o.g % 10 = 0
  ), c AS (
    -- Each reference's claim (migration 0027), which the orders' trigger writes unless \`trusted\` skipped it.
    INSERT INTO order_references (account_id, merchant_reference, holder)
    SELECT o.account_id, o.merchant_reference, 'order' FROM o
    ON CONFLICT DO NOTHING
  ), e AS (
    INSERT INTO events (id, account_id, type, created_at, livemode, processing_profile, order_id, data)
    SELECT 'evt_' || md5('e' || $2 || o.g), o.account_id, 'payment.' || o.status, o.updated_at, false,
      o.processing_profile, o.id, ${payload("o.status")}
    FROM o WHERE o.status <> 'processing'
    UNION ALL
    SELECT 'evt_' || md5('a' || $2 || o.g), o.account_id, 'payment.authorized', o.created_at, false,
      o.processing_profile, o.id, ${payload("'authorized'")}
    FROM o WHERE o.status = 'canceled'
    RETURNING id, account_id, type, created_at
  )${withDeliveries ? deliveriesOf : ""}
  SELECT count(*) AS orders FROM o`

/**
 * The deliveries of the events of a batch (`e`), and their attempts: each delivery's last attempt a
 * second after its event (an exhausted one has a first, failed, attempt a second before that).
 */
const deliveriesOf = `, d AS (
    INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, status, attempts,
      next_attempt_at, last_attempt_at, created_at, updated_at, lease_token, paused)
    SELECT 'whd_' || md5(e.id), e.account_id, 'we_seed_' || md5(e.account_id), e.id, e.type, x.status,
      CASE x.status WHEN 'exhausted' THEN 2 ELSE 1 END,
      CASE WHEN x.status = 'failed' THEN e.created_at + interval '1 hour' END,
      e.created_at + interval '1 second', e.created_at, e.created_at + interval '1 second', NULL, x.status = 'failed'
    FROM e CROSS JOIN LATERAL (
      SELECT CASE WHEN ${draw("hashtext(e.id)")} < 1 THEN 'failed' WHEN ${draw("hashtext(e.id)")} < 21 THEN 'exhausted'
        ELSE 'succeeded' END AS status
    ) x
    RETURNING id, status, attempts, last_attempt_at
  ), da AS (
    INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, error)
    SELECT d.id, d.last_attempt_at - (n - 1) * interval '1 second',
      CASE WHEN d.status = 'succeeded' THEN 200 ELSE 500 END, 40, CASE WHEN d.status <> 'succeeded' THEN 'HTTP 500' END
    FROM d CROSS JOIN generate_series(1, d.attempts) n
  )`

/** An event's payload: the payment snapshot's identifying fields. */
const payload = (status: string) =>
  `jsonb_build_object('order_id', o.id, 'merchant_reference', o.merchant_reference, 'status', ${status},
    'amount', (o.amount / 100.0)::text, 'currency', o.currency)`

/**
 * Seeds `orders` orders (and their transactions and events) in batches of one statement each;
 * `onBatch` hears how many orders are in. Then VACUUM ANALYZE, so the planner sees the tables as they are.
 */
export const seed = (
  sql: SqlClient.SqlClient,
  options: SeedOptions,
  onBatch: (done: number) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<void, SqlError.SqlError> =>
  Effect.gen(function*() {
    if (!/^[A-Za-z0-9]+$/.test(options.tag)) return yield* Effect.die(new Error(`seed tag must be letters and digits: ${options.tag}`))
    const batch = options.batch ?? 100_000
    const deliveries = options.deliveries === true
    const params = [options.accounts, options.tag, options.before, options.orders, options.days ?? 365]
    for (let from = 1; from <= options.orders; from += batch) {
      const range = { from, to: Math.min(options.orders, from + batch - 1) }
      yield* options.trusted === true
        ? sql.withTransaction(Effect.andThen(sql.unsafe("SET LOCAL session_replication_role = replica"), sql.unsafe(batchOf(range, deliveries), params)))
        : sql.unsafe(batchOf(range, deliveries), params)
      yield* onBatch(range.to)
    }
    // As autovacuum would leave them, so it does not start in the middle of a measurement.
    yield* sql.unsafe(`VACUUM ANALYZE orders, transactions, events${deliveries ? ", webhook_deliveries, webhook_attempts" : ""}`)
  })
