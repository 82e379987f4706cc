/**
 * A transaction's reserved provider call (idempotency key, operation, reserved at), set by the unit of
 * work that reserves and cleared by the one that records. The partial index holds only calls in
 * flight, so the reconciliation worker's poll reads nothing else.
 */
export const statements = [
  `ALTER TABLE transactions ADD COLUMN pending_call jsonb`,
  `CREATE INDEX transactions_pending_call_idx ON transactions ((pending_call->>'at'), id) WHERE pending_call IS NOT NULL`
]
