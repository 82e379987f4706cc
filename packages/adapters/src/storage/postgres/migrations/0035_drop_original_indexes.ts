/**
 * Refunds and payouts are bounded by one balance per settlement, read from the order's transactions
 * under its lock (operations/Balance.ts): no statement looks refund or payout records up by their
 * original any more, so these two indexes only cost every insert.
 */
export const statements = [
  `DROP INDEX refunds_original_idx`,
  `DROP INDEX payouts_original_idx`
]
