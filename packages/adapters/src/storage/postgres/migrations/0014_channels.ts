/**
 * Provider channels (contract.md, Providers): one row per provider account a merchant account routes
 * to. The credentials are only ever stored sealed under the vault key (AES-256-GCM: IV, ciphertext
 * and tag in their own columns, as the card vault's numbers). `seq` is the creation order that
 * breaks routing ties between channels created in one millisecond.
 */
export const statements = [
  `CREATE TABLE channels (
    id text COLLATE "C" PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    provider text NOT NULL CHECK (provider IN ('stripe', 'adyen')),
    mode text NOT NULL CHECK (mode IN ('test', 'live')),
    methods jsonb,
    currencies jsonb,
    countries jsonb,
    priority integer NOT NULL,
    status text NOT NULL CHECK (status IN ('enabled', 'disabled')),
    credentials_iv bytea NOT NULL,
    credentials_ciphertext bytea NOT NULL,
    credentials_tag bytea NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY
  )`,
  `CREATE INDEX channels_account ON channels (account_id, created_at, seq)`
]
