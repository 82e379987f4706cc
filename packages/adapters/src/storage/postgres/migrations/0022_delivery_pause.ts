/**
 * A disabled endpoint's open deliveries leave the dispatcher's indexes (issue 12 review): `paused`
 * is set on them when the endpoint is disabled and cleared when it is enabled again, by a trigger in
 * the same statement as the endpoint's update (no window in which the two disagree), and on insert
 * for a delivery fanned out to an endpoint disabled meanwhile. The API never shows it: a paused
 * delivery keeps its status and due time. The claim walks the due backlog one endpoint at a time
 * (`webhook_deliveries_endpoint_due_idx`), so one endpoint's backlog costs it at most that
 * endpoint's bound; `webhook_deliveries_due_idx` gives way to it.
 */
export const statements = [
  `ALTER TABLE webhook_deliveries ADD COLUMN paused boolean NOT NULL DEFAULT false`,
  `UPDATE webhook_deliveries d SET paused = true
    WHERE d.status IN ('pending', 'failed')
      AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.status = 'disabled')`,
  `DROP INDEX webhook_deliveries_due_idx`,
  `CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at, id)
    INCLUDE (account_id) WHERE status IN ('pending', 'failed') AND NOT paused`,
  `CREATE FUNCTION webhook_endpoint_pause() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- Enabling clears every paused row, whatever its status: one that ended while paused (its
      -- attempt was under way at the disable) would otherwise stay paused once retried.
      UPDATE webhook_deliveries SET paused = (NEW.status = 'disabled')
        WHERE endpoint_id = NEW.id AND paused <> (NEW.status = 'disabled')
          AND (NEW.status <> 'disabled' OR status IN ('pending', 'failed'));
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER webhook_endpoint_pause AFTER UPDATE OF status ON webhook_endpoints
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION webhook_endpoint_pause()`,
  `CREATE FUNCTION webhook_delivery_pause() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.paused := EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = NEW.endpoint_id AND e.status = 'disabled');
      RETURN NEW;
    END $$`,
  `CREATE TRIGGER webhook_delivery_pause BEFORE INSERT ON webhook_deliveries
    FOR EACH ROW EXECUTE FUNCTION webhook_delivery_pause()`
]
