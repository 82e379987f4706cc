/**
 * Changes to channels and webhook endpoints are announced (issue 24): every server caches each
 * account's channels (routing) and endpoints (the outbox's fan-out) in process (ListCachesPg), while
 * another process — the operator's CLI, another server — may change them. As for accounts (0026), a
 * trigger on the rows, not the repositories' code, sends the notice with the account's id, so no
 * writer changes them unannounced; PostgreSQL delivers it when the change commits (notices alike
 * within one transaction are sent once), and not at all when it rolls back.
 */
export const statements = [
  `CREATE FUNCTION tender_account_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- TG_ARGV[0] is the channel. An update notifies for the row as it was and as it is: alike
      -- (the account never changes), they make one notice.
      IF TG_OP <> 'INSERT' THEN PERFORM pg_notify(TG_ARGV[0], OLD.account_id); END IF;
      IF TG_OP <> 'DELETE' THEN PERFORM pg_notify(TG_ARGV[0], NEW.account_id); END IF;
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER tender_channels_changed AFTER INSERT OR UPDATE OR DELETE ON channels
    FOR EACH ROW EXECUTE FUNCTION tender_account_rows_changed('tender_channels_changed')`,
  `CREATE TRIGGER tender_webhook_endpoints_changed AFTER INSERT OR UPDATE OR DELETE ON webhook_endpoints
    FOR EACH ROW EXECUTE FUNCTION tender_account_rows_changed('tender_webhook_endpoints_changed')`
]
