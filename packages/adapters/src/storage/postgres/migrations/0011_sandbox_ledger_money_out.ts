/**
 * The sandbox's ledger records refund and payout calls too (transfers pay out through `payout`):
 * its operation check, from 0009, knew only the calls of money in.
 */
export const statements = [
  `ALTER TABLE sandbox_ledger DROP CONSTRAINT sandbox_ledger_operation_check`,
  `ALTER TABLE sandbox_ledger ADD CONSTRAINT sandbox_ledger_operation_check
    CHECK (operation IN ('authorize', 'capture', 'void', 'start', 'refund', 'payout', 'fence'))`
]
