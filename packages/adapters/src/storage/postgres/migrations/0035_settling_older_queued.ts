/**
 * Issue 21, review: a refund, payout or transfer that a process of the version before 0029 queued
 * was written `processing` (with the provider's id and no call in flight), and 0029 moved only the
 * rows there were when it ran. One such process still running while 0029 was applied would leave
 * its later ones out of the settlement worker's poll for ever; the poll (and this index, its
 * predicate TransactionStatus.awaitsSettlement's) takes them too. Mixed versions across 0027/0029
 * are not supported (README, Upgrading): this is insurance for money already at the provider.
 */
export const statements = [
  `DROP INDEX transactions_settling_idx`,
  `CREATE INDEX transactions_settling_idx ON transactions ((coalesce(settlement_check_at, created_at)), id)
    WHERE ((kind = 'capture' AND status = 'processing') OR (kind IN ('refund', 'payout', 'transfer') AND status IN ('pending', 'processing')))
      AND provider_transaction_id IS NOT NULL AND pending_call IS NULL`
]
