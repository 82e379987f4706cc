/**
 * Money back out (refunds, payouts, transfers), customers, and what orders and transactions gain
 * with them: refund/payout/transfer transactions, transfer orders (whose reference is unique per
 * account like a direct payment's), an order's refunded amount, customer and card-storage consent.
 */
export const statements = [
  `CREATE TABLE customers (
    id text COLLATE "C" PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    livemode boolean NOT NULL,
    email text,
    name text,
    phone text,
    created_at timestamptz NOT NULL
  )`,
  `ALTER TABLE orders DROP CONSTRAINT orders_subtype_check`,
  `ALTER TABLE orders ADD CONSTRAINT orders_subtype_check CHECK (subtype IN ('direct_payment', 'checkout', 'transfer'))`,
  `ALTER TABLE orders ADD COLUMN refunded_amount bigint NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0 AND refunded_amount <= amount)`,
  `ALTER TABLE orders ADD COLUMN customer_id text REFERENCES customers (id)`,
  `ALTER TABLE orders ADD COLUMN card_storage_consent jsonb`,
  // contract.md, Idempotency: orders (direct payments, transfers) take their reference once per account.
  `DROP INDEX orders_direct_payment_reference_key`,
  `CREATE UNIQUE INDEX orders_merchant_reference_key ON orders (account_id, merchant_reference)
    WHERE subtype IN ('direct_payment', 'transfer')`,
  `ALTER TABLE transactions DROP CONSTRAINT transactions_kind_check`,
  `ALTER TABLE transactions ADD CONSTRAINT transactions_kind_check
    CHECK (kind IN ('payment', 'authorization', 'capture', 'void', 'refund', 'payout', 'transfer'))`,
  // The settlement worker polls captures, refunds, payouts and transfers the provider accepted for later.
  `DROP INDEX transactions_settling_idx`,
  `CREATE INDEX transactions_settling_idx ON transactions (created_at, id)
    WHERE kind IN ('capture', 'refund', 'payout', 'transfer') AND status = 'processing'
      AND provider_transaction_id IS NOT NULL AND pending_call IS NULL`,
  `CREATE TABLE refunds (
    id text COLLATE "C" PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    livemode boolean NOT NULL,
    order_id text NOT NULL REFERENCES orders (id),
    transaction_id text NOT NULL UNIQUE REFERENCES transactions (id),
    original_transaction_id text NOT NULL REFERENCES transactions (id),
    amount bigint NOT NULL CHECK (amount > 0),
    currency text NOT NULL,
    processing_profile text,
    status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    reason text,
    refund_reference text,
    decline_code text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL CHECK (version >= 1)
  )`,
  `CREATE UNIQUE INDEX refunds_reference_key ON refunds (account_id, refund_reference) WHERE refund_reference IS NOT NULL`,
  `CREATE INDEX refunds_original_idx ON refunds (original_transaction_id, created_at, id)`,
  `CREATE TABLE payouts (
    id text COLLATE "C" PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    livemode boolean NOT NULL,
    order_id text NOT NULL REFERENCES orders (id),
    transaction_id text NOT NULL UNIQUE REFERENCES transactions (id),
    original_transaction_id text NOT NULL REFERENCES transactions (id),
    amount bigint NOT NULL CHECK (amount > 0),
    currency text NOT NULL,
    processing_profile text,
    status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    payment_instrument jsonb NOT NULL,
    payout_reference text,
    decline_code text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL CHECK (version >= 1)
  )`,
  `CREATE UNIQUE INDEX payouts_reference_key ON payouts (account_id, payout_reference) WHERE payout_reference IS NOT NULL`,
  `CREATE INDEX payouts_original_idx ON payouts (original_transaction_id, created_at, id)`,
  `CREATE TABLE transfers (
    id text COLLATE "C" PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    livemode boolean NOT NULL,
    order_id text NOT NULL UNIQUE REFERENCES orders (id),
    transaction_id text NOT NULL UNIQUE REFERENCES transactions (id),
    amount bigint NOT NULL CHECK (amount > 0),
    currency text NOT NULL,
    processing_profile text,
    status text NOT NULL CHECK (status IN ('pending', 'requires_action', 'processing', 'succeeded', 'failed')),
    payment_method text NOT NULL,
    channel_id text,
    payment_instrument jsonb NOT NULL,
    next_action jsonb,
    decline_code text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL CHECK (version >= 1)
  )`
]
