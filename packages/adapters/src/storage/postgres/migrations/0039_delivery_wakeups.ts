/**
 * Issue 24: the webhook dispatcher is woken when deliveries become due instead of polling for them.
 * Triggers on the rows, not the repository's code, NOTIFY `tender_delivery_due`, so no writer stores
 * a delivery unannounced; PostgreSQL delivers the notice when the change commits (not at all when it
 * rolls back) and folds identical notices of one transaction into one.
 *
 * - Stored: one notice per INSERT statement (statement-level: a fan-out's rows are one notice).
 * - Due again without a lease: retried by hand (failed or exhausted → pending), resumed (`paused`
 *   cleared), or moved to another due time, by a write that neither takes nor gives back a lease.
 *   The claim (which sets a lease) and the attempt's record (which ends one) are left out by the
 *   WHEN clause, evaluated per row without calling the function, so they cost nothing here.
 */
export const statements = [
  `CREATE FUNCTION tender_delivery_due() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('tender_delivery_due', '');
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER tender_delivery_stored AFTER INSERT ON webhook_deliveries
    FOR EACH STATEMENT EXECUTE FUNCTION tender_delivery_due()`,
  `CREATE TRIGGER tender_delivery_due_again AFTER UPDATE ON webhook_deliveries
    FOR EACH ROW WHEN (
      OLD.lease_token IS NULL AND NEW.lease_token IS NULL AND NEW.status IN ('pending', 'failed') AND NOT NEW.paused
      AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.paused OR OLD.next_attempt_at IS DISTINCT FROM NEW.next_attempt_at)
    )
    EXECUTE FUNCTION tender_delivery_due()`
]
