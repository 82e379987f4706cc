/**
 * The sandbox provider's own log (SandboxLedgerPg): one row per idempotency key, the answer it gave,
 * or a fence when a lookup found the key unused.
 */
export const statements = [
  `CREATE TABLE sandbox_ledger (
    idempotency_key text PRIMARY KEY,
    operation text NOT NULL CHECK (operation IN ('authorize', 'capture', 'void', 'start', 'fence')),
    order_reference text,
    result jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((operation = 'fence') = (result IS NULL))
  )`,
  `CREATE INDEX sandbox_ledger_order_reference ON sandbox_ledger (order_reference)`
]
