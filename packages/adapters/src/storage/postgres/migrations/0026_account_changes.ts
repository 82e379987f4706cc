/**
 * Account changes are announced (issue 13): every server caches the accounts its keys resolve to
 * (AccountCachePg), while the operator's CLI — another process — suspends accounts, rolls keys and
 * secrets, and changes allowlists and rate limits. A trigger on the rows themselves, not the
 * repository's code, sends `NOTIFY tender_account_changed` with the account's id, so no writer can
 * change an account unannounced. PostgreSQL delivers the notice when the change commits, and not at
 * all when it rolls back.
 */
export const statements = [
  `CREATE FUNCTION tender_account_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- TG_ARGV[0] names the column holding the account's id (the two tables name it differently).
      PERFORM pg_notify('tender_account_changed',
        (CASE TG_OP WHEN 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END) ->> TG_ARGV[0]);
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER tender_account_changed AFTER UPDATE OR DELETE ON accounts
    FOR EACH ROW EXECUTE FUNCTION tender_account_changed('id')`,
  `CREATE TRIGGER tender_account_key_changed AFTER INSERT OR UPDATE OR DELETE ON account_secret_keys
    FOR EACH ROW EXECUTE FUNCTION tender_account_changed('account_id')`
]
