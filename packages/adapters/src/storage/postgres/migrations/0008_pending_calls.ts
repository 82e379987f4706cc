/**
 * A transaction's reserved provider call (idempotency key, operation, reserved at), set by the unit of
 * work that reserves and cleared by the one that records. The partial indexes hold only calls in
 * flight (reconciliation's poll) and only windows with none (the window-expiry poll).
 */
export const statements = [
  `ALTER TABLE transactions ADD COLUMN pending_call jsonb`,
  // The reconciliation poll (TransactionRepo.listPendingCalls): a call is due at its next check,
  // its reservation time until a lookup could not answer.
  `CREATE INDEX transactions_pending_call_idx ON transactions ((coalesce(pending_call->>'retry_at', pending_call->>'at')), id)
    WHERE pending_call IS NOT NULL`,
  // The window-expiry poll (TransactionRepo.listExpiredWindows): exactly its predicate and order, so
  // the index holds only attempts still in flight with a window and no provider call in doubt (those
  // are reconciliation's), and the poll reads the due ones.
  `CREATE INDEX transactions_window_idx ON transactions (expires_at, id)
    WHERE expires_at IS NOT NULL AND status IN ('initial', 'pending', 'processing') AND pending_call IS NULL`
]
