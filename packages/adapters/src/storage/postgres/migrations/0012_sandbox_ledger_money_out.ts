/**
 * The sandbox's ledger records refund and payout calls too (a transfer's call is a payout): 0009's
 * check named only the payment calls. Written to hold whatever an earlier migration made of the
 * check, so a twin fix elsewhere cannot collide with it.
 */
export const statements = [
  `ALTER TABLE sandbox_ledger DROP CONSTRAINT IF EXISTS sandbox_ledger_operation_check`,
  `ALTER TABLE sandbox_ledger ADD CONSTRAINT sandbox_ledger_operation_check
    CHECK (operation IN ('authorize', 'capture', 'void', 'start', 'refund', 'payout', 'fence'))`
]
