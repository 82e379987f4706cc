/**
 * Issue 21, payouts bounded and queued outflows `pending`:
 *
 * - `accounts.payout_limits`: the operator's per-currency limits (`tender accounts payouts`), which
 *   replace the default rule (the original's balance) for payouts in that currency.
 * - `payouts_day_idx`: an account's payouts of one currency and UTC day, summed under the account's
 *   payout lock while a payout with limits is decided; failed ones never count.
 * - A refund, payout or transfer the provider queued now waits `pending` (contract.md: "processing
 *   only while a call is in flight"): the settlement worker's index takes queued ones `pending`
 *   (captures still settle while `processing`), and rows recorded before this change move as the
 *   transaction table's `queued` move would have moved them (version bumped, as every write does).
 */
export const statements = [
  `ALTER TABLE accounts ADD COLUMN payout_limits jsonb NOT NULL DEFAULT '[]'
    CHECK (jsonb_typeof(payout_limits) = 'array')`,
  `CREATE INDEX payouts_day_idx ON payouts (account_id, currency, created_at) WHERE status <> 'failed'`,
  `DROP INDEX transactions_settling_idx`,
  `CREATE INDEX transactions_settling_idx ON transactions (created_at, id)
    WHERE ((kind = 'capture' AND status = 'processing') OR (kind IN ('refund', 'payout', 'transfer') AND status = 'pending'))
      AND provider_transaction_id IS NOT NULL AND pending_call IS NULL`,
  `UPDATE transactions SET status = 'pending', version = version + 1, updated_at = now()
    WHERE kind IN ('refund', 'payout', 'transfer') AND status = 'processing'
      AND provider_transaction_id IS NOT NULL AND pending_call IS NULL`
]
