/**
 * Issue 26, the operator console's reads (ConsoleReadsPg).
 *
 * A webhook attempt keeps the start of the receiver's answer body (`response`, at most 1 KiB: the
 * transport reads no more), which the payment's story shows: a nullable column, so adding it
 * rewrites nothing, and attempts logged before have none.
 *
 * The search's indexes, so that a search never walks a whole large table. Like 0025's, each ends in the keyset order
 * `(created_at DESC, id DESC)`, so one range scan serves filter, order and cursor.
 *
 * - Last four: led by the digits, not the account, since an admin granted every account searches
 *   them all; partial to card instruments (the only ones with digits). An order is found through
 *   its transactions' cards (`id IN (SELECT order_id …)`), so transactions carry the one index.
 * - Amount: an exact amount in a currency, led by both for the same reason.
 * - Channel id: the transactions that went to one channel (partial: the built-in sandbox's carry none).
 * - Refunds, payouts, transfers and customers had no index by account: the console lists them per
 *   account, newest first. Refunds and payouts by their order: the payment's story reads them, and
 *   a search by the order's id finds them.
 *
 * Merchant references need none: PostgreSQL 18 skip-scans `orders_reference_idx (account_id,
 * merchant_reference)` when no account is named (accounts are few). Provider names (sandbox,
 * stripe…) are too few to be worth an index: a search by one reads the newest orders and probes
 * each through `transactions_order_idx`.
 */
export const statements = [
  `ALTER TABLE webhook_attempts ADD COLUMN response text`,
  `CREATE INDEX transactions_last4_idx ON transactions ((payment_instrument->>'last4_digits'), account_id, created_at DESC, id DESC)
    WHERE payment_instrument->>'type' = 'card'`,
  `CREATE INDEX orders_amount_idx ON orders (currency, amount, account_id, created_at DESC, id DESC)`,
  `CREATE INDEX transactions_amount_idx ON transactions (currency, amount, account_id, created_at DESC, id DESC)`,
  `CREATE INDEX transactions_channel_idx ON transactions (channel_id, account_id, created_at DESC, id DESC)
    WHERE channel_id IS NOT NULL`,
  `CREATE INDEX refunds_search_idx ON refunds (account_id, created_at DESC, id DESC)`,
  `CREATE INDEX refunds_order_idx ON refunds (order_id, created_at, id)`,
  `CREATE INDEX payouts_search_idx ON payouts (account_id, created_at DESC, id DESC)`,
  `CREATE INDEX payouts_order_idx ON payouts (order_id, created_at, id)`,
  `CREATE INDEX transfers_search_idx ON transfers (account_id, created_at DESC, id DESC)`,
  `CREATE INDEX customers_search_idx ON customers (account_id, created_at DESC, id DESC)`
]
