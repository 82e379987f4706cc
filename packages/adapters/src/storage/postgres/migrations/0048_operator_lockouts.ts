/**
 * Issue 26 review (M12): an operator's lock-outs in a row since their last successful login, so
 * each lock-out lasts twice the one before (Operator.lockoutMs). A constant default: adding it
 * rewrites nothing, and operators stored before start at none.
 */
export const statements = [
  `ALTER TABLE operators ADD COLUMN lockouts integer NOT NULL DEFAULT 0 CHECK (lockouts >= 0)`
]
