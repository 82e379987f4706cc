/**
 * The browser SDK's grants: client secrets by hash (one payment or card transfer each, 15 minutes),
 * and the account's 3-D Secure display mode for the SDK.
 */
export const statements = [
  `CREATE TABLE client_secrets (
    hash text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts(id),
    order_id text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('payment', 'transfer')),
    collect text NOT NULL CHECK (collect IN ('card', 'cvv')),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    expired_by_helper boolean NOT NULL DEFAULT false,
    used_at timestamptz
  )`,
  `CREATE INDEX client_secrets_order ON client_secrets (order_id)`,
  `ALTER TABLE accounts ADD COLUMN three_ds_display_mode text NOT NULL DEFAULT 'inline'
    CHECK (three_ds_display_mode IN ('inline', 'popup', 'redirect'))`
]
