/**
 * Issue 25: the CLI's `listen` and `trigger` call the public API with a temporary secret key of the
 * account (AccountKeys.addTemporaryKey), which ends at `expires_at`; the merchant's own keys have
 * none. Adding a nullable column rewrites nothing.
 */
export const statements = [
  `ALTER TABLE account_secret_keys ADD COLUMN expires_at timestamptz`
]
