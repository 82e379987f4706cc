/**
 * Accounts. Secret keys live in their own table so that authenticating a request is one index
 * lookup on the key's hash; the lists an operator edits as a whole stay jsonb.
 */
export const statements = [
  `CREATE TABLE accounts (
    id text PRIMARY KEY,
    name text NOT NULL,
    mode text NOT NULL CHECK (mode IN ('test', 'live')),
    status text NOT NULL CHECK (status IN ('active', 'suspended')),
    publishable_key text NOT NULL UNIQUE,
    signing_secret text NOT NULL,
    ip_allowlist jsonb NOT NULL DEFAULT '[]',
    processing_profiles jsonb NOT NULL DEFAULT '[]',
    vault_enabled boolean NOT NULL DEFAULT false,
    rate_limit jsonb,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL CHECK (version >= 1)
  )`,
  `CREATE INDEX accounts_created_at_idx ON accounts (created_at, id)`,
  `CREATE TABLE account_secret_keys (
    hash text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    position integer NOT NULL,
    hint text NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
  )`,
  `CREATE INDEX account_secret_keys_account_idx ON account_secret_keys (account_id, position)`
]
