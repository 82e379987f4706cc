/**
 * Issue 26: the operator console's people, their login sessions and the audit log of their actions.
 * The TOTP secret is a secret at rest the login must read again, so it is sealed under the vault key
 * (VaultCipher, AES-256-GCM, bound to the operator's id) in three bytea columns as channel credentials
 * are; passwords are scrypt hashes; enrolment and session tokens are stored as SHA-256 only.
 * The audit log names the operator as well as their id, so it reads without a join and outlives
 * renames; it has no foreign key so nothing can cascade into it.
 */
export const statements = [
  `CREATE TABLE operators (
    id text COLLATE "C" PRIMARY KEY,
    name text NOT NULL UNIQUE,
    role text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    accounts jsonb NOT NULL,
    status text NOT NULL CHECK (status IN ('invited', 'active', 'disabled')),
    password_hash text,
    totp_secret_iv bytea NOT NULL,
    totp_secret_ciphertext bytea NOT NULL,
    totp_secret_tag bytea NOT NULL,
    last_totp_step bigint,
    enrolment_token_hash text UNIQUE,
    enrolment_expires_at timestamptz,
    failed_logins integer NOT NULL DEFAULT 0,
    locked_until timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL
  )`,
  `CREATE TABLE console_sessions (
    token_hash text PRIMARY KEY,
    operator_id text NOT NULL REFERENCES operators (id),
    csrf_token text NOT NULL,
    created_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
  )`,
  `CREATE INDEX console_sessions_operator_idx ON console_sessions (operator_id)`,
  `CREATE TABLE audit_log (
    id text COLLATE "C" PRIMARY KEY,
    at timestamptz NOT NULL,
    operator_id text NOT NULL,
    operator_name text NOT NULL,
    action text NOT NULL,
    target text NOT NULL,
    account_id text,
    outcome text NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
    detail text NOT NULL
  )`,
  `CREATE INDEX audit_log_recent_idx ON audit_log (at DESC, id DESC)`,
  `CREATE INDEX audit_log_account_idx ON audit_log (account_id, at DESC, id DESC)`
]
