/**
 * Signature replay defence (issue 12). `replay_signatures`: the replay cache when Redis is not
 * configured (ReplayCachePg), one row per account and signed payload (its SHA-256 `digest`, whatever
 * secret signed it) until the payload's timestamp has left the window; the expiry index serves the sweep. Accounts gain the previous signing secret and
 * the end of its overlap (`tender accounts signing-secret roll ID --overlap 24h`).
 */
export const statements = [
  `CREATE TABLE replay_signatures (
    account_id text NOT NULL,
    digest text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('request', 'response')),
    request_id text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, digest)
  )`,
  `CREATE INDEX replay_signatures_expires_at ON replay_signatures (expires_at)`,
  `ALTER TABLE accounts ADD COLUMN previous_signing_secret text`,
  `ALTER TABLE accounts ADD COLUMN previous_signing_secret_expires_at timestamptz`
]
