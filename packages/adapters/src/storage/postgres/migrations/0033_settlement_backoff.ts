/**
 * Issue 21, the settlement worker backs off: a transaction awaiting settlement that a round did not
 * settle (the provider said not yet, could not be asked, or the record step failed) is asked again
 * later (`settlement_check_at`, Payment.Transaction). The worker's index now orders by when each is
 * due — put off, else since its creation — so that the poll reads only what is due and stuck ones
 * never hold newer ones back. Rows stored before have no check put off: due at once, as before.
 *
 * The poll (and this index, its predicate TransactionStatus.awaitsSettlement's) also takes a refund,
 * payout or transfer still `processing` with the provider's id and no call in flight: only a process
 * of the version before 0029 writes a queued one so, and one still running while 0029 was applied
 * would otherwise leave its later ones out of the poll for ever. Mixed versions across 0027/0029 are
 * not supported (README, Upgrading): this is insurance for money already at the provider.
 */
/** The index as it stands; migration 0036 recreates it with this very statement where an earlier 0033 left another predicate. */
export const SETTLING_INDEX = `CREATE INDEX transactions_settling_idx ON transactions ((coalesce(settlement_check_at, created_at)), id)
    WHERE ((kind = 'capture' AND status = 'processing') OR (kind IN ('refund', 'payout', 'transfer') AND status IN ('pending', 'processing')))
      AND provider_transaction_id IS NOT NULL AND pending_call IS NULL`

export const statements = [
  `ALTER TABLE transactions ADD COLUMN settlement_check_at timestamptz`,
  `DROP INDEX transactions_settling_idx`,
  SETTLING_INDEX
]
