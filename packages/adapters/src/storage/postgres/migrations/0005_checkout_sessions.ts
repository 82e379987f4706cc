/**
 * Checkout sessions: one column per field of the domain record, amounts in minor units (bigint),
 * the lists and nested records as jsonb. The reference rule of contract.md is the partial unique
 * index: at most one open, pending_action or completed session per reference and account, however
 * many processes create at once; a session that ends expired, failed or canceled leaves the index
 * and frees its reference. A session owns its order (subtype `checkout`), written before it in the
 * same unit of work; its transaction is only a name (the settled attempt), kept without a key.
 */
export const statements = [
  `CREATE TABLE checkout_sessions (
    id text COLLATE "C" PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    livemode boolean NOT NULL,
    order_id text COLLATE "C" NOT NULL REFERENCES orders (id),
    merchant_reference text NOT NULL,
    status text NOT NULL CHECK (status IN ('open', 'pending_action', 'completed', 'failed', 'expired', 'canceled')),
    amount bigint NOT NULL CHECK (amount >= 0),
    currency text NOT NULL,
    country text,
    capture_method text NOT NULL CHECK (capture_method IN ('automatic', 'manual')),
    payment_methods jsonb CHECK (jsonb_typeof(payment_methods) = 'array'),
    straight_through boolean NOT NULL,
    max_payment_attempts integer NOT NULL CHECK (max_payment_attempts >= 1),
    attempts integer NOT NULL CHECK (attempts >= 0),
    expires_at timestamptz NOT NULL,
    transaction_id text,
    next_action jsonb CHECK (jsonb_typeof(next_action) = 'object'),
    customer jsonb CHECK (jsonb_typeof(customer) = 'object'),
    success_url text NOT NULL,
    cancel_url text NOT NULL,
    locale text,
    line_items jsonb CHECK (jsonb_typeof(line_items) = 'array'),
    collect_address boolean NOT NULL,
    collect_phone boolean NOT NULL,
    processing_profile text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL CHECK (version >= 1)
  )`,
  // contract.md's idempotency rule for sessions. The insert names this predicate in ON CONFLICT.
  `CREATE UNIQUE INDEX checkout_sessions_live_reference_key ON checkout_sessions (account_id, merchant_reference)
    WHERE status IN ('open', 'pending_action', 'completed')`,
  // The by-reference read: the newest session with the reference, whatever its status.
  `CREATE INDEX checkout_sessions_reference_idx ON checkout_sessions (account_id, merchant_reference, created_at DESC)`,
  `CREATE UNIQUE INDEX checkout_sessions_order_key ON checkout_sessions (order_id)`,
  `CREATE INDEX checkout_sessions_search_idx ON checkout_sessions (account_id, created_at DESC, id DESC)`,
  // Exactly the sweeper's predicate and order: its poll reads only the live sessions, soonest expiry first.
  `CREATE INDEX checkout_sessions_overdue_idx ON checkout_sessions (expires_at, id)
    WHERE status IN ('open', 'pending_action')`
]
