/**
 * The card vault. The number is only ever stored sealed (AES-256-GCM: IV, ciphertext and tag in
 * their own columns); everything else here is what the spec lets merchants see.
 */
export const statements = [
  `CREATE TABLE card_vault (
    token text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    number_iv bytea NOT NULL,
    number_ciphertext bytea NOT NULL,
    number_tag bytea NOT NULL,
    brand text NOT NULL,
    last4 text NOT NULL,
    bin text NOT NULL,
    exp_month smallint NOT NULL,
    exp_year smallint NOT NULL,
    funding text NOT NULL,
    holder_name text,
    created_at timestamptz NOT NULL
  )`
]
