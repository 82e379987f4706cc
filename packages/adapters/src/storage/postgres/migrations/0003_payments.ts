/**
 * Orders, transactions and the event outbox. Ids sort byte-wise (`COLLATE "C"`) on any server, so
 * keyset pages break created_at ties exactly as the memory adapter does. Amounts are minor units.
 * A card appears here only as its vault token: the CHECK refuses anything else in `card_token`.
 */
export const statements = [
  `CREATE TABLE orders (
    id text COLLATE "C" PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    livemode boolean NOT NULL,
    merchant_reference text NOT NULL,
    subtype text NOT NULL CHECK (subtype IN ('direct_payment', 'checkout')),
    status text NOT NULL CHECK (status IN ('pending', 'processing', 'requires_action', 'authorized', 'succeeded',
      'failed', 'canceled', 'returned')),
    amount bigint NOT NULL CHECK (amount >= 0),
    currency text NOT NULL,
    country text NOT NULL,
    payment_method text NOT NULL,
    capture_method text NOT NULL CHECK (capture_method IN ('automatic', 'manual')),
    processing_profile text,
    customer jsonb,
    success_url text,
    cancel_url text,
    card_token text CHECK (card_token ~ '^tok_[A-Za-z0-9]+$'),
    payment_instrument jsonb,
    received_amount bigint CHECK (received_amount >= 0),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL CHECK (version >= 1)
  )`,
  // The spec's idempotency key: one direct payment per reference and account, however many
  // processes insert at once. Checkout orders (one per session attempt) may share a reference.
  `CREATE UNIQUE INDEX orders_direct_payment_reference_key ON orders (account_id, merchant_reference)
    WHERE subtype = 'direct_payment'`,
  `CREATE INDEX orders_reference_idx ON orders (account_id, merchant_reference)`,
  `CREATE INDEX orders_search_idx ON orders (account_id, created_at DESC, id DESC)`,
  `CREATE TABLE transactions (
    id text COLLATE "C" PRIMARY KEY,
    order_id text NOT NULL REFERENCES orders (id),
    account_id text NOT NULL REFERENCES accounts (id),
    livemode boolean NOT NULL,
    kind text NOT NULL CHECK (kind IN ('payment', 'authorization', 'capture', 'void')),
    status text NOT NULL CHECK (status IN ('initial', 'pending', 'processing', 'completed', 'failed', 'canceled',
      'returned')),
    amount bigint NOT NULL CHECK (amount >= 0),
    currency text NOT NULL,
    payment_method text NOT NULL,
    processing_profile text,
    provider text NOT NULL,
    provider_transaction_id text,
    decline_code text,
    payment_instrument jsonb,
    parent_transaction_id text REFERENCES transactions (id),
    final boolean,
    multicapture boolean,
    next_action jsonb,
    three_ds text CHECK (three_ds IN ('required', 'approved', 'denied')),
    expires_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL CHECK (version >= 1)
  )`,
  `CREATE INDEX transactions_order_idx ON transactions (order_id, created_at, id)`,
  `CREATE INDEX transactions_search_idx ON transactions (account_id, created_at DESC, id DESC)`,
  // The settlement worker polls for exactly these rows; the partial index stays as small as the backlog.
  `CREATE INDEX transactions_settling_idx ON transactions (created_at, id)
    WHERE kind = 'capture' AND status = 'processing' AND provider_transaction_id IS NOT NULL`,
  `CREATE TABLE events (
    id text COLLATE "C" PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    type text NOT NULL,
    created_at timestamptz NOT NULL,
    livemode boolean NOT NULL,
    processing_profile text,
    order_id text REFERENCES orders (id),
    data jsonb NOT NULL
  )`,
  `CREATE INDEX events_order_idx ON events (order_id, created_at, id)`
]
